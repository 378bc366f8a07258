//! `Sensitivity`: planted slowdowns of `spin` kernels of several durations, judged in both
//! modes with the regime pinned. Every duration's level-0 case is first measured in one worker
//! (the stored baseline); its regime is passed to every later measurement of that kernel, as a
//! run passes a stored baseline's regime (unpinned, one process timed graph replays and another
//! single launches of the same ~50 µs kernel, and A/A was flagged 5 of 5 on one H200 host).
//!
//! - **stored**: each repetition in a fresh worker, every level against the baseline's samples;
//! - **paired**: each repetition in a fresh worker, the level-k case timed interleaved against
//!   the level-0 case as its base (the same suite sent a second time under another index: the
//!   buffers are identical), judged on per-round ratios.
//!
//! One repetition of one duration is one gate family (its levels decided together), decided at
//! every threshold of [`THRESHOLDS`] from the same samples ([`judge`]).

use super::render::{Kernel, Sensitivity};
use kernelgate::cli::calibrate::decide::{Cell, Judged};
use kernelgate::cli::calibrate::measure::{ask, judge, paired_input, Cost, Family};
use kernelgate::config::Config;
use kernelgate::gate::{self, GateInput};
use kernelgate::measure::Samples;
use kernelgate::report::duration;
use kernelgate::runner::Executor;
use kernelgate::suite::Suite;
use kernelgate::worker::pool::WorkerPool;
use kernelgate::worker::protocol::BaseKernel;

/// The `max_slowdown` values sensitivity is decided at.
pub const THRESHOLDS: [f64; 3] = [0.005, 0.01, 0.02];

/// Planted slowdowns, percent (0: A/A).
pub const LEVELS: [i64; 5] = [0, 1, 2, 3, 5];

/// One duration's suite (cases: [`LEVELS`]) and its stored baseline.
pub struct Subject {
    /// The suite.
    pub suite: Suite,
    /// What the report says of it.
    pub kernel: Kernel,
    /// The level-0 samples measured in the baseline worker.
    pub baseline: Samples,
    /// The spread between the baseline's allocations (its runs), which widens stored mode's
    /// threshold as a run's (`gate::with_spread`).
    pub spread: f64,
}

fn empty(kernels: usize) -> Vec<Vec<Vec<Cell>>> {
    vec![vec![vec![Cell::default(); THRESHOLDS.len()]; LEVELS.len()]; kernels]
}

/// Stored mode's gate input: `s` against the baseline's samples.
fn stored_input(baseline: &Samples, s: &Samples) -> GateInput {
    GateInput {
        old_times: baseline.kernel.clone(),
        new_times: s.kernel.clone(),
        speedups: None,
        max_slowdown: 0.0,
        paired: None,
    }
}

/// How a mode measures: `Stored` against the baseline worker's samples, `Paired` against the
/// unslowed case timed interleaved as the base.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Against the stored baseline.
    Stored,
    /// Against the unslowed case as the base.
    Paired,
}

impl Mode {
    /// Which changes a run in this mode confirms in a fresh worker.
    fn confirm(self) -> gate::Confirm {
        match self {
            Mode::Stored => gate::Confirm::Changes,
            Mode::Paired => gate::Confirm::Regressions,
        }
    }
}

/// `reps` repetitions, each in a fresh worker (with the run's configuration), of every
/// subject's family in `mode`.
pub fn sweep(subjects: &[Subject], config: &Config, reps: usize, mode: Mode) -> Sensitivity {
    let mut cells = empty(subjects.len());
    let mut cost = Cost::default();
    // Paired: the base is the same suite again (`SuiteRef::Base(d)`: the pool's base suites
    // are the subjects' suites again).
    let suites: Vec<Suite> = subjects.iter().map(|s| s.suite.clone()).collect();
    let (name, base): (&str, &[Suite]) = match mode {
        Mode::Stored => ("stored", &[]),
        Mode::Paired => ("paired", &suites),
    };
    for rep in 0..reps {
        eprintln!("calibrate: {name} mode, repetition {} of {reps}", rep + 1);
        // A fresh worker process per repetition: one pool each.
        let pool = WorkerPool::new(config, &suites, base);
        for (d, sub) in subjects.iter().enumerate() {
            let base = (mode == Mode::Paired).then_some(BaseKernel {
                suite: d,
                case: 0,
                kernel: 0,
            });
            let regime = Some(sub.kernel.regime);
            let ask = |case, effort| ask(d, case, 0, sub.suite.check.seed, base, regime, effort);
            let input = |_, s: &Samples| match mode {
                Mode::Stored => stored_input(&sub.baseline, s),
                Mode::Paired => paired_input(s, 0.0),
            };
            let label = format!("{name}, ~{}", duration(sub.kernel.target));
            let family = Family {
                count: LEVELS.len(),
                ask: &ask,
                input: &input,
                what: &|l| format!("{label}, {}% slower", LEVELS[l]),
                progress: None,
            };
            // The thresholds, each widened by the baseline's spread in stored mode as a run
            // widens a stored baseline's (1: paired).
            let spread = match mode {
                Mode::Stored => sub.spread,
                Mode::Paired => 1.0,
            };
            let thresholds: Vec<_> = THRESHOLDS
                .iter()
                .map(|t| Some(gate::with_spread(*t, spread)))
                .collect();
            let (_, out) = judge(&pool, &family, &thresholds, mode.confirm(), &mut cost);
            for j in out.first().into_iter().flatten() {
                j.report_failure(&label);
            }
            add(&mut cells[d], &out);
        }
        pool.stop();
    }
    let how = match mode {
        Mode::Stored => format!("Each duration's unslowed case measured once in one worker process (the stored baseline); then {} repetitions, each in a fresh worker process, of every planted slowdown, judged against that baseline with the regime pinned to the baseline's. Cells: flagged `regressed` / repetitions; at 0% every flag is a false alarm.", reps),
        Mode::Paired => format!("{} repetitions, each in a fresh worker process: every planted slowdown timed interleaved against the unslowed case as its base (per-round ratios, Wilcoxon signed-rank and Hodges–Lehmann interval), the regime pinned as in stored mode. Cells: flagged `regressed` / repetitions; at 0% (the case against itself) every flag is a false alarm.", reps),
    };
    Sensitivity {
        mode: name,
        how,
        cells,
        cost,
    }
}

/// Adds one family's outcomes (`[threshold][level]`) to `cells[level][threshold]`.
fn add(cells: &mut [Vec<Cell>], out: &[Vec<Judged>]) {
    for (t, per_level) in out.iter().enumerate() {
        for (l, j) in per_level.iter().enumerate() {
            cells[l][t].add(j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelgate::cli::calibrate::decide::Skip;
    use kernelgate::gate::Verdict;

    #[test]
    fn outcomes_land_in_their_level_and_threshold() {
        let mut cells = empty(1);
        let out = vec![
            vec![Judged::Verdict(Verdict::Unchanged); LEVELS.len()],
            vec![Judged::Verdict(Verdict::Regressed); LEVELS.len()],
            vec![Judged::Skipped(Skip::Unreliable); LEVELS.len()],
        ];
        add(&mut cells[0], &out);
        assert_eq!(cells[0][4][1].flagged, 1);
        assert_eq!(cells[0][4][0].flagged, 0);
        assert_eq!(cells[0][0][2].unreliable, 1);
        assert!(cells[0].iter().flatten().all(|c| c.reps == 1));
    }
}
