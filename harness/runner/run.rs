//! `Runner`: one run's options, suites and executor, and what each trial asks the executor to
//! do ([`TrialSpec`]). The run itself — schedule, execute, judge, bless, record — is in
//! `schedule.rs`.

use super::{Executor, Planned, TrialSpec};
use crate::config::Config;
use crate::measure::Regime;
use crate::paired::Pairing;
use crate::report::results::Results;
use crate::suite::Suite;

/// One run: the options, the suites, and the executor that does the GPU work.
pub struct Runner<'a> {
    /// The run's options.
    pub config: &'a Config,
    /// Every suite, loaded and validated.
    pub suites: &'a [Suite],
    /// Runs trials.
    pub executor: &'a dyn Executor,
    /// What to say on stderr while the trials run.
    pub progress: Progress,
    /// Paired mode: the base revision each trial is timed and judged against (its suites
    /// numbered after `suites` for the executor), instead of stored baselines.
    pub base: Option<&'a crate::paired::Base>,
    /// Set when the run is asked to stop (SIGTERM, SIGINT): no further trial starts.
    pub stop: &'a crate::stop::Stop,
}

/// What a run says on stderr while its trials run (libtest's stdout is not touched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Nothing (`--quiet`, `--format json`, a nextest process, tests).
    Off,
    /// On a terminal: each trial as it starts.
    Terminal,
    /// Off a terminal (a CI log): each trial's measurement as soon as it is measured (its
    /// verdict comes at the end, after the run-wide decision), and the trials still running
    /// every [`TICK_SECONDS`], so a log stopped early still says how far the run got.
    Log,
}

/// How often a log says which trials are still running.
pub const TICK_SECONDS: u64 = 10;

/// What a run produced: the typed record of every selected trial, and what blessing wrote.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The device, every selected trial's record, and where the time went.
    pub results: Results,
    /// One line per blessed trial or per problem blessing met (`KERNELGATE_BLESS`).
    pub blessed: Vec<String>,
}

/// Allocations a trial is sampled on in a run. Measured on H200s (`docs/measurement.md`):
/// re-allocating a trial's buffers inside one process reproduces the timing modes seen between
/// processes (`ptx::ptx_vec4::n=1048576` at 3.65 or 3.82 µs, 7 of 24 allocations slow).
pub const UNITS: u32 = 2;

/// Allocations a trial is sampled on when blessing, each stored as one of the baseline's runs:
/// with a mode in a quarter of allocations, six miss it with probability 0.75⁶ ≈ 0.18.
pub const BLESS_UNITS: u32 = 6;

/// Allocations a trial's samples are split over in `mode` at `effort`: [`UNITS`] normally,
/// [`BLESS_UNITS`] when blessing (the baseline must hold every mode a fresh allocation can land
/// in), and one more when measuring again (a re-measure, a confirmation). Calibration asks the
/// same, so it measures the gate a run applies.
pub fn units(mode: crate::config::Mode, effort: u32) -> u32 {
    match (mode, effort > 1) {
        (crate::config::Mode::Bless, _) => BLESS_UNITS,
        (_, true) => UNITS + 1,
        (_, false) => UNITS,
    }
}

impl Runner<'_> {
    pub(crate) fn progress(&self, text: &str) {
        if self.progress != Progress::Off {
            eprintln!("kernelgate: {text}");
        }
    }

    /// What to execute for `trial`: in paired mode (`pairing`, its pairing) timed against its
    /// base, when it has one.
    pub(crate) fn spec(
        &self,
        trial: &Planned,
        pairing: Option<&Pairing>,
        effort: u32,
        regime: Option<Regime>,
    ) -> TrialSpec {
        TrialSpec {
            suite: trial.suite,
            kind: trial.kind,
            seed: self
                .config
                .seed
                .unwrap_or(self.suites[trial.suite].check.seed),
            regime,
            base: match pairing {
                Some(Pairing::Paired(at)) => Some(*at),
                _ => None,
            },
            counters: false,
            units: units(self.config.mode, effort),
            fresh_worker: false,
            effort,
            with: Vec::new(),
        }
    }
}
