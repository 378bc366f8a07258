//! `Axis`: where a chart's ticks go and how they read — nice values (1, 2, 5 × 10ᵏ on log
//! axes; a 1-2-5 step on linear ones), every label distinct and written in one style per axis
//! (`100 ns`, `200 ns`, `1 µs`; or `1.8 µs`, `2.0 µs`), so no axis repeats a label or mixes
//! `100.0 ns` with `1.000 µs` (both seen in the first renderings).

use std::ops::Range;

/// What an axis' values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Seconds, labelled in ns, µs, ms or s by magnitude.
    Seconds,
    /// A percentage: `73%`.
    Percent,
    /// A signed percentage, for changes: `+2.5%`.
    SignedPercent,
    /// A ratio: `1.25×`.
    Times,
}

impl Unit {
    /// The value as written (scaled to its unit) and the unit's suffix.
    fn scaled(self, v: f64) -> (f64, &'static str) {
        match self {
            Unit::Seconds => {
                let a = v.abs();
                if a >= 1.0 {
                    (v, " s")
                } else if a >= 1e-3 {
                    (v * 1e3, " ms")
                } else if a >= 1e-6 || a == 0.0 {
                    (v * 1e6, " µs")
                } else {
                    (v * 1e9, " ns")
                }
            }
            Unit::Percent | Unit::SignedPercent => (v, "%"),
            Unit::Times => (v, "×"),
        }
    }

    /// `v` with `decimals` digits after the point, in this unit.
    pub fn label(self, v: f64, decimals: usize) -> String {
        let (x, suffix) = self.scaled(v);
        // `-0` reads as a different number from `0`.
        let x = if x.abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
            0.0
        } else {
            x
        };
        match self {
            Unit::SignedPercent if x != 0.0 => format!("{x:+.decimals$}{suffix}"),
            _ => format!("{x:.decimals$}{suffix}"),
        }
    }

    /// The labels of `ticks`: the fewest decimals (up to 4) that write every tick exactly and
    /// no two alike, the same number for all.
    pub fn labels(self, ticks: &[f64]) -> Vec<String> {
        let exact = |d: usize| {
            ticks.iter().all(|&v| {
                let (x, _) = self.scaled(v);
                let p = 10f64.powi(d as i32);
                ((x * p).round() / p - x).abs() <= 1e-6 * x.abs().max(1e-12)
            })
        };
        let distinct = |labels: &[String]| {
            let mut sorted = labels.to_vec();
            sorted.sort();
            sorted.dedup();
            sorted.len() == labels.len()
        };
        let labels =
            |d: usize| -> Vec<String> { ticks.iter().map(|&v| self.label(v, d)).collect() };
        let decimals = (0..=4).find(|&d| exact(d) && distinct(&labels(d)));
        labels(decimals.unwrap_or(4))
    }
}

/// A step of 1, 2 or 5 × 10ᵏ giving about `wanted` ticks over `span`.
fn nice_step(span: f64, wanted: f64) -> f64 {
    let raw = span / wanted;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| span / s <= wanted + 0.5)
        .unwrap_or(10.0 * power)
}

/// Ticks on a linear axis over `range`: multiples of a 1-2-5 step, about six.
pub fn linear_ticks(range: &Range<f64>) -> Vec<f64> {
    let span = range.end - range.start;
    if !(span > 0.0 && span.is_finite()) {
        return vec![range.start];
    }
    let step = nice_step(span, 6.0);
    let first = (range.start / step).ceil() as i64;
    let last = (range.end / step).floor() as i64;
    (first..=last)
        .map(|k| k as f64 * step)
        // `0.30000000000000004` is `0.3`.
        .map(|v| (v / step).round() * step)
        .collect()
}

/// Ticks on a log axis over `range`: 1, 2 and 5 × 10ᵏ inside it (only the powers of ten
/// when those are more than a dozen); where fewer than three fall inside (a narrow range
/// within a decade), linear ticks.
pub fn log_ticks(range: &Range<f64>) -> Vec<f64> {
    let (lo, hi) = (range.start.max(f64::MIN_POSITIVE), range.end);
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let inside = |mantissas: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        // Decades from below `lo` to above `hi`, bounded: `hi * 10` overflows to infinity for
        // the largest doubles, which `powi` reaches too (seen: a results file holding 1e308
        // hung `kernelgate report`).
        let first = lo.log10().floor().max(-400.0) as i32 - 1;
        let last = hi.log10().ceil().min(400.0) as i32 + 1;
        for k in first..=last {
            if 10f64.powi(k) > hi * 10.0 {
                break;
            }
            for m in mantissas {
                // Written as the decimal it is (5e-7, not 4.9999999999999996e-7).
                let v: f64 = format!("{m}e{k}").parse().unwrap_or(m * 10f64.powi(k));
                if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                    out.push(v);
                }
            }
        }
        out
    };
    let ticks = inside(&[1.0, 2.0, 5.0]);
    match ticks.len() {
        n if n > 12 => inside(&[1.0]),
        n if n < 3 => linear_ticks(range)
            .into_iter()
            .filter(|v| *v > 0.0)
            .collect(),
        _ => ticks,
    }
}

/// At most `max` of `values` (sorted, distinct), evenly spaced, the first and last kept.
pub fn thin(values: &[f64], max: usize) -> Vec<f64> {
    if values.len() <= max || max < 2 {
        return values.to_vec();
    }
    (0..max)
        .map(|i| values[i * (values.len() - 1) / (max - 1)])
        .collect()
}

