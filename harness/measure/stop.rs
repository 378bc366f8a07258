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

/// Whether one side's samples are precise enough, where they alternate over `sets` input
/// sets sample by sample (1: every sample covers them all, as a graph of a batch does): the
/// median of all of them precise, or, failing that, the median of each set's own samples
/// (every `sets`-th one) precise. A kernel whose sets take different times (seen on an H200:
/// `transpose::naive::n=4096`, one allocation's two input copies at 0.268 and 0.289 ms,
/// alternating) has a pooled median that sits between the two and whose interval never
/// narrows below their gap: sampling ran to `max_samples` (1,000 samples, 0.28 s) for it.
/// Once each set's time is known precisely, so is their mixture, which the timing loop
/// samples in fixed proportions; more samples would not tell the gate more.
pub fn precise_side(samples: &[f64], sets: usize, precision: f64) -> bool {
    if precise(samples, precision) {
        return true;
    }
    let sets = sets.max(1);
    sets > 1
        && (0..sets).all(|j| {
            let one: Vec<f64> = samples.iter().skip(j).step_by(sets).copied().collect();
            // At least the samples a precise interval can rest on (n < 6: the extremes).
            one.len() >= MIN_PER_SET && precise(&one, precision)
        })
}

/// Samples of one input set before its own median can stand for it (`precise_side`).
pub const MIN_PER_SET: usize = 8;

/// Whether the kernel's samples and the reference's (when there is one) are both precise
/// (`precise_side`, each with the input sets its samples alternate over).
fn both_precise(
    bench: &Bench,
    kernel: &[f64],
    reference: Option<&[f64]>,
    sets: [usize; 2],
) -> bool {
    precise_side(kernel, sets[0], bench.precision)
        && reference.is_none_or(|r| precise_side(r, sets[1], bench.precision))
}

/// After a group of rounds was kept: the kernel's samples, the reference's (`None` when the
/// kernel is timed alone), the input sets each side's samples alternate over
/// (`precise_side`), and the time since sampling started: whether to go on — and, when
/// sampling goes on only for `min_samples` and `min_time_ms` (both sides already precise), the samples and the time still missing — for the timing loop to
/// queue just the rounds that reach them rather than a whole group more (issue 22: up to a
/// group of rounds after `min_time_ms` on every allocation; the stopping rule itself is
/// unchanged). `None` while a side is not precise.
pub fn after_group(
    bench: &Bench,
    kernel: &[f64],
    reference: Option<&[f64]>,
    sets: [usize; 2],
    elapsed: Duration,
) -> (Next, Option<(usize, Duration)>) {
    let n = kernel.len();
    let done = both_precise(bench, kernel, reference, sets);
    let min_time = Duration::from_millis(bench.min_time_ms);
    let cap = Duration::from_millis(bench.max_time_ms);
    // A stop hit the time cap only where a side is not precise (a precise stop needs `done`).
    let hit_time_cap = !done;
    let stop = (n >= bench.min_samples && done && elapsed >= min_time)
        || n >= bench.max_samples
        || (elapsed >= cap && n >= bench.min_samples);
    let next = if stop {
        Next::Stop { hit_time_cap }
    } else {
        Next::Sample
    };
    let short = done.then(|| {
        (
            bench.min_samples.saturating_sub(n),
            min_time.saturating_sub(elapsed),
        )
    });
    (next, short)
}

