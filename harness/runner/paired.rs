//! `judge_paired`: paired mode's gate. Each candidate trial was timed interleaved with the same
//! trial at the base revision (the timing loop's "reference" slot held the base kernel), so
//! its per-round ratios candidate / base carry no machine effect; the gate's policy
//! ([`gate::settle`]) decides them all together with the Wilcoxon signed-rank test and the
//! Hodges–Lehmann centre of the log-ratios, re-measuring inconclusive ones.

use super::judge::{remeasure, remeasure_when_gating, unreliable};
use super::judged::Judged;
use super::{Outcome, Planned, Runner};
use crate::failure::TrialFailure;
use crate::gate::{self, GateInput, REMEASURE_EFFORT};
use crate::measure::Samples;
use crate::paired::Pairing;
use crate::report::results::GateNote;

/// The gate's input for a paired trial: per-round ratios candidate / base.
fn input(samples: &Samples, max_slowdown: f64) -> GateInput {
    GateInput {
        old_times: samples.reference.clone(),
        new_times: samples.kernel.clone(),
        speedups: None,
        max_slowdown,
        paired: Some(samples.ratios().iter().map(|r| 1.0 / r).collect()),
    }
}

/// Judges every measured trial in `outcomes` against its base; `pairing` is per plan index.
pub(super) fn judge_paired(
    run: &Runner,
    plan: &[Planned],
    outcomes: &mut [Option<Outcome>],
    pairing: &[Option<Pairing>],
) -> Vec<Option<Judged>> {
    let base = run.base.expect("paired mode has a base");
    let mut judged: Vec<Option<Judged>> = plan.iter().map(|_| None).collect();
    let mut compared: Vec<usize> = Vec::new();
    for (i, _) in plan.iter().enumerate() {
        let Some(Outcome::Measured(m)) = &outcomes[i] else {
            continue;
        };
        let gate = match (unreliable(&m.samples), &pairing[i]) {
            (Some(note), _) => note,
            (None, Some(Pairing::Paired { .. })) if !m.samples.reference.is_empty() => {
                compared.push(i);
                // Filled in once the gate has decided.
                GateNote::RemeasureFailed
            }
            (None, Some(Pairing::Changed(why))) => GateNote::Changed { why: why.clone() },
            _ => GateNote::New,
        };
        judged[i] = Some(Judged {
            baseline_counters: None,
            same_trial: None,
            baseline_footprint: m.base_footprint.clone(),
            baseline_samples: m.samples.reference.clone(),
            gate,
            verdict: None,
            remeasure_failure: None,
        });
    }
    if compared.is_empty() {
        return judged;
    }
    let max_slowdown = |i: usize| run.suites[plan[i].suite].bench.max_slowdown;
    let inputs: Vec<GateInput> = compared
        .iter()
        .map(|&i| match &outcomes[i] {
            Some(Outcome::Measured(m)) => input(&m.samples, max_slowdown(i)),
            _ => unreachable!("only measured trials are compared"),
        })
        .collect();
    let mut again = |k: usize| -> Result<GateInput, TrialFailure> {
        let i = compared[k];
        let spec = run.spec_paired(&plan[i], &pairing[i], REMEASURE_EFFORT);
        remeasure(run, &plan[i], &spec, &mut outcomes[i], |m| {
            input(&m.samples, max_slowdown(i))
        })
    };
    let remeasure = remeasure_when_gating(run, &mut again);
    let decisions = gate::settle(inputs, remeasure);
    for (&i, decision) in compared.iter().zip(decisions) {
        let j = judged[i].as_mut().expect("judged above");
        j.decided(decision, |d| GateNote::Paired {
            rev: base.rev.clone(),
            commit: base.commit.clone(),
            remeasured: d.remeasured,
            family: d.family,
        });
    }
    // A regression is confirmed in a fresh worker, with counters: the line then names what
    // moved against the base (the machine cancels in paired mode, so it is never attributed).
    if run.config.mode == crate::config::Mode::Gate {
        for &i in &compared {
            let Some(j) = judged[i].as_mut() else {
                continue;
            };
            if j.verdict.map(|v| v.verdict) != Some(gate::Verdict::Regressed) {
                continue;
            }
            let spec = run.spec_paired(&plan[i], &pairing[i], REMEASURE_EFFORT);
            let regressed = gate::Verdict::Regressed;
            // Not fresh for a reason of its own: the machine cancels in paired mode.
            if let Some(m) = super::attribute::confirm(run, &plan[i], spec, regressed) {
                j.verdict = Some(gate::decide(&[input(&m.samples, max_slowdown(i))])[0]);
                outcomes[i] = Some(Outcome::Measured(m));
            }
        }
    }
    // A re-measured trial's base footprint and samples are its new run's.
    for &i in &compared {
        if let (Some(Outcome::Measured(m)), Some(j)) = (&outcomes[i], judged[i].as_mut()) {
            j.baseline_footprint = m.base_footprint.clone();
            j.baseline_samples = m.samples.reference.clone();
        }
    }
    judged
}
