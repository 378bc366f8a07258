//! `Shift`: how two sample sets differ — the Mann–Whitney test, the Hodges–Lehmann shift with
//! its Moses interval, and Benjamini–Hochberg adjustment across many tests.
//!
//! kernelgate applies these to log-times, so a shift is a ratio: `exp(shift)` is "new / old".
//! Mann–Whitney needs no normality and shrugs off the slow outliers GPU timings have.
//! statrs's exact Mann–Whitney p-value is wrong for equal sample sizes (0.19), so this is our
//! own, the normal approximation with tie and continuity corrections — SciPy's
//! `mannwhitneyu(method="asymptotic", use_continuity=True)` — checked against its values.

use statrs::distribution::{ContinuousCDF, Normal};

/// Result of a two-sided Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the first sample (pairs where it is larger, ties counting half).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
}

pub(super) fn standard_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("a valid distribution")
}

/// Ranks (1-based, ties averaged) of `values`, and the tie correction term `Σ (t³ − t)`.
pub(crate) fn ranks(values: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (ranks, ties)
}

/// The two-sided Mann–Whitney U test of `x` against `y` (both non-empty).
pub fn mann_whitney(x: &[f64], y: &[f64]) -> MannWhitney {
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    let all: Vec<f64> = x.iter().chain(y).copied().collect();
    let (r, ties) = ranks(&all);
    let r1: f64 = r[..x.len()].iter().sum();
    let u = r1 - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let n = n1 + n2;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return MannWhitney { u, p: 1.0 };
    }
    // Continuity correction toward the mean, as SciPy does.
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    let p = (2.0 * standard_normal().sf(z)).min(1.0);
    MannWhitney { u, p }
}

/// A location (a shift `y − x`, or the centre of paired differences) with its confidence
/// interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// Hodges–Lehmann estimate: for a shift, the median of all pairwise differences `y_j − x_i`.
    pub estimate: f64,
    /// Lower end of the interval (for a shift, the Moses interval).
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// The Hodges–Lehmann shift of `y` relative to `x` and its distribution-free Moses interval at
/// `confidence` (the interval that inverts the Mann–Whitney test).
pub fn shift(x: &[f64], y: &[f64], confidence: f64) -> Shift {
    let d = y.iter().flat_map(|b| x.iter().map(move |a| b - a));
    let (n, m) = (x.len() as f64, y.len() as f64);
    let z = normal_quantile(confidence);
    let c = (n * m / 2.0 - z * (n * m * (n + m + 1.0) / 12.0).sqrt()).floor();
    ranked_interval(d.collect(), c)
}

/// The two-sided standard normal quantile of `confidence` (1.96 for 0.95).
pub(super) fn normal_quantile(confidence: f64) -> f64 {
    standard_normal().inverse_cdf(1.0 - (1.0 - confidence) / 2.0)
}

/// The median of `values` with the interval between their 1-based ranks `c` and `len + 1 − c`
/// once sorted; at least the extremes for tiny samples.
pub(super) fn ranked_interval(mut values: Vec<f64>, c: f64) -> Shift {
    values.sort_by(f64::total_cmp);
    let len = values.len();
    let k = (c.max(1.0) as usize).min(len.div_ceil(2));
    Shift {
        estimate: super::median_sorted(&values),
        low: values[k - 1],
        high: values[len - k],
    }
}

/// Benjamini–Hochberg adjusted p-values, in the order given: a test is a discovery at false
/// discovery rate `q` when its adjusted p-value is at most `q`.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, LogNormal};

    /// Nine significant digits: statrs's normal tail and SciPy's differ near 1e-11.
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        // scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic",
        // use_continuity=True), SciPy 1.17.1.
        let cases: [(&[f64], &[f64], f64, f64); 4] = [
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0],
                &[6.0, 7.0, 8.0, 9.0, 10.0],
                0.0,
                0.012185780355344813,
            ),
            (
                &[1.1, 2.2, 3.3, 4.4],
                &[0.5, 2.2, 5.5, 6.6, 7.7, 8.8],
                6.5,
                0.284_957_640_668_429_9,
            ),
            (
                &[3., 3., 3., 4., 5., 5., 6.],
                &[3., 4., 4., 4., 7., 8., 8., 9.],
                16.0,
                0.17452563681193045,
            ),
            (
                &[10.2, 10.4, 10.1, 10.3, 10.2, 10.5, 10.2, 10.3],
                &[10.6, 10.2, 10.9, 10.7, 10.8, 10.6, 10.5, 10.7],
                6.0,
                0.006_809_150_097_497_262,
            ),
        ];
        for (x, y, u, p) in cases {
            let r = mann_whitney(x, y);
            assert_eq!(r.u, u, "{x:?} {y:?}");
            assert!(close(r.p, p), "{x:?} {y:?}: {} vs {p}", r.p);
        }
        // Identical samples: no evidence at all.
        assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).p, 1.0);
    }

    #[test]
    fn benjamini_hochberg_matches_scipy() {
        // scipy.stats.false_discovery_control(p, method="bh"), SciPy 1.17.1.
        let adjusted = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.049]);
        let expected = [
            0.035,
            0.0686,
            0.0686,
            0.035,
            0.23333333333333336,
            0.5,
            0.0686,
        ];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!(close(*a, e), "{adjusted:?}");
        }
        let adjusted = benjamini_hochberg(&[0.9, 0.001, 0.5, 0.02, 0.02]);
        let expected = [0.9, 0.005, 0.625, 0.03333333333333333, 0.03333333333333333];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!(close(*a, e), "{adjusted:?}");
        }
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    #[test]
    fn shift_of_a_known_offset() {
        let x: Vec<f64> = (0..50).map(|i| i as f64).collect();
        let y: Vec<f64> = x.iter().map(|v| v + 10.0).collect();
        let s = shift(&x, &y, 0.95);
        assert_eq!(s.estimate, 10.0);
        assert!(s.low < 10.0 && s.high > 10.0);
        assert!(s.low > -5.0 && s.high < 25.0, "{s:?}");
    }

    #[test]
    fn moses_interval_covers_the_true_shift() {
        // 2,000 pairs of log-normal samples (σ = 2%, n = 20): the interval of the log-ratio
        // holds the true shift (ln 1.03) in about 95% of them.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let dist: LogNormal<f64> = LogNormal::new(0.0, 0.02).unwrap();
        let truth = 1.03f64.ln();
        let mut covered = 0;
        for _ in 0..2000 {
            let x: Vec<f64> = (0..20).map(|_| dist.sample(&mut rng).ln()).collect();
            let y: Vec<f64> = (0..20)
                .map(|_| dist.sample(&mut rng).ln() + truth)
                .collect();
            let s = shift(&x, &y, 0.95);
            covered += (s.low <= truth && truth <= s.high) as usize;
        }
        assert!(
            (1860..=1940).contains(&covered),
            "covered {covered} of 2000"
        );
    }

    #[test]
    fn mann_whitney_is_calibrated_under_the_null() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let dist = LogNormal::new(0.0, 0.05).unwrap();
        let mut rejected = 0;
        for _ in 0..2000 {
            let x: Vec<f64> = (0..16).map(|_| dist.sample(&mut rng)).collect();
            let y: Vec<f64> = (0..16).map(|_| dist.sample(&mut rng)).collect();
            rejected += (mann_whitney(&x, &y).p < 0.05) as usize;
        }
        assert!(
            (60..=130).contains(&rejected),
            "rejected {rejected} of 2000 at 5%"
        );
    }
}
