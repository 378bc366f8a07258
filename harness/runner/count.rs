//! `count`: the counters pass — after every trial has been timed, judged and confirmed, the
//! trials that need hardware counters get a counters-only request each (`TrialSpec::counters`),
//! sent in batches the worker profiles together (`worker::batch`), whose reads join their
//! measured outcome. Last, because a worker that has profiled times
//! some kernels slower (seen on an H200: `reduce::two_pass::n=65536` +33% once CUPTI had
//! profiled in the same process).

use super::trial::{Judged, Trial};
use super::{Kind, Outcome, Planned, Runner, TrialSpec};
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
                let remeasured = judged.is_some_and(|j| j.gate.remeasured());
                self.config.mode == Mode::Bless
                    || (remeasured && verdict != Some(Verdict::Unchanged))
                    || verdict.is_some_and(Verdict::changed)
                    || self.suites[trial.suite].bench.has_counter_gate()
            }
        }
    }

    /// Reads the counters of every measured trial of `plan` that needs them, on GPU slot 0,
    /// into its outcome: in batches ([`batches`]), each profiled together by the worker.
    pub(super) fn count(
        &self,
        plan: &[Planned],
        trials: &mut [Trial],
        pairing: Option<&[Option<crate::paired::Pairing>]>,
    ) {
        let mut wanted: Vec<(usize, TrialSpec, u64)> = Vec::new();
        for (i, trial) in plan.iter().enumerate() {
            let Some((m, judged)) = trials[i].judged() else {
                continue;
            };
            if m.samples.kernel.is_empty() || !self.wants_counters(trial, Some(judged)) {
                continue;
            }
            // Stored mode: in the regime it was timed in; paired mode chooses it again.
            let regime = pairing.is_none().then_some(m.samples.regime);
            let mut spec = self.spec(trial, pairing.and_then(|p| p[i].as_ref()), 1, regime);
            spec.counters = true;
            wanted.push((i, spec, self.counter_bytes(trial)));
        }
        // A quarter of the device's memory for a batch's buffers; the worker splits a batch
        // the device has no room for.
        let budget = self
            .executor
            .device()
            .map_or(u64::MAX, |d| d.total_memory as u64 / 4);
        let sizes: Vec<u64> = wanted.iter().map(|(_, _, bytes)| *bytes).collect();
        for range in batches(&sizes, budget) {
            let batch = &wanted[range];
            let name = |k: usize| plan[batch[k].0].name.as_str();
            self.progress(&match batch.len() {
                1 => format!("reading the counters of {}", name(0)),
                n => format!(
                    "reading the counters of {n} trials ({} … {})",
                    name(0),
                    name(n - 1)
                ),
            });
            let specs: Vec<TrialSpec> = batch.iter().map(|(_, spec, _)| spec.clone()).collect();
            let read = self.executor.execute_counters(0, &specs);
            for ((i, ..), outcome) in batch.iter().zip(read) {
                let report = match outcome {
                    Outcome::Measured(c) => c.counters.unwrap_or(CounterReport::NotCollected {
                        why: "the worker returned no counters".into(),
                    }),
                    Outcome::Failed(f) => CounterReport::NotCollected {
                        why: format!("the counters-only launch failed: {f}"),
                    },
                    Outcome::Ignored(why) => CounterReport::NotCollected { why },
                    Outcome::Compiled(_) => continue,
                };
                if let Some((m, _)) = trials[*i].judged_mut() {
                    m.counters = Some(report);
                }
            }
        }
    }

    /// What a counters-only request of `trial` holds on the device, about: the case's buffers
    /// and a copy of its first input set, on each allocation the counters are read on.
    fn counter_bytes(&self, trial: &Planned) -> u64 {
        let suite = &self.suites[trial.suite];
        let Kind::Kernel { case, .. } = trial.kind else {
            return 0;
        };
        suite
            .buffer_bytes(case)
            .saturating_mul(2)
            .saturating_mul(u64::from(crate::worker::COUNTER_UNITS))
    }
}

/// Trials of one counters request, at most: the worker profiles up to four operations per
/// trial in one configuration, at most [`crate::worker::MAX_RANGES`]. Larger configurations
/// save nothing: on an H100, 60 trials in one configuration (120 ranges) started and stopped
/// in 0.30 s, in two 0.23–0.26 s; 240 ranges in one 0.53 s, in two 0.31–0.38 s.
pub const BATCH_TRIALS: usize = 32;

/// Consecutive batches of trials whose sizes are `sizes` (bytes each): at most
/// [`BATCH_TRIALS`] trials and `budget` bytes a batch, a trial larger than `budget` alone.
pub fn batches(sizes: &[u64], budget: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0u64);
    for (i, size) in sizes.iter().enumerate() {
        let full = i - start == BATCH_TRIALS || held.saturating_add(*size) > budget;
        if i > start && full {
            out.push(start..i);
            (start, held) = (i, 0);
        }
        held = held.saturating_add(*size);
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_at_most_the_budget_and_the_trial_count() {
        assert_eq!(batches(&[], 10), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(batches(&[4, 4, 4, 4], 10), vec![0..2, 2..4]);
        // A trial over the budget goes alone; the next starts a new batch.
        assert_eq!(batches(&[1, 50, 1, 1], 10), vec![0..1, 1..2, 2..4]);
        let many = vec![1; 2 * BATCH_TRIALS + 1];
        let got = batches(&many, u64::MAX);
        assert_eq!(
            got,
            vec![
                0..BATCH_TRIALS,
                BATCH_TRIALS..2 * BATCH_TRIALS,
                2 * BATCH_TRIALS..2 * BATCH_TRIALS + 1
            ]
        );
        // Every trial in exactly one batch, in order.
        let sizes: Vec<u64> = (0..100).map(|i| (i * 37 % 11) as u64).collect();
        let flat: Vec<usize> = batches(&sizes, 20).into_iter().flatten().collect();
        assert_eq!(flat, (0..100).collect::<Vec<_>>());
        for r in batches(&sizes, 20) {
            let held: u64 = sizes[r.clone()].iter().sum();
            assert!(held <= 20 || r.len() == 1, "{r:?} holds {held}");
        }
    }
}
