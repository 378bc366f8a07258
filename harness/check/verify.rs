//! `verify`: runs a kernel and the reference on `trials` sets of fresh seeded inputs and
//! compares them output by output. Outputs are poisoned (every byte 0xFF) before every run,
//! so an element nothing wrote is NaN (floats) or all ones (integers) and fails; inputs are
//! read back after every run and must be unchanged.

use super::compare::compare;
use super::failure::{Failure, InputError};
use super::input_set::InputSet;
use super::kernels::Kernels;
use super::reference::{ReferenceOutputs, References};
use super::run::{download_outputs, run_checked};
use crate::device::{DeviceBuffer, Function, Gpu};
use crate::npy;
use crate::suite::Suite;

/// Where a reference check is: the case, and the input set (`where_` words it).
struct At<'a> {
    in_case: &'a str,
    where_: &'a str,
    first_set: bool,
}

/// The reference's own checks on one input set, on the device where its outputs are kept
/// there: no element left NaN (outputs are poisoned, so an unwritten one reads NaN), and on
/// the first set, the golden files matched. Only a failure downloads anything.
fn check_reference(
    gpu: &Gpu,
    suite: &Suite,
    kernels: &Kernels,
    expected: &ReferenceOutputs,
    at: At,
) -> Result<(), Failure> {
    let r = suite.reference;
    let device = expected.device();
    for (&i, &tol) in &suite.check.tolerances {
        let b = &suite.buffers[i];
        let name = &b.name;
        let nan = match device {
            Some(want) => {
                let Some(w) = &want[i] else { continue };
                let n = w.bytes / b.dtype.size();
                let f = kernels.compare(gpu, (w, w), b.dtype, n, tol)?;
                (f.count > 0).then_some((f.count as usize, n, f.worst as usize))
            }
            None => {
                let Some(out) = &expected.host(gpu)?[i] else {
                    continue;
                };
                compare(out, out, tol)
                    .err()
                    .map(|m| (m.count, m.total, m.worst))
            }
        };
        if let Some((count, total, worst)) = nan {
            return Err(Failure::Wrong(format!(
                "reference kernel `{}` left {count} of {total} elements of `{name}` NaN{}, first bad at index {worst} (outputs are poisoned with 0xFF before each run, so an element nothing wrote reads NaN; set `allow_nan` if NaN is a real result)",
                suite.kernels[r].name, at.where_
            )));
        }
        let (true, Some(path)) = (at.first_set, suite.check.golden.get(&i)) else {
            continue;
        };
        let golden = npy::read(path).map_err(|source| InputError::GoldenNpy {
            path: path.clone(),
            source,
        })?;
        let changed = || InputError::GoldenChanged { path: path.clone() };
        if let Some(want) = device {
            let Some(w) = &want[i] else { continue };
            let n = w.bytes / b.dtype.size();
            if golden.data.len() != n || golden.data.dtype != b.dtype {
                return Err(changed().into());
            }
            let scratch = kernels.scratch(gpu, &[golden.data.bytes.len()])?;
            gpu.upload(scratch.part(0), &golden.data.bytes)?;
            let found = kernels.compare(gpu, (w, scratch.part(0)), b.dtype, n, tol)?;
            if found.count == 0 {
                continue;
            }
        }
        // On the host: the message of a difference (or the check, without device copies).
        let Some(out) = &expected.host(gpu)?[i] else {
            continue;
        };
        if golden.data.len() != out.len() || golden.data.dtype != out.dtype {
            return Err(changed().into());
        }
        if let Err(m) = compare(out, &golden.data, tol) {
            return Err(Failure::Wrong(format!(
                "output `{name}` of reference kernel `{}` differs from golden `{}`{}: {m}",
                suite.kernels[r].name,
                path.display(),
                at.in_case
            )));
        }
        if device.is_some() {
            return Err(Failure::Trial(crate::failure::TrialFailure::Harness(format!(
                "the device comparison found a difference between output `{name}` of the reference and golden `{}` that the host comparison does not see",
                path.display()
            ))));
        }
    }
    Ok(())
}

/// The first sets of inputs of a trial, which the caller has already generated (the input
/// sets timing rotates over, so that they are generated once).
pub struct FirstInputs<'a> {
    /// The first set's seed; set `t` uses `seed + t`.
    pub seed: u64,
    /// The first sets; later ones are made here.
    pub sets: &'a [InputSet],
    /// The check kernels (device generation and comparison).
    pub kernels: &'a Kernels,
}

/// Checks kernel `k` of `case` against the suite's reference (and, for the reference itself,
/// against golden files and for unwritten elements), on `first` and then freshly generated
/// sets. The reference's outputs come from `references` (run once per case and seed in a
/// worker). Leaves the buffers holding the last input set.
#[allow(clippy::too_many_arguments)]
pub fn verify(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Vec<Function>],
    bufs: &[DeviceBuffer],
    first: FirstInputs,
    references: &mut References,
) -> Result<(), Failure> {
    let r = suite.reference;
    let label = &suite.cases[case].label;
    let in_case = if label.is_empty() {
        String::new()
    } else {
        format!(" for {label}")
    };
    let trials = suite.check.trials;
    for t in 0..trials {
        let seed = first.seed.wrapping_add(t as u64);
        // Where the caller made no set `t`, a fresh one (a set generates nothing until asked).
        let later = InputSet::new(case, seed);
        let inputs = first.sets.get(t as usize).unwrap_or(&later);
        let kernels = first.kernels;
        let expected = references.outputs(gpu, suite, (inputs, kernels), funcs, bufs)?;
        let where_ = format!("{in_case} with inputs from seed {seed} (set {} of {trials}; rerun with KERNELGATE_SEED={seed})", t + 1);
        if k == r {
            let at = At {
                in_case: &in_case,
                where_: &where_,
                first_set: t == 0,
            };
            check_reference(gpu, suite, kernels, &expected, at)?;
            continue;
        }
        run_checked(gpu, suite, case, k, funcs, bufs, inputs, kernels)?;
        // Compared on the device where the reference's outputs are kept there: a passing run
        // transfers nothing.
        let on_device = expected.device().is_some();
        if let Some(want) = expected.device() {
            let rule = |i: usize| Some((suite.buffers[i].dtype, suite.check.tolerances[&i]));
            if kernels.all_match(gpu, bufs, want, rule)? {
                continue;
            }
        }
        // On the host: the message (and the dump) of a difference.
        let actual = download_outputs(gpu, suite, bufs)?;
        let expected = expected.host(gpu)?;
        for (i, (a, e)) in actual.iter().zip(expected.iter()).enumerate() {
            let (Some(a), Some(e)) = (a, e) else { continue };
            if let Err(m) = compare(a, e, suite.check.tolerances[&i]) {
                let dumped = super::dump::note(
                    suite,
                    &super::dump::Failing {
                        kernel: k,
                        case,
                        seed,
                        inputs: inputs.host(suite)?,
                        expected,
                        actual: &actual,
                    },
                );
                return Err(Failure::Wrong(format!(
                    "output `{}` of `{}` differs from the reference `{}`{where_}: {m}{dumped}",
                    suite.buffers[i].name, suite.kernels[k].name, suite.kernels[r].name
                )));
            }
        }
        if on_device {
            return Err(Failure::Trial(crate::failure::TrialFailure::Harness(format!(
                "the device comparison found a difference in the outputs of `{}`{where_} that the host comparison does not see",
                suite.kernels[k].name
            ))));
        }
    }
    Ok(())
}
