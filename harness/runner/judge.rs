//! `judge`: once every trial has run, each measured trial is matched with its stored baseline
//! (same device fingerprint, same regime), and the gate's policy ([`gate::settle`]) decides
//! them all together, re-measuring inconclusive ones and confirming changes through the
//! executor ([`decide`], which paired mode shares).

use super::trial::{Judged, State, Trial};
use super::{Measured, Outcome, Planned, Runner, TrialSpec};
use crate::baseline::{BaselineStore, Entry, Origin};
use crate::config::Mode;
use crate::failure::TrialFailure;
use crate::gate::{self, Confirm, GateInput, REMEASURE_EFFORT};
use crate::measure::Samples;
use crate::report::results::{BaselineRef, GateNote};

/// A trial whose SM clock was throttled, or whose GPU another process used, in too many rounds
/// (or that has no samples) is not judged — never a regression; its note says how many rounds
/// were dropped and who else used the GPU.
pub(super) fn unreliable(samples: &Samples) -> Option<GateNote> {
    let clocks = &samples.clocks;
    (clocks.unreliable || samples.kernel.is_empty()).then(|| GateNote::Unreliable {
        discarded: clocks.discarded_rounds,
        rounds: clocks.discarded_rounds + clocks.contended_rounds + clocks.kept_rounds,
        contended: clocks.contended_rounds,
        others: clocks.others.clone(),
    })
}

/// The gate's input for new samples against a stored entry: its pooled samples, with
/// `max_slowdown` widened by the spread between its runs ([`gate::with_spread`]).
fn input(samples: &Samples, old: &Entry, max_slowdown: f64) -> GateInput {
    // No reference (the reference's own trial): no ratios, so no speedup compared.
    GateInput::stored(
        (old.time_samples.clone(), old.speedup_samples.clone()),
        old.spread(),
        (samples.kernel.clone(), samples.ratios()),
        max_slowdown,
    )
}

/// How stored and paired judging differ, for [`decide`]: the gate's input of a trial's
/// measurement, the spec that measures it again, and which changes are confirmed.
pub(super) struct Strategy<'s> {
    /// The gate's input of trial `i` (plan index) measured as `m`.
    pub input: &'s dyn Fn(usize, &Measured) -> GateInput,
    /// What measures trial `i` again, at [`REMEASURE_EFFORT`].
    pub spec: &'s dyn Fn(usize) -> TrialSpec,
    /// Which verdicts a fresh worker confirms.
    pub confirm: Confirm,
}

/// Decides the measured trials at plan indices `compared` together, through the gate's one
/// policy ([`gate::settle`]): when gating, an inconclusive trial is measured again and a change
/// confirmed in a fresh worker, each new measurement replacing the trial's outcome; when
/// blessing, nothing is measured twice. One decision per compared trial, or why its re-measure
/// failed.
pub(super) fn decide(
    run: &Runner,
    plan: &[Planned],
    trials: &mut [Trial],
    compared: &[usize],
    how: &Strategy,
) -> Vec<Result<gate::Decision, TrialFailure>> {
    let measured = |i: usize| trials[i].measured().expect("compared trials are measured");
    let inputs: Vec<GateInput> = compared
        .iter()
        .map(|&i| (how.input)(i, measured(i)))
        .collect();
    // A shard defers its verdicts: what the gate saw goes into its results, for `merge`.
    let shard = run.config.shard.is_some() && run.config.mode == Mode::Gate;
    let firsts: Vec<GateInput> = if shard { inputs.clone() } else { Vec::new() };
    let mut again = Again {
        run,
        plan,
        trials,
        compared,
        how,
    };
    let mut recording = gate::Recording::new(&mut again, compared.len());
    let measure: Option<&mut dyn gate::Measure<TrialFailure>> = match run.config.mode {
        Mode::Gate => Some(&mut recording),
        Mode::Bless => None,
    };
    let decisions = gate::settle(inputs, measure, how.confirm);
    if shard {
        let strict = run.config.strictness();
        for ((k, first), [remeasured, confirmed]) in
            firsts.into_iter().enumerate().zip(recording.seen)
        {
            if let Some((_, j)) = trials[compared[k]].judged_mut() {
                j.evidence = Some(Box::new(gate::Evidence {
                    first,
                    remeasured,
                    confirmed,
                    confirm: how.confirm,
                    strict,
                    merged: false,
                }));
            }
        }
    }
    decisions
}

/// The run's way to more evidence: trials measured again through the executor.
struct Again<'a, 'r> {
    run: &'a Runner<'r>,
    plan: &'a [Planned],
    trials: &'a mut [Trial],
    compared: &'a [usize],
    how: &'a Strategy<'a>,
}

impl Again<'_, '_> {
    /// Executes `spec` for trial `i` on slot 0: its measurement replaces the trial's outcome.
    fn execute(&mut self, i: usize, spec: &TrialSpec) -> Result<GateInput, TrialFailure> {
        match self.run.executor.execute(0, spec) {
            Outcome::Measured(m) => {
                let input = (self.how.input)(i, &m);
                self.trials[i].remeasured(m);
                Ok(input)
            }
            Outcome::Failed(f) => Err(f),
            Outcome::Ignored(reason) => Err(TrialFailure::Harness(format!(
                "the re-measure could not run: {reason}"
            ))),
            Outcome::Compiled(_) => Err(TrialFailure::Harness(
                "the re-measure returned a compile result".into(),
            )),
        }
    }
}

