//! `attribute`: after the gate has decided, a stored-mode trial found slower or faster is
//! measured once more in a fresh worker process ([`confirm_all`]); once its hardware counters
//! are read (the counters pass, after all timing), its time change is attributed
//! ([`attribute_all`]): to the machine (`machine-slower` / `machine-faster`) only when the
//! change persists and nothing of the trial changed — the same code and launches, kernelgate
//! and driver (the baseline's device fingerprint includes the driver), and every counter that
//! was exact across the baseline's units equal; otherwise it stays a regression (or an
//! improvement), and the record names the counters that moved.

use super::judged::Judged;
use super::{Outcome, Planned, Runner};
use crate::baseline::{Entry, StoredCounters};
use crate::gate::{self, GateInput, TrialVerdict, Verdict, REMEASURE_EFFORT};
use crate::measure::counters::changes;

/// Whether a decided verdict is a time change worth attributing.
fn changed(v: Verdict) -> bool {
    matches!(v, Verdict::Regressed | Verdict::Improved)
}

/// What attribution concluded for one trial, from its confirming measurement.
pub(super) fn conclude(
    confirmed: TrialVerdict,
    same_trial: bool,
    old: Option<&StoredCounters>,
    now: Option<&crate::measure::counters::TrialCounters>,
) -> TrialVerdict {
    if !changed(confirmed.verdict) || !same_trial {
        return confirmed;
    }
    let (Some(old), Some(now)) = (old, now) else {
        return confirmed;
    };
    // Nothing exact to compare: the code's innocence cannot be shown.
    if old.stable.is_empty() {
        return confirmed;
    }
    let moved = changes(&old.values, &now.kernel, &old.stable);
    if moved.iter().any(|c| c.stable) {
        return confirmed;
    }
    let verdict = match confirmed.verdict {
        Verdict::Regressed => Verdict::MachineSlower,
        _ => Verdict::MachineFaster,
    };
    TrialVerdict {
        verdict,
        ..confirmed
    }
}

/// Whether the measured trial is the baseline's trial: the same kernelgate, the same launches
/// and resources (registers, shared and local memory, block shape, occupancy) and the same
/// double-precision use.
pub(super) fn same_trial(old: &Entry, m: &super::Measured) -> bool {
    old.kernelgate == env!("CARGO_PKG_VERSION")
        && old
            .footprint
            .as_ref()
            .is_some_and(|f| f.launches == m.footprint.launches && f.fp64 == m.footprint.fp64)
}

/// Measures `trial` once more as `spec` says, in a fresh worker: the confirmation of a time
/// change (`verdict`). `None` when it could not be measured.
pub(super) fn confirm(
    run: &Runner,
    trial: &Planned,
    mut spec: super::TrialSpec,
    verdict: Verdict,
) -> Option<Box<super::Measured>> {
    run.progress(&format!(
        "confirming {} in a fresh worker ({verdict})",
        trial.name
    ));
    spec.fresh_worker = true;
    match run.executor.execute(0, &spec) {
        Outcome::Measured(m) => Some(m),
        _ => None,
    }
}

/// Confirms every compared trial (`compared`: plan index and baseline entry) whose verdict in
/// `judged` is a time change: one more measurement each, in a fresh worker; its outcome
/// replaces the trial's and its verdict is decided again. A confirmed change of the same trial
/// is marked for attribution once counters are read ([`attribute_all`]).
pub(super) fn confirm_all(
    run: &Runner,
    plan: &[Planned],
    outcomes: &mut [Option<Outcome>],
    compared: &[(usize, Entry)],
    judged: &mut [Option<Judged>],
    input: impl Fn(&super::Measured, &Entry, usize) -> GateInput,
) {
    if run.config.mode != crate::config::Mode::Gate {
        return;
    }
    for (i, old) in compared {
        let Some(j) = judged[*i].as_mut() else {
            continue;
        };
        let Some(first) = j.verdict.filter(|v| changed(v.verdict)) else {
            continue;
        };
        let spec = run.spec(&plan[*i], REMEASURE_EFFORT, Some(old.regime));
        let Some(m) = confirm(run, &plan[*i], spec, first.verdict) else {
            // The first verdict stands when the confirmation could not run.
            continue;
        };
        let confirmed = gate::decide(&[input(&m, old, *i)])[0];
        j.verdict = Some(confirmed);
        j.same_trial = changed(confirmed.verdict).then(|| same_trial(old, &m));
        outcomes[*i] = Some(Outcome::Measured(m));
    }
}

