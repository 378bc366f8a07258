//! `Paired`: how paired differences are centred — the Wilcoxon signed-rank test and the
//! Hodges–Lehmann estimate (the median of Walsh averages) with its distribution-free interval.
//!
//! kernelgate applies these to per-round log-ratios of a candidate's time over its base's,
//! timed interleaved in one process: whatever the machine does to both in a round cancels.
//! The test is SciPy's `wilcoxon(d, zero_method="wilcox", correction=True, method="approx")`
//! (zero differences dropped; normal approximation with tie and continuity corrections), checked
//! against its values.

use super::twosample::{normal_quantile, ranked_interval, standard_normal, Shift};
use statrs::distribution::ContinuousCDF;

/// The two-sided p-value of the Wilcoxon signed-rank test that `d` is centred on zero.
pub fn wilcoxon(d: &[f64]) -> f64 {
    let nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len() as f64;
    if nz.is_empty() {
        return 1.0;
    }
    let abs: Vec<f64> = nz.iter().map(|x| x.abs()).collect();
    let (ranks, ties) = super::twosample::ranks(&abs);
    let w_plus: f64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let mean = n * (n + 1.0) / 4.0;
    let var = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0 - ties / 48.0;
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((w_plus - mean).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * standard_normal().sf(z)).min(1.0)
}

/// The Hodges–Lehmann centre of `d` (the median of the Walsh averages `(d_i + d_j) / 2`,
/// `i ≤ j`) and the interval at `confidence` that inverts the signed-rank test (`d` non-empty).
pub fn centre(d: &[f64], confidence: f64) -> Shift {
    let walsh = (0..d.len()).flat_map(|i| d[i..].iter().map(move |b| (d[i] + b) / 2.0));
    let n = d.len() as f64;
    let z = normal_quantile(confidence);
    let c = (n * (n + 1.0) / 4.0 - z * (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt()).floor();
    ranked_interval(walsh.collect(), c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
    }

    #[test]
    fn wilcoxon_matches_scipy() {
        // scipy.stats.wilcoxon(d, zero_method="wilcox", correction=True, method="approx").pvalue
        for (d, p) in CASES {
            let got = wilcoxon(d);
            assert!(close(got, *p), "{d:?}: {got} vs SciPy {p}");
        }
    }

    #[test]
    fn the_centre_of_a_shift_is_found_and_covered() {
        let d: Vec<f64> = (0..40)
            .map(|i| 0.02 + 0.004 * ((i * 7 % 11) as f64 - 5.0))
            .collect();
        let c = centre(&d, 0.95);
        assert!((c.estimate - 0.02).abs() < 0.002, "{c:?}");
        assert!(c.low < 0.02 && c.high > 0.02, "{c:?}");
        assert!(c.high - c.low < 0.01, "{c:?}");
        let one = centre(&[0.5], 0.95);
        assert_eq!((one.estimate, one.low, one.high), (0.5, 0.5, 0.5));
    }

    include!("paired_cases_tests.rs");
}
