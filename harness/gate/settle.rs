//! `settle`: the gate's one policy over a run — decide every comparable trial together, measure
//! the inconclusive ones once more with [`REMEASURE_EFFORT`] times the samples and decide again,
//! all together; then measure each time change once more in a fresh worker process, which
//! decides it alone ([`Confirm`]). The run (stored and paired), `calibrate`, `bisect` and the
//! tests all go through here, so the rates calibration publishes are the real gate's.

use super::semantics::Verdict;
use super::verdict::{decide, GateInput, TrialVerdict};

/// How much harder an inconclusive trial is measured the second time (samples and time cap
/// multiplied, precision target divided).
pub const REMEASURE_EFFORT: u32 = 4;

/// Which first verdicts a fresh measurement must confirm before they stand — the one place
/// stored and paired gating differ in policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confirm {
    /// Stored baselines: every time change, either way (a change of the machine since the
    /// baseline persists in a new process; one of a process's timing mode does not).
    Changes,
    /// Paired: regressions only (the machine cancels in the per-round ratios).
    Regressions,
}

impl Confirm {
    /// Whether `verdict` must be confirmed.
    fn wants(self, verdict: Verdict) -> bool {
        match self {
            Confirm::Changes => verdict.changed(),
            Confirm::Regressions => verdict == Verdict::Regressed,
        }
    }
}

/// How the gate gets more evidence of trial `k` of its family.
pub trait Measure<E> {
    /// Measures an inconclusive trial again with [`REMEASURE_EFFORT`] times the samples: its
    /// new input, or why it could not be measured.
    fn remeasure(&mut self, k: usize) -> Result<GateInput, E>;
    /// Measures a time change (`first`: its verdict so far) once more in a fresh worker
    /// process: its new input, or `None` when it could not be measured (the first verdict then
    /// stands).
    fn confirm(&mut self, k: usize, first: Verdict) -> Option<GateInput>;
}

/// The gate's final word on one trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The verdict.
    pub verdict: TrialVerdict,
    /// Whether it comes from a second measurement.
    pub remeasured: bool,
    /// Whether a fresh worker's measurement confirmed (or overturned) a time change: the
    /// verdict is that measurement's, decided alone.
    pub confirmed: bool,
    /// How many comparisons formed the Benjamini–Hochberg family it was decided in.
    pub family: usize,
}

/// Decides `inputs` together. With `measure` (`None` when blessing: nothing is judged twice),
/// each inconclusive trial `k` is measured again (`Measure::remeasure`); a trial whose
/// re-measure fails leaves the family with that reason, and the others are decided again
/// without it. Then each verdict `confirm` names is measured once more in a fresh worker
/// (`Measure::confirm`) and decided alone: a change that does not persist is not one.
pub fn settle<E>(
    inputs: Vec<GateInput>,
    measure: Option<&mut dyn Measure<E>>,
    confirm: Confirm,
) -> Vec<Result<Decision, E>> {
    let first = decide(&inputs);
    let Some(measure) = measure else {
        let family = first.len();
        return first
            .into_iter()
            .map(|verdict| Ok(decision(verdict, false, family)))
            .collect();
    };
    let mut inputs: Vec<Option<GateInput>> = inputs.into_iter().map(Some).collect();
    let mut out: Vec<Option<Result<Decision, E>>> = inputs.iter().map(|_| None).collect();
    let mut remeasured = vec![false; inputs.len()];
    for k in (0..first.len()).filter(|&k| first[k].verdict == Verdict::Inconclusive) {
        match measure.remeasure(k) {
            Ok(input) => (inputs[k], remeasured[k]) = (Some(input), true),
            Err(e) => (inputs[k], out[k]) = (None, Some(Err(e))),
        }
    }
    let keep: Vec<usize> = (0..inputs.len()).filter(|&k| inputs[k].is_some()).collect();
    let again = remeasured.contains(&true) || keep.len() < first.len();
    let kept = || inputs.iter().flatten().cloned().collect::<Vec<_>>();
    let verdicts = if again { decide(&kept()) } else { first };
    for (&k, verdict) in keep.iter().zip(verdicts) {
        let mut d = decision(verdict, remeasured[k], keep.len());
        if confirm.wants(verdict.verdict) {
            if let Some(input) = measure.confirm(k, verdict.verdict) {
                d.verdict = decide(&[input])[0];
                d.confirmed = true;
            }
        }
        out[k] = Some(Ok(d));
    }
    out.into_iter()
        .map(|d| d.expect("every trial is decided or failed"))
        .collect()
}