/// Of `values` (sorted, positive), those at least `gap` of the axis' log-width from the one
/// kept before (the first kept), so two labels never overprint: `1M` and `1Mi` on one axis
/// did (seen in the paired report's saxpy charts).
pub fn spaced_log(values: &[f64], gap: f64) -> Vec<f64> {
    let (Some(first), Some(last)) = (values.first(), values.last()) else {
        return Vec::new();
    };
    let width = (last / first).log10().max(f64::MIN_POSITIVE);
    let mut out: Vec<f64> = Vec::new();
    for &v in values {
        match out.last() {
            Some(&k) if (v / k).log10() / width < gap => {}
            _ => out.push(v),
        }
    }
    out
}

/// A size on an axis: `4096`, `64Ki`, `16Mi` (exact powers of two from 2¹⁶), `10k`, `1M`,
/// `2.5M`.
pub fn count(v: f64) -> String {
    let r = v.round();
    let trim = |x: f64| {
        let t = format!("{x:.1}");
        t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
    };
    let power_of_two = r >= 65536.0 && (r as u64).is_power_of_two();
    if power_of_two && r >= 1048576.0 {
        format!("{}Mi", r / 1048576.0)
    } else if power_of_two {
        format!("{}Ki", r / 1024.0)
    } else if r >= 1e9 {
        format!("{}G", trim(r / 1e9))
    } else if r >= 1e6 {
        format!("{}M", trim(r / 1e6))
    } else if r >= 1e4 {
        format!("{}k", trim(r / 1e3))
    } else {
        format!("{r}")
    }
}

/// The label for `v` among `ticks` and their `labels` (plotters hands the key points back,
/// perhaps a rounding away).
pub fn label_of(v: f64, ticks: &[f64], labels: &[String]) -> String {
    ticks
        .iter()
        .zip(labels)
        .min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()))
        .map(|(_, l)| l.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_over_the_whole_double_range_end() {
        // Seen: a results file holding 1e308 hung `kernelgate report` here.
        let ticks = log_ticks(&(1e-6..1e308));
        assert!(!ticks.is_empty() && ticks.len() <= 400, "{}", ticks.len());
        assert!(log_ticks(&(f64::MIN_POSITIVE..f64::MAX)).len() <= 700);
    }

    fn distinct(labels: &[String]) -> bool {
        let mut s = labels.to_vec();
        s.sort();
        s.dedup();
        s.len() == labels.len()
    }

    #[test]
    fn log_time_axes_read_in_one_style_without_repeats() {
        // The range the first screenshot drew `100.0 ns` and `1.000 µs` (twice) on.
        let ticks = log_ticks(&(0.0999e-6..30e-6));
        let labels = Unit::Seconds.labels(&ticks);
        assert_eq!(
            labels,
            ["100 ns", "200 ns", "500 ns", "1 µs", "2 µs", "5 µs", "10 µs", "20 µs"]
        );
        // Narrow, within one decade: linear steps, one decimal for all.
        let narrow = Unit::Seconds.labels(&log_ticks(&(1.75e-6..2.65e-6)));
        assert_eq!(narrow, ["1.8 µs", "2.0 µs", "2.2 µs", "2.4 µs", "2.6 µs"]);
        // Many decades: powers of ten only.
        assert_eq!(log_ticks(&(1e-9..1.0)).len(), 10);
    }

    #[test]
    fn linear_axes_never_repeat_a_label() {
        // A speedup axis over 0.995..1.012 drew `1.00×` twice.
        for range in [
            0.995..1.012,
            0.9..1.3,
            -0.04..0.03,
            0.0..0.0004,
            -12.0..40.0,
        ] {
            let ticks = linear_ticks(&range);
            assert!(ticks.len() >= 3, "{range:?}: {ticks:?}");
            for unit in [Unit::Times, Unit::SignedPercent, Unit::Percent] {
                let labels = unit.labels(&ticks);
                assert!(distinct(&labels), "{range:?}: {labels:?}");
            }
        }
        assert_eq!(
            Unit::Times.labels(&linear_ticks(&(0.995..1.012))),
            ["0.995×", "1.000×", "1.005×", "1.010×"]
        );
        assert_eq!(
            Unit::SignedPercent.labels(&[-2.0, 0.0, 2.0]),
            ["-2%", "0%", "+2%"]
        );
    }

    #[test]
    fn sizes_and_thinning() {
        assert_eq!(count(4096.0), "4096");
        assert_eq!(count(65536.0), "64Ki");
        assert_eq!(count(16777216.0), "16Mi");
        assert_eq!(count(1000003.0), "1M");
        assert_eq!(count(2.5e6), "2.5M");
        assert_eq!(count(1e5), "100k");
        assert_eq!(thin(&[1.0, 2.0, 3.0, 4.0, 5.0], 3), [1.0, 3.0, 5.0]);
        assert_eq!(
            spaced_log(&[4096.0, 1000003.0, 1048576.0, 16777216.0], 0.05),
            [4096.0, 1000003.0, 16777216.0]
        );
        assert_eq!(
            label_of(2.0000001, &[1.0, 2.0], &["a".into(), "b".into()]),
            "b"
        );
    }
}
