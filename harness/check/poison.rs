//! `poison_twice`: the reference is run a second time on a case's first input set with its
//! outputs started from another pattern (every byte [`SECOND_POISON`], after every byte 0xFF);
//! an output that ends differently depends on what it held before the kernel ran — the
//! kernel reads it before writing it (or leaves part of it unwritten). That is an in-out
//! buffer declared as an output: an error naming the output and the fix (`role = "inout"`
//! with an `init`), before any kernel is checked against it.
//!
//! Why (issue 20, on an H200): a histogram doing `atomicAdd` into bins it never clears,
//! declared `role = "output"`, added onto the harness's 0xFF poison; the reference did the
//! same, the two agreed, and the trial passed (`accout::smem … 4.16× … ok`) — the check
//! compared counts minus one. A user's first try for an accumulating kernel is exactly this.
//! Candidates keep their single run: once the reference's outputs are known to depend on
//! nothing but the inputs, a candidate that reads its outputs computes something else and
//! fails the ordinary check.

use super::failure::{Failure, InputError};
use super::input_set::InputSet;
use super::kernels::Kernels;
use super::reference_outputs::ReferenceOutputs;
use super::run::{download_outputs, run_op};
use crate::device::{DeviceBuffer, Function, Gpu};
use crate::dtype::{DType, HostData};
use crate::suite::{Role, Suite, Tolerance};

/// The second poison pattern, every byte: zeros (0.0 and 0), as far from 0xFF (NaN, all
/// ones) as a pattern can be, and the value an accumulating kernel would want — so the two
/// runs of such a kernel always differ.
pub const SECOND_POISON: u8 = 0x00;

/// Runs the reference once more on `inputs` with its outputs poisoned with [`SECOND_POISON`],
/// and compares what it leaves with `first` (its outputs after starting from 0xFF): on the
/// device where `first` is kept there (nothing transferred when they agree), else on the host.
/// `bufs` then hold the second run's results.
pub fn poison_twice(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    funcs: &[Vec<Function>],
    bufs: &[DeviceBuffer],
    (inputs, kernels): (&InputSet, &Kernels),
    first: &ReferenceOutputs,
) -> Result<(), Failure> {
    inputs.upload(gpu, kernels, suite, bufs)?;
    for (b, buf) in suite.buffers.iter().zip(bufs) {
        if b.role == Role::Output {
            gpu.fill(buf, SECOND_POISON)?;
        }
    }
    let r = suite.reference;
    run_op(gpu, suite, case, r, &funcs[r], bufs)?;
    gpu.synchronize()?;
    let on_device = first.device().is_some();
    if let Some(want) = first.device() {
        if kernels.all_match(gpu, bufs, want, |i| start_rule(suite, i))? {
            return Ok(());
        }
    }
    // On the host: the message (or the check, without device copies).
    let second = download_outputs(gpu, suite, bufs)?;
    match depends_on_poison(suite, first.host(gpu)?, &second) {
        Some(e) => Err(Failure::Input(e)),
        None if on_device => Err(Failure::Trial(crate::failure::TrialFailure::Harness(format!(
            "the device comparison found that an output of the reference `{}` depends on what it held before, which the host comparison does not see",
            suite.kernels[r].name
        )))),
        None => Ok(()),
    }
}

/// How buffer `i` of `suite` is compared between the two starts on the device, as
/// [`depends_on_poison`] compares it on the host: a float with a tolerance as its own type
/// within it; anything else byte for byte (as `u8`, which the device reads exactly, with no
/// tolerance). `None` for a buffer that is not an output.
fn start_rule(suite: &Suite, i: usize) -> Option<(DType, Tolerance)> {
    let b = suite.buffers.get(i)?;
    if b.role != Role::Output {
        return None;
    }
    Some(match suite.check.tolerances.get(&i) {
        Some(&tol) if b.dtype.is_float() => (b.dtype, tol),
        _ => (DType::U8, super::compare::EXACT),
    })
}

