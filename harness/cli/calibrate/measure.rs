//! `ask` and `measure`: the one way calibration asks for a trial and measures it — through the
//! run's own executor (`WorkerPool`), the same path to the worker as a run.

use super::error::CalibrateError;
use crate::config::Config;
use crate::gate::GateInput;
use crate::measure::Regime;
use crate::measure::Samples;
use crate::plan::Kind;
use crate::runner::{Executor, Measured, Outcome, TrialSpec};
use crate::worker::pool::WorkerPool;
use crate::worker::protocol::BaseKernel;
use std::time::Instant;

/// How each mode repeats: with the run's configuration (the GPU is the first of
/// `KERNELGATE_DEVICE`, the time-out `KERNELGATE_TIMEOUT`, as a run's), how many times.
pub struct Repeat<'a> {
    /// The harness's configuration, as a run reads it.
    pub config: &'a Config,
    /// Repetitions.
    pub reps: usize,
}

/// What one calibration trial asks the executor for: kernel `kernel` of `case` of the pool's
/// suite `suite`, timed alone or against `base` (numbered after the pool's suites), in the
/// pinned `regime` (or as the launch floor chooses), at `effort`, on the allocations a gating
/// run uses at that effort.
pub fn ask(
    suite: usize,
    case: usize,
    kernel: usize,
    seed: u64,
    base: Option<BaseKernel>,
    regime: Option<Regime>,
    effort: u32,
) -> TrialSpec {
    TrialSpec {
        suite,
        kind: Kind::Kernel { case, kernel },
        seed,
        regime,
        base,
        // Calibration measures time alone, on as many allocations as a run's gate.
        counters: false,
        units: crate::runner::units(crate::config::Mode::Gate, effort),
        fresh_worker: false,
        effort,
        with: Vec::new(),
    }
}

/// Runs `spec` through `pool` (the run's executor: the same path to the worker as a run,
/// one worker process per pool) and returns what it measured and the wall time it took;
/// `what` names it in errors.
pub fn measure(
    pool: &WorkerPool,
    spec: &TrialSpec,
    what: &str,
) -> Result<(Measured, f64), CalibrateError> {
    let start = Instant::now();
    let incomplete = |reason: &str| CalibrateError::Incomplete {
        what: what.to_string(),
        reason: reason.into(),
    };
    let measured = match pool.execute(0, spec) {
        Outcome::Measured(m) => *m,
        Outcome::Failed(failure) => {
            return Err(CalibrateError::Trial {
                what: what.to_string(),
                failure,
            })
        }
        Outcome::Ignored(reason) => return Err(CalibrateError::NoGpu(reason)),
        Outcome::Compiled(_) => return Err(incomplete("a compile result, not a measurement")),
    };
    if measured.samples.kernel.is_empty() {
        return Err(incomplete("no timing samples"));
    }
    if spec.base.is_some() && measured.samples.reference.len() != measured.samples.kernel.len() {
        return Err(incomplete(
            "paired, but the base's samples do not match the rounds",
        ));
    }
    Ok((measured, start.elapsed().as_secs_f64()))
}

/// The paired gate input: per-round ratios candidate / base (the `kernel` slot over the
/// `reference` slot, which holds the base in a paired trial).
pub fn paired_input(s: &Samples, max_slowdown: f64) -> GateInput {
    let ratios = s.kernel.iter().zip(&s.reference).map(|(k, b)| k / b);
    GateInput {
        old_times: s.reference.clone(),
        new_times: s.kernel.clone(),
        speedups: None,
        max_slowdown,
        paired: Some(ratios.collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_ratios_are_candidate_over_base() {
        let s = Samples {
            kernel: vec![1.02e-5, 1.03e-5],
            reference: vec![1.0e-5, 1.0e-5],
            ..Samples::none()
        };
        let r = paired_input(&s, 0.0).paired.unwrap();
        assert!(
            (r[0] - 1.02).abs() < 1e-12 && (r[1] - 1.03).abs() < 1e-12,
            "{r:?}"
        );
    }
}
