//! `decide`: whether a trial got slower than its stored baseline or base, decided with the
//! two-sample (or paired) tests of `stats` on log-times; the labels and what each means are
//! [`super::semantics`]'s.
//!
//! A quantity (a kernel's time, or its speedup over the reference) is compared as a *slowdown
//! factor* `s` = new time / old time (for speedups: old speedup / new speedup), estimated by
//! the Hodges–Lehmann shift of log-samples with its 95% Moses interval `[lo, hi]`, and tested
//! with Mann–Whitney; the p-values of every comparison in a run are adjusted together with
//! Benjamini–Hochberg. With `t = 1 + max_slowdown`:
//!
//! - **regressed**: significant (adjusted p < 0.05) *and* the whole interval above `t`;
//! - **improved**: significant and the whole interval below `1 / t`;
//! - **inconclusive**: otherwise, when the interval still reaches above `t` — the data cannot
//!   rule out a slowdown the suite cares about;
//! - **unchanged**: otherwise.
//!
//! The whole interval, not the point estimate, must clear `max_slowdown`: a regression fails
//! a merge, so it must be one we are 95% sure is larger than the smallest slowdown worth
//! failing for; the middle ground is `inconclusive` and measured again, never silently passed
//! as a pass or a failure.
//!
//! Against a stored baseline pooled from several runs (other processes, other hosts of the
//! same model), `max_slowdown` is widened by the runs' between-run spread factor `S` (the
//! largest run median over the smallest; 1 for one run): `t = (1 + max_slowdown) × S`, through
//! [`with_spread`]. A slowdown must exceed what moving between the recorded runs already
//! explains.
//!
//! A kernel other than the reference regresses only when its time *and* its speedup over the
//! reference regressed: a slowdown that hits the reference equally (a slower card of the
//! same model, clocks, temperature) is not the kernel's ([`super::semantics::combine`]). The
//! reference's own trial is judged by its time.

use super::semantics::{combine, Basis, Comparison};
use crate::stats::twosample::{benjamini_hochberg, mann_whitney, shift, Shift};
use serde::{Deserialize, Serialize};

/// Compares `old` with `new` samples of a quantity by their logs, each times `sign`: 1 where
/// larger is worse (times), −1 where smaller is worse (speedups).
fn comparison(old: &[f64], new: &[f64], sign: f64) -> Comparison {
    let logs = |v: &[f64]| v.iter().map(|v| sign * v.ln()).collect::<Vec<f64>>();
    let (x, y) = (logs(old), logs(new));
    from_logs(shift(&x, &y, 0.95), mann_whitney(&x, &y).p)
}

/// The comparison whose log-scale estimate and interval are `s`, with p-value `p`.
fn from_logs(s: Shift, p: f64) -> Comparison {
    Comparison {
        slowdown: s.estimate.exp(),
        low: s.low.exp(),
        high: s.high.exp(),
        p,
        p_adjusted: p,
    }
}

/// What the gate knows about one trial that has a comparable baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateInput {
    /// Baseline times, seconds.
    pub old_times: Vec<f64>,
    /// Current times.
    pub new_times: Vec<f64>,
    /// Baseline and current per-round speedups over the reference (not for the reference).
    pub speedups: Option<(Vec<f64>, Vec<f64>)>,
    /// The suite's `max_slowdown`.
    pub max_slowdown: f64,
    /// Paired mode: per-round ratios of the candidate's time over its base's, timed interleaved
    /// in one process. When set, the time comparison is the paired one (Wilcoxon signed-rank on
    /// log-ratios, Hodges–Lehmann centre) and `old_times`/`new_times` are not used.
    pub paired: Option<Vec<f64>>,
}

impl GateInput {
    /// A trial against stored runs (a stored baseline's, or a history's trailing runs): their
    /// pooled time and speedup samples, `max_slowdown` widened by the `spread` between their
    /// medians ([`with_spread`]); the speedup compared where both sides have one.
    pub fn stored(
        (old_times, old_speedups): (Vec<f64>, Vec<f64>),
        spread: f64,
        (new_times, new_speedups): (Vec<f64>, Vec<f64>),
        max_slowdown: f64,
    ) -> GateInput {
        let speedups = (!old_speedups.is_empty() && !new_speedups.is_empty())
            .then_some((old_speedups, new_speedups));
        GateInput {
            old_times,
            new_times,
            speedups,
            max_slowdown: with_spread(max_slowdown, spread),
            paired: None,
        }
    }
}

/// Compares a candidate with its base from per-round ratios candidate / base (larger is worse):
/// the slowdown factor is `exp` of the Hodges–Lehmann centre of the log-ratios, with its
/// interval, tested with the Wilcoxon signed-rank test.
pub fn compare_paired(ratios: &[f64]) -> Comparison {
    let d: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let c = crate::stats::paired::centre(&d, 0.95);
    from_logs(c, crate::stats::paired::wilcoxon(&d))
}

/// The gate's decision for one trial, with the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialVerdict {
    /// The decision.
    pub verdict: super::semantics::Verdict,
    /// The time comparison.
    pub time: Comparison,
    /// The speedup comparison, for kernels other than the reference.
    pub speedup: Option<Comparison>,
    /// Which of the two the verdict is about: the one every report prints beside its label
    /// ([`super::semantics`]; files written before it was recorded: the time).
    #[serde(default)]
    pub basis: Basis,
}