/// The first output (role `output`) whose contents differ between `first` (started from 0xFF)
/// and `second` (started from [`SECOND_POISON`]), as the error that says what to declare.
pub fn depends_on_poison(
    suite: &Suite,
    first: &[Option<HostData>],
    second: &[Option<HostData>],
) -> Option<InputError> {
    suite.buffers.iter().enumerate().find_map(|(i, b)| {
        if b.role != Role::Output {
            return None;
        }
        let (Some(a), Some(z)) = (first.get(i)?.as_ref(), second.get(i)?.as_ref()) else {
            return None;
        };
        let n = a.len().min(z.len());
        // Integers must match exactly; floats within the output's tolerance, since a float
        // reduction by atomics differs in its last bits from run to run whatever it started
        // from. A float read before written meets NaN (0xFF) in the first run: never within.
        let tol = suite.check.tolerances.get(&i).copied();
        let same = |j: usize| match (b.dtype.is_float(), tol) {
            (true, Some(tol)) => super::compare::excess(a.get(j), z.get(j), &tol) <= 0.0,
            _ => a.bytes_of(j) == z.bytes_of(j),
        };
        let at = (0..n).find(|&j| !same(j))?;
        let differ = (0..n).filter(|&j| !same(j)).count();
        Some(InputError::ReadsOutput {
            buffer: b.name.clone(),
            kernel: suite.kernels[suite.reference].name.clone(),
            index: at,
            differ,
            len: n,
            values: [a.show(at), z.show(at)],
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's suite: a histogram whose `bins` are declared an output
    /// (`tests/fixtures/accumulate/output.toml`).
    fn suite(file: &str) -> Suite {
        crate::suite::load_file(std::path::Path::new(&format!(
            "tests/fixtures/accumulate/{file}.toml"
        )))
        .unwrap_or_else(|d| panic!("{d:?}"))
    }

    /// The outputs a histogram of `keys` into `nbins` bins leaves when its bins start at
    /// every byte `start`: counts added onto the start, as `atomicAdd` does.
    fn histogram(suite: &Suite, keys: &[u32], nbins: usize, start: u8) -> Vec<Option<HostData>> {
        let mut bins = vec![u32::from_le_bytes([start; 4]); nbins];
        for k in keys {
            bins[*k as usize % nbins] = bins[*k as usize % nbins].wrapping_add(1);
        }
        suite
            .buffers
            .iter()
            .map(|b| match b.role {
                Role::Input => None,
                _ => Some(HostData {
                    dtype: DType::U32,
                    bytes: bins.iter().flat_map(|v| v.to_le_bytes()).collect(),
                }),
            })
            .collect()
    }

    #[test]
    fn an_accumulating_output_is_named_with_the_fix() {
        let s = suite("output");
        let keys = [0, 1, 1, 3, 3, 3];
        let e = depends_on_poison(
            &s,
            &histogram(&s, &keys, 4, 0xFF),
            &histogram(&s, &keys, 4, 0),
        )
        .expect("the histogram reads its bins");
        let m = e.to_string();
        assert!(
            m.starts_with("output `bins` depends on what it held before the reference kernel `global` ran: started as every byte 0xFF it ends 0 at index 0, started as every byte 0x00 it ends 1 (4 of 4 elements differ)"),
            "{m}"
        );
        assert!(
            m.contains("role = \"inout\"") && m.contains("init = { constant = 0 }"),
            "{m}"
        );
    }

    #[test]
    fn the_device_compares_what_the_host_compares() {
        let exact = Tolerance {
            rtol: 0.0,
            atol: 0.0,
            allow_nan: false,
        };
        // Integer bins: byte for byte; the input keys and an in-out are not compared.
        let s = suite("output");
        let (keys, bins) = (0, s.buffers.len() - 1);
        assert_eq!(s.buffers[keys].role, Role::Input);
        assert_eq!(start_rule(&s, keys), None);
        assert_eq!(start_rule(&s, bins), Some((DType::U8, exact)));
        assert_eq!(start_rule(&s, s.buffers.len()), None);
        assert_eq!(start_rule(&suite("inout"), bins), None);
        // A float output with a tolerance: as itself, within it.
        let mut f = s.clone();
        f.buffers[bins].dtype = DType::F16;
        let tol = Tolerance {
            rtol: 1e-3,
            atol: 1e-5,
            allow_nan: true,
        };
        f.check.tolerances.insert(bins, tol);
        assert_eq!(start_rule(&f, bins), Some((DType::F16, tol)));
        // Without one: its bytes again.
        f.check.tolerances.remove(&bins);
        assert_eq!(start_rule(&f, bins), Some((DType::U8, exact)));
    }

    #[test]
    fn outputs_that_do_not_depend_on_their_start_pass() {
        // The same kernel declared in-out with its bins cleared: nothing is poisoned, and an
        // output written in full ends the same from either start.
        let s = suite("inout");
        let keys = [2, 2, 0];
        let bins = histogram(&s, &keys, 4, 0);
        assert!(depends_on_poison(&s, &bins, &bins).is_none());
        // A float reduction by atomics differs in its last bits between runs: within
        // tolerance it is not a dependence on the start.
        let mut f = suite("output");
        f.buffers.iter_mut().for_each(|b| b.dtype = DType::F32);
        let one = |v: f32| vec![None, Some(HostData::from_f64(DType::F32, [v as f64]))];
        f.buffers.truncate(2);
        f.check.tolerances.insert(
            1,
            crate::suite::Tolerance {
                rtol: 1e-5,
                atol: 0.0,
                allow_nan: false,
            },
        );
        assert!(depends_on_poison(&f, &one(1.0), &one(1.000_000_1)).is_none());
        assert!(depends_on_poison(
            &f,
            &[None, Some(HostData::poison(DType::F32, 1))],
            &one(1.0)
        )
        .is_some());
    }
}