impl gate::Measure<TrialFailure> for Again<'_, '_> {
    fn remeasure(&mut self, k: usize) -> Result<GateInput, TrialFailure> {
        let i = self.compared[k];
        self.run.progress(&format!(
            "re-measuring {} ({REMEASURE_EFFORT}x the samples: inconclusive)",
            self.plan[i].name
        ));
        self.execute(i, &(self.how.spec)(i))
    }

    fn confirm(&mut self, k: usize, first: gate::Verdict) -> Option<GateInput> {
        let i = self.compared[k];
        self.run.progress(&format!(
            "confirming {} in a fresh worker ({first})",
            self.plan[i].name
        ));
        let spec = TrialSpec {
            fresh_worker: true,
            ..(self.how.spec)(i)
        };
        // The first verdict stands when the confirmation could not run.
        self.execute(i, &spec).ok()
    }
}

/// What the gate can say of a measured trial of `suite` before deciding: no baseline (and
/// where there is one), an unusable one, one of another regime — or `RemeasureFailed` as a
/// placeholder for a trial that is compared, filled in once the gate has decided.
fn note_before(
    store: &BaselineStore,
    suite: &str,
    baseline: Option<&Entry>,
    regime: crate::measure::Regime,
) -> GateNote {
    let elsewhere = match store.suite(suite).map(|s| (&s.file, &s.elsewhere)) {
        Some((Err(e), _)) => {
            let message = e.to_string();
            return GateNote::BaselineError { message };
        }
        Some((Ok(None), elsewhere)) => elsewhere.clone(),
        Some((Ok(Some(_)), _)) => match baseline {
            Some(old) if old.regime != regime => {
                return GateNote::OtherRegime { regime: old.regime }
            }
            Some(_) => return GateNote::RemeasureFailed,
            None => Vec::new(),
        },
        None => Vec::new(),
    };
    GateNote::NoBaseline {
        elsewhere,
        added: None,
    }
}

/// Judges every measured trial of `trials` (by plan index) against `store`; re-measured and
/// confirmed trials keep their latest measurement.
pub(super) fn judge(run: &Runner, plan: &[Planned], trials: &mut [Trial], store: &BaselineStore) {
    // (trial index, its baseline entry) of every trial compared, in plan order.
    let mut compared: Vec<(usize, Entry)> = Vec::new();
    for (i, trial) in plan.iter().enumerate() {
        let State::Measured(m, judged) = &mut trials[i].state else {
            continue;
        };
        let suite = &run.suites[trial.suite];
        let baseline = store.entry(&suite.name, &trial.name).cloned();
        let gate = unreliable(&m.samples).unwrap_or_else(|| {
            note_before(store, &suite.name, baseline.as_ref(), m.samples.regime)
        });
        if let (GateNote::RemeasureFailed, Some(old)) = (&gate, &baseline) {
            // Compared: the note is filled in once the gate has decided.
            compared.push((i, old.clone()));
        }
        *judged = Some(Box::new(Judged {
            baseline_counters: baseline.as_ref().and_then(Entry::stored_counters),
            same_trial: None,
            baseline_footprint: baseline.as_ref().and_then(|b| b.footprint.clone()),
            old_code: baseline.as_ref().and_then(|b| b.code.clone()),
            baseline_samples: baseline.map(|b| b.time_samples).unwrap_or_default(),
            gate,
            verdict: None,
            remeasure_failure: None,
            evidence: None,
        }));
    }
    if compared.is_empty() {
        return;
    }
    let max_slowdown = |i: usize| run.suites[plan[i].suite].bench.max_slowdown;
    let old = |i: usize| &compared.iter().find(|(j, _)| *j == i).expect("compared").1;
    let indices: Vec<usize> = compared.iter().map(|(i, _)| *i).collect();
    let how = Strategy {
        input: &|i, m| input(&m.samples, old(i), max_slowdown(i)),
        spec: &|i| run.spec(&plan[i], None, REMEASURE_EFFORT, Some(old(i).regime)),
        confirm: Confirm::Changes,
    };
    let decisions = decide(run, plan, trials, &indices, &how);
    let device = run.executor.device();
    for ((i, old), decision) in compared.iter().zip(decisions) {
        let path = store
            .suite(&run.suites[plan[*i].suite].name)
            .map(|s| s.path.display().to_string())
            .unwrap_or_default();
        let code = trials[*i].code.code.clone();
        let (m, j) = trials[*i]
            .judged_mut()
            .expect("a compared trial stays judged");
        let here = Origin::measured_on(device.as_ref(), m.ordinal);
        // A confirmed change of the baseline's own trial is attributed once counters are read.
        if let Ok(d) = &decision {
            j.same_trial = (d.confirmed && d.verdict.verdict.changed())
                .then(|| super::attribute::same_trial(old, m, code.as_ref()));
        }
        j.decided(decision, |d| GateNote::Compared {
            baseline: baseline_ref(old, path, &here),
            remeasured: d.remeasured,
            family: d.family,
        });
    }
}

/// How a trial's note names the baseline entry `old` (in the file at `path`) it was compared
/// with, measured `here`.
fn baseline_ref(old: &Entry, path: String, here: &Origin) -> BaselineRef {
    BaselineRef {
        path,
        median: old.time.median,
        speedup: old.speedup.map(|s| s.median),
        reference: old.reference.clone(),
        date: old.date.clone(),
        kernelgate: old.kernelgate.clone(),
        runs: old.runs.len().max(1),
        spread: old.spread(),
        other_gpus: old.other_gpus(here),
    }
}