/// [`after_group`] for several kernels timed in the same rounds against one reference
/// (`sets`: each kernel's input sets, then the reference's): stop once every kernel would
/// (the time cap is reached by all at once), with each kernel's `hit_time_cap` then — only
/// those not yet precise hit it —, `None` while any samples on; the rounds still missing are
/// the most any needs.
pub fn after_groups(
    bench: &Bench,
    kernels: &[Vec<f64>],
    reference: Option<&[f64]>,
    sets: &[usize],
    elapsed: Duration,
) -> (Option<Vec<bool>>, Option<(usize, Duration)>) {
    let reference_sets = sets[sets.len() - 1];
    let each = kernels
        .iter()
        .zip(sets)
        .map(|(k, &s)| after_group(bench, k, reference, [s, reference_sets], elapsed));
    let (nexts, shorts): (Vec<Next>, Vec<_>) = each.unzip();
    let capped = (nexts.into_iter())
        .map(|n| match n {
            Next::Stop { hit_time_cap } => Some(hit_time_cap),
            Next::Sample => None,
        })
        .collect();
    let short = (shorts.into_iter()).try_fold((0, Duration::ZERO), |(a, x), s| {
        s.map(|(b, y)| (a.max(b), x.max(y)))
    });
    (capped, short)
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

    /// [`after_group`]'s decision alone.
    fn after_kept(
        bench: &Bench,
        kernel: &[f64],
        reference: Option<&[f64]>,
        sets: [usize; 2],
        elapsed: Duration,
    ) -> Next {
        after_group(bench, kernel, reference, sets, elapsed).0
    }

    fn bench() -> Bench {
        Bench {
            l2_flush: crate::suite::Flush::Write,
            min_samples: 16,
            max_samples: 64,
            min_time_ms: 10,
            max_time_ms: 1000,
            precision: 0.01,
            max_slowdown: 0.03,
            memory_growth: 0.0,
            max_instruction_growth: None,
            max_dram_read_growth: None,
            flops_type: None,
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
            after_kept(&b, &samples(8, 0.0), None, [1, 1], MS(500)),
            Next::Sample,
            "8 < min_samples"
        );
        assert_eq!(
            after_kept(&b, &samples(16, 0.0), None, [1, 1], MS(5)),
            Next::Sample,
            "5 ms < min_time_ms"
        );
        assert_eq!(
            after_kept(&b, &samples(16, 0.0), None, [1, 1], MS(10)),
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
        assert_eq!(after_kept(&b, &noisy, None, [1, 1], MS(100)), Next::Sample);
        assert_eq!(
            after_kept(&b, &quiet, Some(&noisy), [1, 1], MS(100)),
            Next::Sample,
            "an imprecise reference keeps sampling"
        );
        assert_eq!(
            after_kept(&b, &quiet, Some(&quiet), [1, 1], MS(100)),
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
        assert_eq!(after_kept(&b, &noisy, None, [1, 1], MS(999)), Next::Sample);
        assert_eq!(
            after_kept(&b, &noisy, None, [1, 1], MS(1000)),
            Next::Stop { hit_time_cap: true }
        );
        assert_eq!(
            after_kept(&b, &samples(8, 0.2), None, [1, 1], MS(5000)),
            Next::Sample,
            "the cap waits for min_samples"
        );
        assert_eq!(
            after_kept(&b, &samples(64, 0.2), None, [1, 1], MS(20)),
            Next::Stop { hit_time_cap: true },
            "max_samples stops too, before the precision target"
        );
        assert_eq!(
            after_kept(&b, &samples(64, 0.0), None, [1, 1], MS(5)),
            Next::Stop {
                hit_time_cap: false
            },
            "max_samples reached precise is no cap"
        );
    }

    #[test]
    fn a_kernel_whose_input_sets_differ_stops_once_each_set_is_precise() {
        let b = bench();
        // Alternating 0.268 / 0.289 ms, each tight: the pooled median's interval spans the gap.
        let two: Vec<f64> = (0..32)
            .map(|i| {
                let set = if i % 2 == 0 { 0.268e-3 } else { 0.289e-3 };
                set * (1.0 + 0.002 * ((i * 7 % 5) as f64 / 4.0 - 0.5))
            })
            .collect();
        assert!(
            !precise(&two, b.precision),
            "the pooled median is not precise"
        );
        assert!(precise_side(&two, 2, b.precision));
        assert!(
            !precise_side(&two, 1, b.precision),
            "a side whose samples each cover every set is judged pooled"
        );
        assert_eq!(
            after_kept(&b, &two, None, [2, 1], MS(100)),
            Next::Stop {
                hit_time_cap: false
            }
        );
        assert_eq!(after_kept(&b, &two, None, [1, 1], MS(100)), Next::Sample);
        assert!(
            !precise_side(&two[..14], 2, b.precision),
            "fewer than MIN_PER_SET samples of a set do not stand for it"
        );
        // A set that is itself noisy keeps sampling.
        let noisy: Vec<f64> = two
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if i % 2 == 1 {
                    t * (1.0 + 0.2 * ((i * 7 % 11) as f64 / 10.0 - 0.5))
                } else {
                    *t
                }
            })
            .collect();
        assert!(!precise_side(&noisy, 2, b.precision));
    }

    #[test]
    fn what_precise_sampling_is_still_short_of() {
        let b = bench();
        let (quiet, noisy) = (samples(12, 0.001), samples(32, 0.2));
        assert_eq!(
            after_group(&b, &quiet, None, [1, 1], MS(4)).1,
            Some((4, MS(6))),
            "4 samples and 6 ms to min_samples and min_time_ms"
        );
        assert_eq!(
            after_group(&b, &samples(16, 0.001), None, [1, 1], MS(30)).1,
            Some((0, MS(0)))
        );
        assert_eq!(after_group(&b, &noisy, None, [1, 1], MS(4)).1, None);
        assert_eq!(
            after_group(&b, &quiet, Some(&noisy), [1, 1], MS(4)).1,
            None,
            "an imprecise reference is not only short of time"
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

    /// Kernels sampled in the same rounds: a group stopped at the time cap marks only the
    /// kernels not yet precise then, and samples on while any is short of its cap.
    #[test]
    fn a_group_stopped_at_the_time_cap_marks_only_its_imprecise_kernels() {
        let (steady, spread) = (samples(40, 0.0), samples(40, 2.0));
        let kernels = [steady.clone(), spread];
        let at = |ms| after_groups(&bench(), &kernels, Some(&steady), &[1, 1, 1], ms).0;
        assert_eq!(at(Duration::from_millis(1500)), Some(vec![false, true]));
        assert_eq!(at(Duration::from_millis(500)), None);
    }
}