impl TrialVerdict {
    /// Which comparison is printed beside the label: [`TrialVerdict::basis`], unless the
    /// verdict is about no interval (`identical code`: an A/A pair's time is its evidence) or
    /// there is no speedup to show.
    pub fn shown_basis(&self) -> Basis {
        match (self.verdict.about(), self.basis, &self.speedup) {
            (Some(_), Basis::Speedup, Some(_)) => Basis::Speedup,
            _ => Basis::Time,
        }
    }

    /// The comparison printed beside its label ([`TrialVerdict::shown_basis`]).
    pub fn shown(&self) -> &Comparison {
        match (self.shown_basis(), &self.speedup) {
            (Basis::Speedup, Some(s)) => s,
            _ => &self.time,
        }
    }
}

/// Decides every trial of a run together: the p-values of all comparisons form one family
/// for Benjamini–Hochberg.
pub fn decide(inputs: &[GateInput]) -> Vec<TrialVerdict> {
    let mut comparisons: Vec<(Comparison, Option<Comparison>)> = inputs
        .iter()
        .map(|g| {
            let time = match &g.paired {
                Some(ratios) => compare_paired(ratios),
                None => comparison(&g.old_times, &g.new_times, 1.0),
            };
            let speedup = g
                .speedups
                .as_ref()
                .map(|(old, new)| comparison(old, new, -1.0));
            (time, speedup)
        })
        .collect();
    // Each trial's time, then its speedup where it has one.
    let family: Vec<f64> = (comparisons.iter())
        .flat_map(|(t, s)| std::iter::once(t.p).chain(s.map(|s| s.p)))
        .collect();
    let mut adjusted = benjamini_hochberg(&family).into_iter();
    for (t, s) in &mut comparisons {
        for c in std::iter::once(t).chain(s.as_mut()) {
            c.p_adjusted = adjusted.next().expect("one per p-value");
        }
    }
    comparisons
        .into_iter()
        .zip(inputs)
        .map(|((time, speedup), g)| {
            let (verdict, basis) = combine(
                time.verdict(g.max_slowdown),
                speedup.map(|s| s.verdict(g.max_slowdown)),
            );
            TrialVerdict {
                verdict,
                time,
                speedup,
                basis,
            }
        })
        .collect()
}

/// The `max_slowdown` to gate with against a baseline whose runs' medians spread by the factor
/// `spread` (1 for one run): `(1 + max_slowdown) × spread − 1`, so the interval must clear both
/// the suite's threshold and the between-run spread. A `spread` below 1 counts as 1.
pub fn with_spread(max_slowdown: f64, spread: f64) -> f64 {
    (1.0 + max_slowdown) * spread.max(1.0) - 1.0
}

/// Formats a slowdown factor as a signed percentage change: `+8.1%`, `-0.4%`.
pub fn percent(factor: f64) -> String {
    format!("{:+.1}%", (factor - 1.0) * 100.0)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::gate::semantics::Verdict;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, LogNormal};

    /// Realistic GPU timing noise: log-normal with σ = 1.5%, and 3% of samples slow outliers
    /// (+5% to +40%: a clock dip, a preemption).
    pub(crate) fn samples(rng: &mut ChaCha8Rng, n: usize, scale: f64) -> Vec<f64> {
        let body: LogNormal<f64> = LogNormal::new(0.0, 0.015).unwrap();
        (0..n)
            .map(|_| {
                let outlier = if rng.random::<f64>() < 0.03 {
                    1.0 + rng.random_range(0.05..0.40)
                } else {
                    1.0
                };
                10e-6 * scale * body.sample(rng) * outlier
            })
            .collect()
    }

    /// At the default sample count (10, rounded up to the timing batch of 8: 16).
    pub(crate) const N: usize = 16;

    #[test]
    fn the_spread_widens_the_threshold() {
        assert!((with_spread(0.03, 1.0) - 0.03).abs() < 1e-12);
        assert!(
            (with_spread(0.03, 0.5) - 0.03).abs() < 1e-12,
            "never narrower than max_slowdown"
        );
        assert!((with_spread(0.03, 1.04) - (1.03 * 1.04 - 1.0)).abs() < 1e-12);
        let c = Comparison {
            slowdown: 1.065,
            low: 1.05,
            high: 1.08,
            p: 0.001,
            p_adjusted: 0.001,
        };
        assert_eq!(c.verdict(0.03), Verdict::Regressed);
        assert_eq!(
            c.verdict(with_spread(0.03, 1.04)),
            Verdict::Inconclusive,
            "+5% is within 3% on top of a 4% spread between runs"
        );
    }

    #[test]
    fn p_values_are_corrected_across_the_run() {
        // One real regression among many unchanged trials stays significant; the unchanged
        // ones do not become regressions.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut inputs: Vec<GateInput> = (0..40)
            .map(|_| GateInput {
                old_times: samples(&mut rng, N, 1.0),
                new_times: samples(&mut rng, N, 1.0),
                speedups: None,
                max_slowdown: 0.03,
                paired: None,
            })
            .collect();
        inputs[7].new_times = samples(&mut rng, N, 1.10);
        let verdicts = decide(&inputs);
        assert_eq!(verdicts[7].verdict, Verdict::Regressed);
        assert!(verdicts[7].time.p_adjusted >= verdicts[7].time.p);
        let others = verdicts
            .iter()
            .enumerate()
            .filter(|(i, v)| *i != 7 && v.verdict == Verdict::Regressed)
            .count();
        assert_eq!(others, 0);
    }
}
