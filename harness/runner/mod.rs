//! `Runner`: schedule, execute, judge — nothing else. Every selected trial runs first, through
//! an [`Executor`] (GPU work one trial at a time per GPU); then the gate decides all of them
//! together (its false-discovery-rate correction needs every p-value), re-measuring
//! inconclusive ones through the same executor; then baselines are blessed when asked. The
//! result is one typed [`TrialRecord`] per trial, which every reporter renders.
//!
//! The commands that drive it (`run`, `lint`, `calibrate`, ...) live in `cli/`.

mod bless;
mod executor;
mod judge;
mod paired;
mod plan;
mod record;
#[cfg(test)]
mod tests;

pub use executor::{Executor, Kind, Measured, Outcome, TrialSpec};
pub use plan::{plan, Planned};
pub use record::{commands, limit_breaches, memory_growth, resource_changes};

use crate::baseline::{BaselineStore, Fingerprint};
use crate::config::{Config, Mode};
use crate::measure::Regime;
use crate::report::results::{self, Results, TrialRecord};
use crate::suite::Suite;
use std::sync::Mutex;

/// One run: the options, the suites, and the executor that does the GPU work.
pub struct Runner<'a> {
    /// The run's options.
    pub config: &'a Config,
    /// Every suite, loaded and validated.
    pub suites: &'a [Suite],
    /// Runs trials.
    pub executor: &'a dyn Executor,
    /// Print progress on stderr.
    pub progress: bool,
    /// Paired mode: the base revision each trial is timed and judged against (its suites
    /// numbered after `suites` for the executor), instead of stored baselines.
    pub base: Option<&'a crate::paired::Base>,
}

/// What a run produced: the typed record of every selected trial, and what blessing wrote.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The device, every selected trial's record, and where the time went.
    pub results: Results,
    /// One line per blessed trial or per problem blessing met (`KERNELGATE_BLESS`).
    pub blessed: Vec<String>,
}

impl Runner<'_> {
    pub(crate) fn progress(&self, text: &str) {
        if self.progress {
            eprintln!("kernelgate: {text}");
        }
    }

    /// What to execute for `trial`.
    pub(crate) fn spec(&self, trial: &Planned, effort: u32, regime: Option<Regime>) -> TrialSpec {
        TrialSpec {
            suite: trial.suite,
            kind: trial.kind,
            seed: self
                .config
                .seed
                .unwrap_or(self.suites[trial.suite].check.seed),
            regime,
            base: None,
            effort,
        }
    }

    /// What to execute for `trial` in paired mode: timed against its base, when it has one.
    pub(crate) fn spec_paired(
        &self,
        trial: &Planned,
        pairing: &Option<crate::paired::Pairing>,
        effort: u32,
    ) -> TrialSpec {
        let base = match pairing {
            Some(crate::paired::Pairing::Paired {
                suite,
                case,
                kernel,
            }) => Some(crate::worker::protocol::BaseKernel {
                suite: self.suites.len() + suite,
                case: *case,
                kernel: *kernel,
            }),
            _ => None,
        };
        TrialSpec {
            base,
            ..self.spec(trial, effort, None)
        }
    }

    /// Runs the trials of `plan` at the indices in `selected`, judges and (when asked) blesses
    /// them, and returns their records in plan order.
    pub fn run(&self, plan: &[Planned], selected: &[usize]) -> RunReport {
        let any_kernel = selected.iter().any(|&i| plan[i].case_kernel().is_some());
        let pairing: Option<Vec<Option<crate::paired::Pairing>>> = self.base.map(|b| {
            plan.iter()
                .map(|p| crate::paired::pair(self.suites, b, p))
                .collect()
        });
        let store = if any_kernel && pairing.is_none() {
            self.executor.device().map(|info| {
                BaselineStore::open(
                    &self.config.baselines,
                    &Fingerprint::of(&info),
                    self.suites.iter().map(|s| s.name.as_str()),
                )
            })
        } else {
            None
        };
        let mut outcomes = self.execute_all(plan, selected, store.as_ref(), pairing.as_deref());
        let any_measured = outcomes
            .iter()
            .any(|o| matches!(o, Some(Outcome::Measured(_))));
        let device = any_measured.then(|| self.executor.device()).flatten();
        let mut judged = plan.iter().map(|_| None).collect();
        let mut blessed = Vec::new();
        if let (true, Some(pairing)) = (device.is_some(), &pairing) {
            judged = paired::judge_paired(self, plan, &mut outcomes, pairing);
        } else if let (true, Some(store)) = (device.is_some(), &store) {
            judged = judge::judge(self, plan, &mut outcomes, store);
            if self.config.mode == Mode::Bless {
                blessed = bless::bless(self, plan, &outcomes, store);
            }
        }
        self.executor.stop();
        let trials: Vec<TrialRecord> = plan
            .iter()
            .zip(&outcomes)
            .zip(&judged)
            .filter_map(|((trial, outcome), judged)| {
                outcome
                    .as_ref()
                    .map(|o| record::record(self, trial, o, judged.as_ref()))
            })
            .collect();
        RunReport {
            results: Results {
                format: results::FORMAT,
                kernelgate: env!("CARGO_PKG_VERSION").to_string(),
                date: crate::baseline::today(),
                device: device.as_ref().map(Fingerprint::of),
                device_info: device,
                trials,
                totals: Some(self.executor.totals()),
                base: self.base.map(|b| crate::report::results::BaseRevision {
                    rev: b.rev.clone(),
                    commit: b.commit.clone(),
                }),
                gone: self
                    .base
                    .map(|b| crate::paired::gone(self.suites, b))
                    .unwrap_or_default(),
                provenance: Default::default(),
            },
            blessed,
        }
    }

    /// Runs the selected trials: in order on one GPU; with several, each slot takes the next
    /// trial when its GPU is free, so no GPU ever runs two at once.
    fn execute_all(
        &self,
        plan: &[Planned],
        selected: &[usize],
        store: Option<&BaselineStore>,
        pairing: Option<&[Option<crate::paired::Pairing>]>,
    ) -> Vec<Option<Outcome>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let slots: Vec<Mutex<Option<Outcome>>> = plan.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let workers = self.executor.slots().max(1);
        let work = |slot: usize| loop {
            let n = next.fetch_add(1, Ordering::SeqCst);
            let Some(&i) = selected.get(n) else { break };
            let trial = &plan[i];
            let on = if workers > 1 {
                format!(" on GPU slot {slot}")
            } else {
                String::new()
            };
            self.progress(&format!(
                "[{}/{}] {}{on}",
                n + 1,
                selected.len(),
                trial.name
            ));
            let spec = match pairing {
                Some(pairing) => self.spec_paired(trial, &pairing[i], 1),
                None => {
                    let suite = &self.suites[trial.suite].name;
                    let regime = store.and_then(|s| s.regime(suite, &trial.name));
                    self.spec(trial, 1, regime)
                }
            };
            let outcome = self.executor.execute(slot, &spec);
            *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        };
        if workers == 1 {
            work(0);
        } else {
            std::thread::scope(|scope| {
                for slot in 0..workers {
                    let work = &work;
                    scope.spawn(move || work(slot));
                }
            });
        }
        slots
            .into_iter()
            .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }
}