/// What the gate saw of one trial of a shard — its first measurement's input, and those of the
/// re-measure and fresh-worker confirmation the shard made — for `merge` to decide the whole
/// run as one family ([`settle_again`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    /// The first measurement's input.
    pub first: GateInput,
    /// The re-measure's, when the shard made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remeasured: Option<GateInput>,
    /// The confirmation's, when the shard made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<GateInput>,
    /// Which verdicts the run confirms (stored or paired).
    pub confirm: Confirm,
    /// What fails the run.
    pub strict: super::Strictness,
    /// Whether `merge` has decided the trial with every shard's (until then, its verdict is
    /// its shard's family's alone, and deferred).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
}

/// A [`Measure`] that keeps every input `inner` gave: the evidence a shard records.
pub struct Recording<'m, E> {
    inner: &'m mut dyn Measure<E>,
    /// Per trial of the family: its re-measure's and its confirmation's inputs.
    pub seen: Vec<[Option<GateInput>; 2]>,
}

impl<'m, E> Recording<'m, E> {
    /// Records what `inner` measures for a family of `len` trials.
    pub fn new(inner: &'m mut dyn Measure<E>, len: usize) -> Self {
        Recording {
            inner,
            seen: vec![[None, None]; len],
        }
    }
}

impl<E> Measure<E> for Recording<'_, E> {
    fn remeasure(&mut self, k: usize) -> Result<GateInput, E> {
        let input = self.inner.remeasure(k)?;
        self.seen[k][0] = Some(input.clone());
        Ok(input)
    }
    fn confirm(&mut self, k: usize, first: Verdict) -> Option<GateInput> {
        let input = self.inner.confirm(k, first)?;
        self.seen[k][1] = Some(input.clone());
        Some(input)
    }
}

/// Decides again, as one family, trials whose evidence shards recorded: the first measurements
/// together, the re-measures and confirmations the shards made used as made. A trial whose
/// decision here needs a re-measure or a confirmation its shard did not make stays
/// `inconclusive` (`needs` says so), never decided without it.
pub fn settle_again(evidence: &[&Evidence]) -> Vec<(Decision, bool)> {
    let Some(confirm) = evidence.first().map(|e| e.confirm) else {
        return Vec::new();
    };
    let first = decide(&evidence.iter().map(|e| e.first.clone()).collect::<Vec<_>>());
    let mut recorded = Measures(
        |k: usize| evidence[k].remeasured.clone().ok_or(k),
        |k: usize, _| evidence[k].confirmed.clone(),
    );
    let settled = settle(
        evidence.iter().map(|e| e.first.clone()).collect(),
        Some(&mut recorded),
        confirm,
    );
    settled
        .into_iter()
        .zip(first)
        .map(|(d, first)| match d {
            Ok(d) if confirm.wants(d.verdict.verdict) && !d.confirmed => {
                let verdict = TrialVerdict {
                    verdict: Verdict::Inconclusive,
                    ..d.verdict
                };
                (Decision { verdict, ..d }, true)
            }
            Ok(d) => (d, false),
            Err(_) => (decision(first, false, evidence.len()), true),
        })
        .collect()
}

/// A decision not confirmed.
fn decision(verdict: TrialVerdict, remeasured: bool, family: usize) -> Decision {
    Decision {
        verdict,
        remeasured,
        confirmed: false,
        family,
    }
}

/// A [`Measure`] from two closures.
pub struct Measures<R, C>(pub R, pub C);

