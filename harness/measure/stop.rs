//! `next`: the stopping rule — whether a trial has sampled enough — as a pure function of what
//! sampling has seen so far, so it is tested without a GPU.
//!
//! Sampling stops once both medians are precise (the 95% interval's half-width within
//! `precision` of the median), but never before `min_samples` samples and `min_time_ms`; it
//! stops anyway at `max_samples`, or at the time cap `max_time_ms` once `min_samples` are in,
//! saying whether the cap came before the precision target. Rounds the SM clock throttled are
//! discarded, and sampling gives up after twice the cap of them.

use crate::stats::Summary;
use crate::suite::Bench;
use std::time::Duration;

/// What the timing loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Take another group of rounds.
    Sample,
    /// Stop sampling.
    Stop {
        /// Stopped before the precision target was met (the time cap, or `max_samples`).
        hit_time_cap: bool,
    },
}

/// Whether `samples` (seconds) are precise enough: the median's interval within `precision`.
/// No summary (no samples, or one not finite) asks for nothing more.
pub fn precise(samples: &[f64], precision: f64) -> bool {
    Summary::of(samples).is_none_or(|s| s.relative_half_width() <= precision)
}

/// After a group of rounds was kept: the kernel's samples, the reference's (`None` when the
/// kernel is timed alone), and the time since sampling started.
pub fn after_kept(
    bench: &Bench,
    kernel: &[f64],
    reference: Option<&[f64]>,
    elapsed: Duration,
) -> Next {
    let n = kernel.len();
    let done =
        precise(kernel, bench.precision) && reference.is_none_or(|r| precise(r, bench.precision));
    let enough_time = elapsed >= Duration::from_millis(bench.min_time_ms);
    let cap = Duration::from_millis(bench.max_time_ms);
    if n >= bench.min_samples && done && enough_time {
        Next::Stop {
            hit_time_cap: false,
        }
    } else if n >= bench.max_samples || (elapsed >= cap && n >= bench.min_samples) {
        Next::Stop {
            hit_time_cap: !done,
        }
    } else {
        Next::Sample
    }
}

/// After a group of rounds was discarded (the clock throttled): go on until twice the cap.
pub fn after_throttled(bench: &Bench, elapsed: Duration) -> Next {
    if elapsed >= 2 * Duration::from_millis(bench.max_time_ms) {
        Next::Stop {
            hit_time_cap: false,
        }
    } else {
        Next::Sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench() -> Bench {
        Bench {
            l2_flush: true,
            min_samples: 16,
            max_samples: 64,
            min_time_ms: 10,
            max_time_ms: 1000,
            precision: 0.01,
            max_slowdown: 0.03,
            memory_growth: 0.0,
            max_instruction_growth: None,
            max_dram_read_growth: None,
        }
    }

    /// `n` samples around 10 µs spread by `spread` (relative): 0 is as precise as it gets.
    fn samples(n: usize, spread: f64) -> Vec<f64> {
        (0..n)
            .map(|i| 10e-6 * (1.0 + spread * ((i * 7 % 11) as f64 / 10.0 - 0.5)))
            .collect()
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn precise_samples_stop_only_after_the_minimum_count_and_time() {
        let b = bench();
        assert_eq!(
            after_kept(&b, &samples(8, 0.0), None, MS(500)),
            Next::Sample,
            "8 < min_samples"
        );
        assert_eq!(
            after_kept(&b, &samples(16, 0.0), None, MS(5)),
            Next::Sample,
            "5 ms < min_time_ms"
        );
        assert_eq!(
            after_kept(&b, &samples(16, 0.0), None, MS(10)),
            Next::Stop {
                hit_time_cap: false
            }
        );
    }

    #[test]
    fn the_precision_target_is_the_median_interval_of_both_sides() {
        let b = bench();
        let (quiet, noisy) = (samples(32, 0.001), samples(32, 0.2));
        assert!(precise(&quiet, b.precision) && !precise(&noisy, b.precision));
        assert_eq!(after_kept(&b, &noisy, None, MS(100)), Next::Sample);
        assert_eq!(
            after_kept(&b, &quiet, Some(&noisy), MS(100)),
            Next::Sample,
            "an imprecise reference keeps sampling"
        );
        assert_eq!(
            after_kept(&b, &quiet, Some(&quiet), MS(100)),
            Next::Stop {
                hit_time_cap: false
            }
        );
        assert!(precise(&[], b.precision), "no summary asks for nothing");
    }

    #[test]
    fn the_time_cap_stops_imprecise_sampling_and_says_so() {
        let b = bench();
        let noisy = samples(32, 0.2);
        assert_eq!(after_kept(&b, &noisy, None, MS(999)), Next::Sample);
        assert_eq!(
            after_kept(&b, &noisy, None, MS(1000)),
            Next::Stop { hit_time_cap: true }
        );
        assert_eq!(
            after_kept(&b, &samples(8, 0.2), None, MS(5000)),
            Next::Sample,
            "the cap waits for min_samples"
        );
        assert_eq!(
            after_kept(&b, &samples(64, 0.2), None, MS(20)),
            Next::Stop { hit_time_cap: true },
            "max_samples stops too, before the precision target"
        );
        assert_eq!(
            after_kept(&b, &samples(64, 0.0), None, MS(5)),
            Next::Stop {
                hit_time_cap: false
            },
            "max_samples reached precise is no cap"
        );
    }

    #[test]
    fn throttled_rounds_are_given_twice_the_cap() {
        let b = bench();
        assert_eq!(after_throttled(&b, MS(1999)), Next::Sample);
        assert_eq!(
            after_throttled(&b, MS(2000)),
            Next::Stop {
                hit_time_cap: false
            }
        );
    }
}

#[cfg(test)]
#[path = "stop_sensitivity.rs"]
mod sensitivity;