/// Attributes every confirmed change marked by [`confirm_all`], now that its counters have
/// been read ([`conclude`]).
pub(super) fn attribute_all(outcomes: &[Option<Outcome>], judged: &mut [Option<Judged>]) {
    for (outcome, j) in outcomes.iter().zip(judged.iter_mut()) {
        let (Some(Outcome::Measured(m)), Some(j)) = (outcome, j.as_mut()) else {
            continue;
        };
        let (Some(same), Some(v)) = (j.same_trial, j.verdict) else {
            continue;
        };
        let now = m.counters.as_ref().and_then(|c| c.collected());
        j.verdict = Some(conclude(v, same, j.baseline_counters.as_ref(), now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Comparison;
    use crate::measure::counters::{Counter, TrialCounters};

    fn verdict(v: Verdict) -> TrialVerdict {
        let c = Comparison {
            slowdown: 1.05,
            low: 1.04,
            high: 1.06,
            p: 1e-9,
            p_adjusted: 1e-9,
        };
        TrialVerdict {
            verdict: v,
            time: c,
            speedup: None,
        }
    }

    fn stored(instructions: f64) -> StoredCounters {
        StoredCounters {
            values: [
                (Counter::Instructions, instructions),
                (Counter::DramWriteBytes, 10.0),
            ]
            .into_iter()
            .collect(),
            stable: [Counter::Instructions].into_iter().collect(),
            runs: 2,
        }
    }

    fn now(instructions: f64) -> TrialCounters {
        TrialCounters {
            kernel: [
                (Counter::Instructions, instructions),
                (Counter::DramWriteBytes, 99.0),
            ]
            .into_iter()
            .collect(),
            against: None,
        }
    }

    #[test]
    fn the_same_trial_with_equal_exact_counters_is_the_machine() {
        let v = conclude(
            verdict(Verdict::Regressed),
            true,
            Some(&stored(5e5)),
            Some(&now(5e5)),
        );
        assert_eq!(
            v.verdict,
            Verdict::MachineSlower,
            "DRAM writes are not exact: ignored"
        );
        let v = conclude(
            verdict(Verdict::Improved),
            true,
            Some(&stored(5e5)),
            Some(&now(5e5)),
        );
        assert_eq!(v.verdict, Verdict::MachineFaster);
    }

    #[test]
    fn a_moved_exact_counter_or_changed_code_keeps_the_regression() {
        let old = stored(5e5);
        let v = conclude(
            verdict(Verdict::Regressed),
            true,
            Some(&old),
            Some(&now(5.1e5)),
        );
        assert_eq!(v.verdict, Verdict::Regressed);
        let v = conclude(
            verdict(Verdict::Regressed),
            false,
            Some(&old),
            Some(&now(5e5)),
        );
        assert_eq!(
            v.verdict,
            Verdict::Regressed,
            "changed code is never the machine"
        );
        let v = conclude(verdict(Verdict::Regressed), true, Some(&old), None);
        assert_eq!(v.verdict, Verdict::Regressed, "no counters, no attribution");
        let mut none_exact = old.clone();
        none_exact.stable.clear();
        let v = conclude(
            verdict(Verdict::Regressed),
            true,
            Some(&none_exact),
            Some(&now(5e5)),
        );
        assert_eq!(v.verdict, Verdict::Regressed, "nothing exact to compare");
    }

    #[test]
    fn a_change_that_did_not_persist_takes_the_new_verdict() {
        let v = conclude(
            verdict(Verdict::Unchanged),
            true,
            Some(&stored(5e5)),
            Some(&now(5e5)),
        );
        assert_eq!(v.verdict, Verdict::Unchanged);
    }
}
