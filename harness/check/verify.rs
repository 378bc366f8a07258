//! `verify`: runs a kernel and the reference on `trials` sets of fresh seeded inputs and
//! compares them output by output. Outputs are poisoned (every byte 0xFF) before every run,
//! so an element nothing wrote is NaN (floats) or all ones (integers) and fails; inputs are
//! read back after every run and must be unchanged.

use super::compare::compare;
use super::failure::{Failure, InputError};
use super::input_set::InputSet;
use super::kernels::Kernels;
use super::reference::References;
use super::run::{download_outputs, run_checked};
use crate::device::{DeviceBuffer, Function, Gpu};
use crate::npy;
use crate::suite::Suite;

/// Whether every output in `bufs` passes against the reference's outputs `want`, compared on
/// the device (with the same rules as `compare`).
fn same_on_device(
    gpu: &Gpu,
    kernels: &Kernels,
    suite: &Suite,
    bufs: &[DeviceBuffer],
    want: &[Option<DeviceBuffer>],
) -> Result<bool, Failure> {
    for (i, b) in suite.buffers.iter().enumerate() {
        let Some(w) = &want[i] else { continue };
        let n = w.bytes / b.dtype.size();
        let tol = suite.check.tolerances[&i];
        if kernels.compare(gpu, (&bufs[i], w), b.dtype, n, tol)?.count > 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first sets of inputs of a trial, which the caller has already generated (the input
/// sets timing rotates over, so that they are generated once).
pub struct FirstInputs<'a> {
    /// The first set's seed; set `t` uses `seed + t`.
    pub seed: u64,
    /// The first sets; later ones are made here.
    pub sets: &'a [InputSet],
    /// The check kernels (device generation and comparison), where loaded.
    pub kernels: Option<&'a Kernels>,
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
        let later;
        let inputs = if let Some(set) = first.sets.get(t as usize) {
            set
        } else {
            later = InputSet::new(case, seed);
            &later
        };
        let kernels = first.kernels;
        let expected = references.outputs(gpu, suite, (inputs, kernels), funcs, bufs)?;
        let where_ = format!("{in_case} with inputs from seed {seed} (set {} of {trials}; rerun with KERNELGATE_SEED={seed})", t + 1);
        if k == r {
            for (i, out) in expected.iter().enumerate() {
                let Some(out) = out else { continue };
                let tol = suite.check.tolerances[&i];
                let name = &suite.buffers[i].name;
                if let Err(m) = compare(out, out, tol) {
                    return Err(Failure::Wrong(format!(
                        "reference kernel `{}` left {} of {} elements of `{name}` NaN{where_}, first bad at index {} (outputs are poisoned with 0xFF before each run, so an element nothing wrote reads NaN; set `allow_nan` if NaN is a real result)",
                        suite.kernels[r].name, m.count, m.total, m.worst
                    )));
                }
                if let (0, Some(path)) = (t, suite.check.golden.get(&i)) {
                    let golden = npy::read(path).map_err(|source| InputError::GoldenNpy {
                        path: path.clone(),
                        source,
                    })?;
                    if golden.data.len() != out.len() {
                        let path = path.clone();
                        return Err(InputError::GoldenChanged { path }.into());
                    }
                    if let Err(m) = compare(out, &golden.data, tol) {
                        return Err(Failure::Wrong(format!(
                            "output `{name}` of reference kernel `{}` differs from golden `{}`{in_case}: {m}",
                            suite.kernels[r].name,
                            path.display()
                        )));
                    }
                }
            }
            continue;
        }
        // Compared on the device where the reference's outputs are kept there: a passing run
        // transfers nothing.
        let on_device = match (kernels, references.on_device(suite, inputs)) {
            (Some(kernels), Some(want)) => {
                run_checked(gpu, suite, case, k, funcs, bufs, inputs, Some(kernels))?;
                if same_on_device(gpu, kernels, suite, bufs, want)? {
                    continue;
                }
                true
            }
            _ => {
                run_checked(gpu, suite, case, k, funcs, bufs, inputs, kernels)?;
                false
            }
        };
        // On the host: the message (and the dump) of a difference.
        let actual = download_outputs(gpu, suite, bufs)?;
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
                        expected: &expected,
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
