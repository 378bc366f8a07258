//! `Summary`: medians and their distribution-free confidence intervals. Pure mathematics over
//! samples: nothing here knows about kernels, devices or files.
//!
//! The interval of a median is the order-statistic interval: with `n` samples, the ranks
//! `l` and `n + 1 - l` where `l` is the largest rank with `P(Binomial(n, 1/2) < l) <= α/2`.
//! It assumes only that samples are independent draws from one distribution: no normality,
//! which GPU timings (skewed, with a long tail of slow outliers) never have.

pub mod changepoint;
pub mod paired;
pub mod twosample;

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF};

/// Confidence level of every interval kernelgate reports.
pub const CONFIDENCE: f64 = 0.95;

/// The median of a sample set with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// The sample median.
    pub median: f64,
    /// Lower end of the median's 95% interval.
    pub low: f64,
    /// Upper end of the median's 95% interval.
    pub high: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

impl Summary {
    /// Summarizes `samples` (any order). `None` when empty or when a sample is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let (lo, hi) = median_interval_ranks(n, CONFIDENCE);
        Some(Summary {
            n,
            median: median_sorted(&sorted),
            low: sorted[lo - 1],
            high: sorted[hi - 1],
            min: sorted[0],
            max: sorted[n - 1],
        })
    }

    /// Half the interval's width relative to the median: the precision reached.
    pub fn relative_half_width(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.high - self.low) / 2.0 / self.median.abs()
    }
}

/// The median of sorted values (mean of the middle two for even counts).
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// 1-based ranks `(l, u)` of the order statistics that bound the median with at least
/// `confidence` coverage. For samples too few to reach it (n < 6 at 95%), the extremes.
pub fn median_interval_ranks(n: usize, confidence: f64) -> (usize, usize) {
    assert!(n > 0, "no samples");
    let alpha = 1.0 - confidence;
    let binom = Binomial::new(0.5, n as u64).expect("p = 0.5 is valid");
    // Coverage of [x_(l), x_(n+1-l)] is 1 - 2 P(B <= l - 1); take the largest l keeping it.
    let mut l = 1;
    while l < n.div_ceil(2) && 2.0 * binom.cdf(l as u64) <= alpha {
        l += 1;
    }
    (l, n + 1 - l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_match_published_tables() {
        // Conover, Practical Nonparametric Statistics, table A3 / the exact binomial:
        // n = 10 -> (2, 9) with 97.9% coverage; n = 20 -> (6, 15), 95.9%;
        // n = 100 -> (40, 61), 96.5%.
        assert_eq!(median_interval_ranks(10, 0.95), (2, 9));
        assert_eq!(median_interval_ranks(20, 0.95), (6, 15));
        assert_eq!(median_interval_ranks(100, 0.95), (40, 61));
        assert_eq!(median_interval_ranks(5, 0.95), (1, 5));
        assert_eq!(median_interval_ranks(1, 0.95), (1, 1));
    }

    #[test]
    fn coverage_is_at_least_the_confidence() {
        for n in 6..300 {
            let (l, u) = median_interval_ranks(n, 0.95);
            let b = Binomial::new(0.5, n as u64).unwrap();
            let coverage = 1.0 - 2.0 * b.cdf(l as u64 - 1);
            assert!(coverage >= 0.95, "n={n} l={l} coverage={coverage}");
            assert_eq!(u, n + 1 - l);
            // and the next rank in would fall below it: the interval is the tightest.
            let tighter = 1.0 - 2.0 * b.cdf(l as u64);
            assert!(tighter < 0.95 || l + 1 > n.div_ceil(2), "n={n}");
        }
    }

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (3.0, 1.0, 5.0, 5));
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        let samples: Vec<f64> = (1..=20).map(f64::from).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!((s.low, s.high), (6.0, 15.0));
        assert!((s.relative_half_width() - 4.5 / 10.5).abs() < 1e-12);
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn empirical_coverage_on_skewed_data() {
        // Log-normal samples (the shape of GPU timings): the interval holds the true median
        // (1.0) in at least ~95% of 2,000 draws of 30 samples.
        use rand::SeedableRng;
        use rand_distr::{Distribution, LogNormal};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let dist = LogNormal::new(0.0, 0.05).unwrap();
        let mut covered = 0;
        for _ in 0..2000 {
            let xs: Vec<f64> = (0..30).map(|_| dist.sample(&mut rng)).collect();
            let s = Summary::of(&xs).unwrap();
            covered += (s.low <= 1.0 && 1.0 <= s.high) as usize;
        }
        assert!(covered >= 1880, "covered {covered} of 2000");
    }
}