impl<E, R, C> Measure<E> for Measures<R, C>
where
    R: FnMut(usize) -> Result<GateInput, E>,
    C: FnMut(usize, Verdict) -> Option<GateInput>,
{
    fn remeasure(&mut self, k: usize) -> Result<GateInput, E> {
        (self.0)(k)
    }
    fn confirm(&mut self, k: usize, first: Verdict) -> Option<GateInput> {
        (self.1)(k, first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::verdict::tests::{samples, N};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn input(old: f64, new: f64, n: usize) -> GateInput {
        // A small deterministic spread so the tests are not degenerate.
        let spread = |v: f64| (0..n).map(|i| v * (1.0 + 0.002 * (i % 5) as f64)).collect();
        GateInput {
            old_times: spread(old),
            new_times: spread(new),
            speedups: None,
            max_slowdown: 0.03,
            paired: None,
        }
    }

    /// Inconclusive: a 4% shift with wide noise.
    fn noisy(n: usize, shift: f64) -> GateInput {
        let wobble = |i: usize| 1.0 + 0.06 * ((i * 7 % 11) as f64 / 10.0 - 0.5);
        GateInput {
            old_times: (0..n).map(|i| 1e-5 * wobble(i)).collect(),
            new_times: (0..n).map(|i| 1e-5 * shift * wobble(i + 3)).collect(),
            speedups: None,
            max_slowdown: 0.03,
            paired: None,
        }
    }

    #[test]
    fn without_remeasure_it_is_one_decision() {
        let out = settle::<()>(
            vec![input(1e-5, 1e-5, 16), noisy(16, 1.04)],
            None,
            Confirm::Changes,
        );
        assert_eq!(out[0].unwrap().verdict.verdict, Verdict::Unchanged);
        assert_eq!(out[1].unwrap().verdict.verdict, Verdict::Inconclusive);
        assert!(out
            .iter()
            .all(|d| !d.unwrap().remeasured && d.unwrap().family == 2));
    }

    #[test]
    fn a_remeasure_settles_an_inconclusive_trial() {
        let mut asked = Vec::new();
        let mut again = |k: usize| -> Result<GateInput, &str> {
            asked.push(k);
            Ok(input(1e-5, 1.10e-5, 16 * REMEASURE_EFFORT as usize))
        };
        let mut measure = Measures(&mut again, |_, _| None);
        let out = settle(
            vec![input(1e-5, 1e-5, 16), noisy(16, 1.04)],
            Some(&mut measure),
            Confirm::Changes,
        );
        assert_eq!(asked, [1], "only the inconclusive trial is measured again");
        let d = out[1].as_ref().unwrap();
        assert_eq!(d.verdict.verdict, Verdict::Regressed);
        assert!(d.remeasured);
        assert!(!out[0].as_ref().unwrap().remeasured);
    }

    #[test]
    fn a_failed_remeasure_leaves_the_family_with_its_reason() {
        let again = |_: usize| -> Result<GateInput, &str> { Err("timed out") };
        let out = settle(
            vec![
                input(1e-5, 1e-5, 16),
                noisy(16, 1.04),
                input(1e-5, 1.2e-5, 16),
            ],
            Some(&mut Measures(again, |_, _| None)),
            Confirm::Changes,
        );
        assert_eq!(*out[1].as_ref().unwrap_err(), "timed out");
        for k in [0, 2] {
            assert_eq!(
                out[k].as_ref().unwrap().family,
                2,
                "decided without trial 1"
            );
        }
        assert_eq!(out[2].as_ref().unwrap().verdict.verdict, Verdict::Regressed);
    }

    #[test]
    fn a_change_stands_only_when_a_fresh_measurement_confirms_it() {
        let confirmed = std::cell::RefCell::new(Vec::new());
        let fresh = |k: usize, _| {
            confirmed.borrow_mut().push(k);
            // Trial 1's change does not persist; trial 2's does.
            Some(match k {
                1 => input(1e-5, 1e-5, 64),
                _ => input(1e-5, 0.8e-5, 64),
            })
        };
        let never = |_: usize| -> Result<GateInput, ()> { unreachable!("nothing inconclusive") };
        let inputs = vec![
            input(1e-5, 1e-5, 16),
            input(1e-5, 1.2e-5, 16),
            input(1e-5, 0.8e-5, 16),
        ];
        let out = settle(
            inputs.clone(),
            Some(&mut Measures(never, &fresh)),
            Confirm::Changes,
        );
        assert_eq!(
            *confirmed.borrow(),
            [1, 2],
            "stored: every change, either way"
        );
        let v = |k: usize| out[k].as_ref().unwrap();
        assert_eq!(v(1).verdict.verdict, Verdict::Unchanged, "did not persist");
        assert!(v(1).confirmed && v(2).confirmed && !v(0).confirmed);
        assert_eq!(v(2).verdict.verdict, Verdict::Improved);
        confirmed.borrow_mut().clear();
        let out = settle(
            inputs,
            Some(&mut Measures(never, &fresh)),
            Confirm::Regressions,
        );
        assert_eq!(*confirmed.borrow(), [1], "paired: regressions only");
        assert_eq!(out[2].as_ref().unwrap().verdict.verdict, Verdict::Improved);
    }

    /// One gate decision as a run makes it, through the run's own policy ([`settle`]): the
    /// re-measure and the confirmation each with [`REMEASURE_EFFORT`] times the samples.
    fn gate(rng: &mut ChaCha8Rng, n: usize, shift: f64, max_slowdown: f64) -> Verdict {
        let old = samples(rng, n, 1.0);
        let input = GateInput {
            old_times: old.clone(),
            new_times: samples(rng, n, shift),
            speedups: None,
            max_slowdown,
            paired: None,
        };
        let rng = std::cell::RefCell::new(rng);
        let again = || GateInput {
            old_times: old.clone(),
            new_times: samples(&mut rng.borrow_mut(), REMEASURE_EFFORT as usize * n, shift),
            speedups: None,
            max_slowdown,
            paired: None,
        };
        let mut measure = Measures(|_| Ok::<_, ()>(again()), |_, _| Some(again()));
        settle(vec![input], Some(&mut measure), Confirm::Changes)[0]
            .expect("re-measures succeed here")
            .verdict
            .verdict
    }

    #[test]
    fn a_a_false_regressions_at_most_one_percent() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let regressed = (0..1000)
            .filter(|_| gate(&mut rng, N, 1.0, 0.03) == Verdict::Regressed)
            .count();
        eprintln!("A/A, max_slowdown 3%, n = {N}: {regressed} of 1000 pairs regressed");
        assert!(regressed <= 10, "{regressed} of 1000 A/A pairs regressed");
    }

    #[test]
    fn twice_max_slowdown_is_caught_in_95_percent() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for max_slowdown in [0.02, 0.03, 0.05] {
            let caught = (0..1000)
                .filter(|_| {
                    gate(&mut rng, N, 1.0 + 2.0 * max_slowdown, max_slowdown) == Verdict::Regressed
                })
                .count();
            eprintln!(
                "slowdown {:.0}%, max_slowdown {:.0}%, n = {N}: caught {caught} of 1000",
                200.0 * max_slowdown,
                100.0 * max_slowdown
            );
            assert!(
                caught >= 950,
                "max_slowdown {max_slowdown}: caught {caught} of 1000"
            );
        }
    }

    #[test]
    fn improvements_are_reported_not_failed() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let improved = (0..200)
            .filter(|_| gate(&mut rng, N, 0.85, 0.03) == Verdict::Improved)
            .count();
        assert!(improved >= 190, "{improved}");
    }

    #[test]
    fn merged_shards_use_what_each_shard_measured_and_never_decide_without_it() {
        let evidence = |first, remeasured, confirmed| Evidence {
            first,
            remeasured,
            confirmed,
            confirm: Confirm::Changes,
            strict: Default::default(),
            merged: false,
        };
        let slow = || input(1e-5, 1.10e-5, 16);
        let trials = [
            evidence(input(1e-5, 1e-5, 16), None, None),
            evidence(noisy(16, 1.04), Some(input(1e-5, 1e-5, 64)), None),
            evidence(slow(), None, Some(slow())),
            evidence(noisy(16, 1.04), None, None),
            evidence(slow(), None, None),
        ];
        let out = settle_again(&trials.iter().collect::<Vec<_>>());
        let got: Vec<(Verdict, bool, bool)> = out
            .iter()
            .map(|(d, needs)| (d.verdict.verdict, d.remeasured, *needs))
            .collect();
        assert_eq!(
            got,
            [
                (Verdict::Unchanged, false, false),
                (Verdict::Unchanged, true, false),
                (Verdict::Regressed, false, false),
                (Verdict::Inconclusive, false, true),
                (Verdict::Inconclusive, false, true),
            ],
            "the shard's re-measure and confirmation used; without them, inconclusive and said"
        );
        assert!(out[2].0.confirmed);
        assert!(out.iter().all(|(d, _)| d.family == 5 || d.family == 4));
    }
}
