//! `ChangePoint`: level shifts in a series, by E-divisive means (Matteson & James, 2014) with a
//! permutation test — the method MongoDB's performance CI runs over its history.
//!
//! For a segment `z` of length `n` split after `τ` points into `x` (left) and `y` (right), the
//! divergence is
//!
//! `Q(τ) = τ(n−τ)/n · [ 2/(τ(n−τ)) Σ|xᵢ−yⱼ| − Σ_{i<k}|xᵢ−xₖ| / C(τ,2) − Σ_{j<l}|yⱼ−yₗ| / C(n−τ,2) ]`
//!
//! (energy distance with exponent 1). The best split maximizes `Q`; it is significant when
//! fewer than `significance` of the segment's random permutations reach as large a maximum.
//! Significant splits are applied recursively to both sides (binary segmentation). Nothing is
//! assumed about the noise's shape: an outlier run moves `Q` by one distance, a shifted level
//! moves it by every cross pair.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Permutations per test (p-values are multiples of `1 / (permutations + 1)`).
    pub permutations: usize,
    /// A split is kept when its permutation p-value is at most this.
    pub significance: f64,
    /// The fewest points on either side of a split.
    pub min_segment: usize,
}

impl Default for Options {
    /// 199 permutations, p ≤ 0.01, segments of at least 3 runs. Measured in the tests: pure
    /// noise of 30 runs gives a change point in 1% of series (2 of 200); a 2% step in 0.5%
    /// noise is found at its exact index.
    fn default() -> Options {
        Options {
            permutations: 199,
            significance: 0.01,
            min_segment: 3,
        }
    }
}

/// A level shift: the series' level changes between `index − 1` and `index`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first point of the new level.
    pub index: usize,
    /// The divergence `Q` of the split.
    pub divergence: f64,
    /// The permutation p-value.
    pub p: f64,
}

/// The split maximizing `Q` within `values`, as (left size, Q), in O(n²).
fn best_split(values: &[f64], min_segment: usize) -> Option<(usize, f64)> {
    let n = values.len();
    if n < 2 * min_segment.max(2) {
        return None;
    }
    let d = |i: usize, j: usize| (values[i] - values[j]).abs();
    let total: f64 = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| d(i, j))
        .sum();
    // Moving τ (the left side's size) from 0 upward: point τ leaves the right side.
    let (mut left, mut cross) = (0.0, 0.0);
    let mut best: Option<(usize, f64)> = None;
    for tau in 0..n - min_segment {
        let before: f64 = (0..tau).map(|i| d(i, tau)).sum();
        let after: f64 = (tau + 1..n).map(|j| d(tau, j)).sum();
        left += before;
        cross += after - before;
        let t = tau + 1;
        if t < min_segment.max(2) {
            continue;
        }
        let m = n - t;
        let right = total - left - cross;
        let pairs = |k: usize| (k * (k - 1) / 2) as f64;
        let e = 2.0 * cross / (t * m) as f64 - left / pairs(t) - right / pairs(m);
        let q = (t * m) as f64 / n as f64 * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((t, q));
        }
    }
    best
}

/// The change points of `series`, in index order.
pub fn e_divisive(series: &[f64], options: &Options) -> Vec<ChangePoint> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5EED ^ series.len() as u64);
    let mut found = Vec::new();
    let mut segments = vec![(0, series.len())];
    while let Some((start, end)) = segments.pop() {
        let values = &series[start..end];
        let Some((split, q)) = best_split(values, options.min_segment) else {
            continue;
        };
        if q <= 0.0 {
            continue;
        }
        let mut shuffled = values.to_vec();
        let reached = (0..options.permutations)
            .filter(|_| {
                shuffled.shuffle(&mut rng);
                best_split(&shuffled, options.min_segment).is_some_and(|(_, p)| p >= q)
            })
            .count();
        let p = (reached + 1) as f64 / (options.permutations + 1) as f64;
        if p <= options.significance {
            found.push(ChangePoint {
                index: start + split,
                divergence: q,
                p,
            });
            segments.push((start, start + split));
            segments.push((start + split, end));
        }
    }
    found.sort_by_key(|c| c.index);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    /// Run-to-run noise of a trial's median: 0.5%, with a 3% outlier run one time in 20.
    fn noise(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
        let normal = Normal::new(0.0, 0.005).unwrap();
        (0..n)
            .map(|_| {
                let outlier = if rand::Rng::random::<f64>(rng) < 0.05 {
                    0.03
                } else {
                    0.0
                };
                normal.sample(rng) + outlier
            })
            .collect()
    }

    #[test]
    fn a_two_percent_step_is_found_at_its_index() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (n, at) in [(30, 17), (12, 6), (50, 9)] {
            let mut z = noise(&mut rng, n);
            z.iter_mut().skip(at).for_each(|v| *v += 0.02f64.ln_1p());
            let found = e_divisive(&z, &Options::default());
            assert_eq!(
                found.iter().map(|c| c.index).collect::<Vec<_>>(),
                vec![at],
                "n = {n}: {found:?}"
            );
        }
    }

    #[test]
    fn two_steps_are_both_found() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut z = noise(&mut rng, 40);
        z.iter_mut().skip(12).for_each(|v| *v += 0.03);
        z.iter_mut().skip(28).for_each(|v| *v -= 0.05);
        let found: Vec<usize> = e_divisive(&z, &Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(found, vec![12, 28]);
    }

    #[test]
    fn pure_noise_rarely_has_change_points() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let series = 200;
        let flagged = (0..series)
            .filter(|_| !e_divisive(&noise(&mut rng, 30), &Options::default()).is_empty())
            .count();
        eprintln!("pure noise, 30 runs: {flagged} of {series} series with a change point");
        assert!(flagged <= 6, "{flagged} of {series} (more than 3%)");
    }

    #[test]
    fn flat_and_short_series_have_none() {
        assert!(e_divisive(&[1.0; 20], &Options::default()).is_empty());
        assert!(e_divisive(&[1.0, 2.0, 3.0, 4.0, 5.0], &Options::default()).is_empty());
        assert!(e_divisive(&[], &Options::default()).is_empty());
    }
}
