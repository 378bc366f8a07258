//! `count`: the counters pass — after every trial has been timed, judged and confirmed, the
//! trials that need hardware counters get a counters-only request each (`TrialSpec::counters`),
//! whose reads join their measured outcome. Last, because a worker that has profiled times
//! some kernels slower (seen on an H200: `reduce::two_pass::n=65536` +33% once CUPTI had
//! profiled in the same process).

use super::judged::Judged;
use super::{Outcome, Planned, Runner};
use crate::config::{CounterPolicy, Mode};
use crate::gate::Verdict;
use crate::measure::counters::CounterReport;

impl Runner<'_> {
    /// Whether measured trial `trial`, judged `judged`, needs counters (`KERNELGATE_COUNTERS`):
    /// with `auto`, every trial of a bless; a confirmed time change (to attribute or explain)
    /// or a re-measured trial still not `unchanged` (issue 22: a re-measure that settled on
    /// `unchanged` — a time that did not move — read counters its baseline already holds, at
    /// ~0.6 s for the CUPTI session alone); every trial of a suite with a counter gate.
    pub(crate) fn wants_counters(&self, trial: &Planned, judged: Option<&Judged>) -> bool {
        match self.config.counters {
            CounterPolicy::Off => false,
            CounterPolicy::All => true,
            CounterPolicy::Auto => {
                let verdict = judged.and_then(|j| j.verdict).map(|v| v.verdict);
                let remeasured = judged.is_some_and(|j| {
                    matches!(
                        j.gate,
                        crate::report::results::GateNote::Compared {
                            remeasured: true,
                            ..
                        } | crate::report::results::GateNote::Paired {
                            remeasured: true,
                            ..
                        }
                    )
                });
                self.config.mode == Mode::Bless
                    || (remeasured && verdict != Some(Verdict::Unchanged))
                    || verdict.is_some_and(Verdict::changed)
                    || self.suites[trial.suite].bench.has_counter_gate()
            }
        }
    }

    /// Reads the counters of every measured trial of `plan` that needs them, on GPU slot 0,
    /// into its outcome.
    pub(super) fn count(
        &self,
        plan: &[Planned],
        outcomes: &mut [Option<Outcome>],
        judged: &[Option<Judged>],
        pairing: Option<&[Option<crate::paired::Pairing>]>,
    ) {
        for (i, trial) in plan.iter().enumerate() {
            let Some(Outcome::Measured(m)) = &outcomes[i] else {
                continue;
            };
            if m.samples.kernel.is_empty() || !self.wants_counters(trial, judged[i].as_ref()) {
                continue;
            }
            let mut spec = match pairing {
                Some(pairing) => self.spec_paired(trial, &pairing[i], 1),
                None => self.spec(trial, 1, Some(m.samples.regime)),
            };
            spec.counters = true;
            self.progress(&format!("reading the counters of {}", trial.name));
            let report = match self.executor.execute(0, &spec) {
                Outcome::Measured(c) => c.counters.unwrap_or(CounterReport::NotCollected {
                    why: "the worker returned no counters".into(),
                }),
                Outcome::Failed(f) => CounterReport::NotCollected {
                    why: format!("the counters-only launch failed: {f}"),
                },
                Outcome::Ignored(why) => CounterReport::NotCollected { why },
                Outcome::Compiled { .. } => continue,
            };
            if let Some(Outcome::Measured(m)) = outcomes[i].as_mut() {
                m.counters = Some(report);
            }
        }
    }
}
