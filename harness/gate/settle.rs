//! `settle`: the gate's one policy over a run — decide every comparable trial together, measure
//! the inconclusive ones once more with [`REMEASURE_EFFORT`] times the samples, and decide again,
//! all together. The run, `calibrate` and the tests all go through here.

use super::semantics::Verdict;
use super::verdict::{decide, GateInput, TrialVerdict};

/// How much harder an inconclusive trial is measured the second time (samples and time cap
/// multiplied, precision target divided).
pub const REMEASURE_EFFORT: u32 = 4;

/// The gate's final word on one trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The verdict.
    pub verdict: TrialVerdict,
    /// Whether it comes from a second measurement.
    pub remeasured: bool,
    /// How many comparisons formed the Benjamini–Hochberg family it was decided in.
    pub family: usize,
}

/// Decides `inputs` together. With `remeasure` (`None` when blessing: nothing is judged twice),
/// each inconclusive trial `k` is measured again through `remeasure(k)`, which returns its new
/// input or why it could not be measured; a trial whose re-measure fails leaves the family with
/// that reason, and the others are decided again without it.
pub fn settle<E>(
    inputs: Vec<GateInput>,
    remeasure: Option<&mut dyn FnMut(usize) -> Result<GateInput, E>>,
) -> Vec<Result<Decision, E>> {
    let first = decide(&inputs);
    let again: Vec<usize> = (0..first.len())
        .filter(|&k| first[k].verdict == Verdict::Inconclusive)
        .collect();
    let decided = |verdicts: &[TrialVerdict], remeasured: &[bool], family| {
        verdicts
            .iter()
            .zip(remeasured)
            .map(|(v, r)| Decision {
                verdict: *v,
                remeasured: *r,
                family,
            })
            .collect::<Vec<_>>()
    };
    let Some(remeasure) = remeasure.filter(|_| !again.is_empty()) else {
        let n = first.len();
        return decided(&first, &vec![false; n], n)
            .into_iter()
            .map(Ok)
            .collect();
    };
    let mut inputs: Vec<Option<GateInput>> = inputs.into_iter().map(Some).collect();
    let mut failed: Vec<Option<E>> = inputs.iter().map(|_| None).collect();
    let mut remeasured = vec![false; inputs.len()];
    for &k in &again {
        match remeasure(k) {
            Ok(input) => {
                inputs[k] = Some(input);
                remeasured[k] = true;
            }
            Err(e) => {
                inputs[k] = None;
                failed[k] = Some(e);
            }
        }
    }
    let keep: Vec<usize> = (0..inputs.len()).filter(|&k| inputs[k].is_some()).collect();
    let family: Vec<GateInput> = keep.iter().filter_map(|&k| inputs[k].clone()).collect();
    let verdicts = decide(&family);
    let mut out: Vec<Option<Result<Decision, E>>> =
        failed.into_iter().map(|f| f.map(Err)).collect();
    for (&k, v) in keep.iter().zip(verdicts) {
        out[k] = Some(Ok(Decision {
            verdict: v,
            remeasured: remeasured[k],
            family: keep.len(),
        }));
    }
    out.into_iter()
        .map(|d| d.expect("every trial is decided or failed"))
        .collect()
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
        let out = settle::<()>(vec![input(1e-5, 1e-5, 16), noisy(16, 1.04)], None);
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
        let out = settle(
            vec![input(1e-5, 1e-5, 16), noisy(16, 1.04)],
            Some(&mut again),
        );
        assert_eq!(asked, [1], "only the inconclusive trial is measured again");
        let d = out[1].as_ref().unwrap();
        assert_eq!(d.verdict.verdict, Verdict::Regressed);
        assert!(d.remeasured);
        assert!(!out[0].as_ref().unwrap().remeasured);
    }

    #[test]
    fn a_failed_remeasure_leaves_the_family_with_its_reason() {
        let mut again = |_: usize| -> Result<GateInput, &str> { Err("timed out") };
        let out = settle(
            vec![
                input(1e-5, 1e-5, 16),
                noisy(16, 1.04),
                input(1e-5, 1.2e-5, 16),
            ],
            Some(&mut again),
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

    /// One gate decision as a run makes it, through the run's own policy ([`settle`]).
    fn gate(rng: &mut ChaCha8Rng, n: usize, shift: f64, max_slowdown: f64) -> Verdict {
        let old = samples(rng, n, 1.0);
        let input = GateInput {
            old_times: old.clone(),
            new_times: samples(rng, n, shift),
            speedups: None,
            max_slowdown,
            paired: None,
        };
        let mut again = |_: usize| -> Result<GateInput, ()> {
            Ok(GateInput {
                old_times: old.clone(),
                new_times: samples(rng, REMEASURE_EFFORT as usize * n, shift),
                speedups: None,
                max_slowdown,
                paired: None,
            })
        };
        settle(vec![input], Some(&mut again))[0]
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
}
