//! `suites`: calibration on the user's own suites (`--suites DIR`). Every kernel trial is timed
//! against itself as its base (paired A/A: the suites are sent to the worker twice, the second
//! copy as the base's, as a paired run sends them), `reps` times, each
//! repetition in a fresh worker process and judged as a paired run judges (every trial of the
//! repetition in one family, through the gate's re-measure policy, at each suite's
//! `max_slowdown`). A `regressed` verdict is a false alarm. The pooled per-round log-ratios
//! then give the estimated smallest slowdown detected (see [`super::bootstrap`]).

use super::bootstrap::{detection_rates, smallest_detected};
use super::decide::Cell;
use super::error::CalibrateError;
use super::measure::{ask, judge, paired_input, Cost, Family};
use super::render::TrialRow;
use crate::config::Config;
use crate::gate;
use crate::runner::Executor;
use crate::suite::Suite;
use crate::worker::pool::WorkerPool;
use crate::worker::protocol::BaseKernel;

/// One kernel trial of the user's suites: its name, and where it is, which is also where its
/// base is (the same suites sent again as the base's).
struct Trial {
    name: String,
    at: BaseKernel,
}

/// Runs `reps` paired A/A repetitions over every kernel trial of `suites`, with the run's
/// configuration (the GPU is the first of `KERNELGATE_DEVICE`, the time-out
/// `KERNELGATE_TIMEOUT`, as a run's); its seed overrides the suites' (`KERNELGATE_SEED`).
pub fn calibrate(
    suites: &[Suite],
    config: &Config,
    reps: usize,
) -> Result<Vec<TrialRow>, CalibrateError> {
    let trials: Vec<Trial> = crate::plan::plan(suites)
        .into_iter()
        .filter_map(|p| {
            let (case, kernel) = p.case_kernel()?;
            let at = BaseKernel {
                suite: p.suite,
                case,
                kernel,
            };
            Some(Trial { name: p.name, at })
        })
        .collect();
    if trials.is_empty() {
        return Err(CalibrateError::Suite(
            "the suites hold no kernel trials".into(),
        ));
    }
    let ask = |t: &Trial, effort: u32| {
        let at = t.at;
        let seed = config.seed.unwrap_or(suites[at.suite].check.seed);
        // As a paired run: the launch floor chooses, the same for both (it is one kernel).
        ask(at.suite, at.case, at.kernel, seed, Some(at), None, effort)
    };
    let max_slowdown = |t: &Trial| suites[t.at.suite].bench.max_slowdown;
    let mut cells = vec![Cell::default(); trials.len()];
    let mut pooled: Vec<Vec<f64>> = vec![Vec::new(); trials.len()];
    let mut rounds: Vec<Vec<usize>> = vec![Vec::new(); trials.len()];
    for rep in 0..reps {
        // A fresh worker process per repetition; the base suites are the suites again.
        let pool = WorkerPool::new(config, suites, suites);
        let progress = |i: usize| format!("repetition {} of {reps}: {}", rep + 1, trials[i].name);
        // Decided as a paired run decides: the inconclusive measured again with more samples,
        // a regression confirmed in a fresh worker.
        let family = Family {
            count: trials.len(),
            ask: &|i, effort| ask(&trials[i], effort),
            input: &|i, s| paired_input(s, max_slowdown(&trials[i])),
            what: &|i| trials[i].name.clone(),
            progress: Some(&progress),
        };
        let confirm = gate::Confirm::Regressions;
        let (first, out) = judge(&pool, &family, &[None], confirm, &mut Cost::default());
        for (i, input) in first.iter().enumerate() {
            let Ok(input) = input else { continue };
            let ratios = input.paired.as_deref().unwrap_or_default();
            pooled[i].extend(ratios.iter().map(|r| r.ln()).filter(|d| d.is_finite()));
            rounds[i].push(ratios.len());
        }
        for (i, j) in out[0].iter().enumerate() {
            j.report_failure(&trials[i].name);
            cells[i].add(j);
        }
        pool.stop();
    }
    Ok(trials
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let rounds = median(&rounds[i]);
            let rates = detection_rates(&pooled[i], rounds, max_slowdown(t), i as u64);
            TrialRow {
                name: t.name.clone(),
                max_slowdown: max_slowdown(t),
                aa: cells[i].clone(),
                rounds,
                smallest: smallest_detected(&rates),
                estimated: !rates.is_empty(),
            }
        })
        .collect())
}

/// The median of counts (the lower middle one), 0 for none.
fn median(v: &[usize]) -> usize {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_median() {
        assert_eq!(median(&[]), 0);
        assert_eq!(median(&[16]), 16);
        assert_eq!(median(&[32, 16, 24]), 24);
        assert_eq!(median(&[16, 32]), 16);
    }
}
