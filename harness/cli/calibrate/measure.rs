//! `ask` and `measure`: the one way calibration asks for a trial and measures it — through the
//! run's own executor (`WorkerPool`), the same path to the worker as a run.

use super::decide::{judge_family, Judged, Skip};
use super::error::CalibrateError;
use crate::gate::{self, GateInput, REMEASURE_EFFORT};
use crate::measure::Regime;
use crate::measure::Samples;
use crate::plan::Kind;
use crate::runner::{Executor, Measured, Outcome, TrialSpec};
use crate::worker::pool::WorkerPool;
use crate::worker::protocol::BaseKernel;
use std::time::Instant;

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

/// Wall time spent per verdict in one mode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cost {
    /// Verdicts asked for (trials × repetitions).
    pub verdicts: usize,
    /// Wall seconds of every measurement, first and re-measures (not worker start-up).
    pub seconds: f64,
    /// Re-measures made.
    pub remeasures: usize,
    /// Confirmations made in a fresh worker (a change, as a run confirms it).
    pub confirmations: usize,
}

impl Cost {
    /// Seconds per verdict, or NaN before any.
    pub fn per_verdict(&self) -> f64 {
        if self.verdicts == 0 {
            f64::NAN
        } else {
            self.seconds / self.verdicts as f64
        }
    }
}

/// One family of calibration trials, `0..count`: trial `k` asked for at an effort, its samples
/// made the gate's input, named in errors (`what`) and, where the command shows its progress,
/// in the line said before its first measurement (`progress`: such a family says each
/// re-measure too).
pub struct Family<'a> {
    /// How many trials.
    pub count: usize,
    /// The spec of trial `k` at an effort.
    pub ask: &'a dyn Fn(usize, u32) -> TrialSpec,
    /// Trial `k`'s samples as the gate's input.
    pub input: &'a dyn Fn(usize, &Samples) -> GateInput,
    /// Trial `k`'s name in errors.
    pub what: &'a dyn Fn(usize) -> String,
    /// The progress line before trial `k`'s first measurement.
    pub progress: Option<&'a dyn Fn(usize) -> String>,
}

/// `family` measured in `pool`'s worker and decided at each of `thresholds` through the gate's
/// policy as a run in `confirm`'s mode decides it ([`judge_family`]): every trial measured, the
/// inconclusive measured again, the changes confirmed in a fresh worker, what it took added to
/// `cost`. Returns the first measurements' gate inputs and the outcomes, `[threshold][trial]`.
pub fn judge(
    pool: &WorkerPool,
    family: &Family,
    thresholds: &[Option<f64>],
    confirm: gate::Confirm,
    cost: &mut Cost,
) -> (Vec<Result<GateInput, Skip>>, Vec<Vec<Judged>>) {
    let first: Vec<Result<GateInput, Skip>> = (0..family.count)
        .map(|k| {
            if let Some(progress) = family.progress {
                eprintln!("calibrate: {}", progress(k));
            }
            cost.verdicts += 1;
            let spec = (family.ask)(k, 1);
            let (data, wall) = measure(pool, &spec, &(family.what)(k)).map_err(Skip::Failed)?;
            cost.seconds += wall;
            if data.samples.clocks.unreliable {
                return Err(Skip::Unreliable);
            }
            Ok((family.input)(k, &data.samples))
        })
        .collect();
    // What the re-measures take, added to `cost` once the family is decided.
    let spent = std::cell::RefCell::new(Cost::default());
    let again = |k: usize, fresh: bool| -> Result<GateInput, CalibrateError> {
        if family.progress.is_some() {
            let why = if fresh {
                "in a fresh worker: a regression to confirm"
            } else {
                "inconclusive"
            };
            eprintln!(
                "calibrate: measuring {} again ({REMEASURE_EFFORT}x the samples, {why})",
                (family.what)(k)
            );
        }
        let mut spent = spent.borrow_mut();
        if fresh {
            spent.confirmations += 1;
        } else {
            spent.remeasures += 1;
        }
        let spec = TrialSpec {
            fresh_worker: fresh,
            ..(family.ask)(k, REMEASURE_EFFORT)
        };
        let (data, wall) = measure(pool, &spec, &(family.what)(k))?;
        // A fresh worker's start-up is not the measurement's (the table says so): the worker's
        // own time for the trial instead.
        spent.seconds += if fresh { data.seconds } else { wall };
        Ok((family.input)(k, &data.samples))
    };
    let mut measures = gate::Measures(|k| again(k, false), |k, _| again(k, true).ok());
    let out = judge_family(&first, thresholds, &mut measures, confirm);
    let spent = spent.into_inner();
    cost.seconds += spent.seconds;
    cost.remeasures += spent.remeasures;
    cost.confirmations += spent.confirmations;
    (first, out)
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
    fn cost_per_verdict() {
        let c = Cost {
            verdicts: 4,
            seconds: 0.2,
            remeasures: 1,
            confirmations: 0,
        };
        assert!((c.per_verdict() - 0.05).abs() < 1e-12);
        assert!(Cost::default().per_verdict().is_nan());
    }

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
