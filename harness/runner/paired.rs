//! `judge_paired`: paired mode's gate. Each candidate trial was timed interleaved with the same
//! trial at the base revision (the timing loop's "reference" slot held the base kernel), so
//! its per-round ratios candidate / base carry no machine effect; the gate's policy
//! ([`gate::settle`]) decides them all together with the Wilcoxon signed-rank test and the
//! Hodges–Lehmann centre of the log-ratios, re-measuring inconclusive ones and confirming
//! regressions in a fresh worker (the machine cancels: nothing is attributed). A trial whose code
//! is identical at the base and was timed anyway (`KERNELGATE_TIME_IDENTICAL=1`) is an A/A pair:
//! decided in a family of its own, its verdict `identical code` with the change it measured.

use super::judge::{decide, unreliable, Strategy};
use super::trial::{Judged, State, Trial};
use super::{Planned, Runner};
use crate::gate::{self, GateInput, TrialVerdict, Verdict, REMEASURE_EFFORT};
use crate::measure::Samples;
use crate::paired::Pairing;
use crate::report::results::{GateNote, Noise};

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

/// The A/A pairs (trials identical at the base, timed anyway) decided as a family of their own:
/// each one's verdict is `identical code` with the change it measured; the noise is the largest
/// change among them, with how many the gate would have called regressed or improved.
fn identical_pairs(
    trials: &[Trial],
    pairs: &[usize],
    max_slowdown: impl Fn(usize) -> f64,
) -> (Vec<TrialVerdict>, Option<(usize, Noise)>) {
    let inputs: Vec<GateInput> = pairs
        .iter()
        .filter_map(|&i| Some(input(&trials[i].measured()?.samples, max_slowdown(i))))
        .collect();
    let would = gate::decide(&inputs);
    let count = |v: Verdict| would.iter().filter(|w| w.verdict == v).count();
    let size = |v: &TrialVerdict| v.time.slowdown.ln().abs();
    let largest = would
        .iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| size(a).total_cmp(&size(b)));
    let noise = largest.map(|(k, v)| {
        (
            pairs[k],
            Noise {
                trial: String::new(),
                change: v.time,
                regressed: count(Verdict::Regressed),
                improved: count(Verdict::Improved),
            },
        )
    });
    let verdicts = would
        .iter()
        .map(|w| TrialVerdict {
            verdict: Verdict::IdenticalCode,
            // An A/A pair's evidence is its time (`gate::semantics`).
            basis: crate::gate::Basis::Time,
            ..*w
        })
        .collect();
    (verdicts, noise)
}

/// Judges every measured trial of `trials` against its base; `pairing` is per plan index.
/// Returns the noise the A/A pairs measured (with the plan index of the trial that showed it).
pub(super) fn judge_paired(
    run: &Runner,
    plan: &[Planned],
    trials: &mut [Trial],
    pairing: &[Option<Pairing>],
) -> Option<(usize, Noise)> {
    let base = run.base.expect("paired mode has a base");
    let mut compared: Vec<usize> = Vec::new();
    let mut pairs: Vec<usize> = Vec::new();
    for (i, t) in trials.iter_mut().enumerate() {
        let State::Measured(m, judged) = &mut t.state else {
            continue;
        };
        let gate = match (unreliable(&m.samples), &pairing[i]) {
            (Some(note), _) => note,
            (None, Some(Pairing::Paired(_)))
                if t.code.identical() && !m.samples.reference.is_empty() =>
            {
                pairs.push(i);
                GateNote::IdenticalCode {
                    rev: base.rev.clone(),
                    commit: base.commit.clone(),
                    timed: true,
                }
            }
            (None, Some(Pairing::Paired(_))) if !m.samples.reference.is_empty() => {
                compared.push(i);
                // Filled in once the gate has decided.
                GateNote::RemeasureFailed
            }
            (None, Some(Pairing::Changed(why))) => GateNote::Changed { why: why.clone() },
            _ => GateNote::New,
        };
        *judged = Some(Box::new(Judged {
            baseline_counters: None,
            same_trial: None,
            baseline_footprint: m.base_footprint.clone(),
            baseline_samples: m.samples.reference.clone(),
            gate,
            verdict: None,
            remeasure_failure: None,
            evidence: None,
            old_code: t.code.base.clone(),
        }));
    }
    let max_slowdown = |i: usize| run.suites[plan[i].suite].bench.max_slowdown;
    let (verdicts, noise) = identical_pairs(trials, &pairs, max_slowdown);
    for (&i, v) in pairs.iter().zip(verdicts) {
        if let Some((_, j)) = trials[i].judged_mut() {
            j.verdict = Some(v);
        }
    }
    if compared.is_empty() {
        return noise;
    }
    let how = Strategy {
        input: &|i, m| input(&m.samples, max_slowdown(i)),
        spec: &|i| run.spec(&plan[i], pairing[i].as_ref(), REMEASURE_EFFORT, None),
        confirm: gate::Confirm::Regressions,
    };
    let decisions = decide(run, plan, trials, &compared, &how);
    for (&i, decision) in compared.iter().zip(decisions) {
        let (m, j) = trials[i].judged_mut().expect("judged above");
        j.decided(decision, |d| GateNote::Paired {
            rev: base.rev.clone(),
            commit: base.commit.clone(),
            remeasured: d.remeasured,
            family: d.family,
        });
        // A re-measured (or confirmed) trial: its base footprint and samples are its latest run's.
        j.baseline_footprint = m.base_footprint.clone();
        j.baseline_samples = m.samples.reference.clone();
    }
    noise
}
