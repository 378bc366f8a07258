//! `Detection`: the smallest slowdown a user's trial would catch, *estimated from its measured
//! noise* — not a planted kernel slowdown. The per-round log-ratios of its paired A/A
//! measurements (the trial timed against itself) are pooled; each resample draws as many
//! rounds as one measurement had, with replacement, shifted by `ln(1 + s)`, and is decided
//! as a paired run decides, through [`gate::settle`] at the suite's `max_slowdown`: an
//! inconclusive resample is drawn again with [`gate::REMEASURE_EFFORT`] times the rounds and
//! decided once more.

use crate::gate::{self, GateInput, Verdict};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::convert::Infallible;

/// Slowdowns injected, as fractions.
pub const INJECTED: [f64; 7] = [0.005, 0.01, 0.02, 0.03, 0.05, 0.10, 0.20];
/// Resamples per injected slowdown.
pub const RESAMPLES: usize = 400;
/// The detection rate that counts as "detected".
pub const DETECTED: f64 = 0.95;

/// How often one injected slowdown was flagged `regressed`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detection {
    /// The injected slowdown, a fraction.
    pub slowdown: f64,
    /// The fraction of resamples flagged `regressed`.
    pub rate: f64,
}

/// One resample of `rounds` pooled log-ratios, shifted by `ln(1 + s)`, as ratios.
fn resample(rng: &mut ChaCha8Rng, pooled: &[f64], rounds: usize, s: f64) -> Vec<f64> {
    let shift = (1.0 + s).ln();
    (0..rounds)
        .map(|_| (pooled[rng.random_range(0..pooled.len())] + shift).exp())
        .collect()
}

/// The verdict for one resample alone (a family of one), decided as a paired run decides:
/// through the gate's own policy ([`gate::settle`]), an inconclusive resample drawn again with
/// [`gate::REMEASURE_EFFORT`] times the rounds, and a regression confirmed by another such
/// draw (the fresh worker's measurement).
fn verdict(rng: &mut ChaCha8Rng, pooled: &[f64], rounds: usize, s: f64, max: f64) -> Verdict {
    let input = |ratios: Vec<f64>| GateInput {
        old_times: Vec::new(),
        new_times: Vec::new(),
        speedups: None,
        max_slowdown: max,
        paired: Some(ratios),
    };
    let first = input(resample(rng, pooled, rounds, s));
    let more = rounds * gate::REMEASURE_EFFORT as usize;
    let rng = std::cell::RefCell::new(rng);
    let draw = || input(resample(&mut rng.borrow_mut(), pooled, more, s));
    let mut measure = gate::Measures(|_| Ok::<_, Infallible>(draw()), |_, _| Some(draw()));
    match gate::settle(vec![first], Some(&mut measure), gate::Confirm::Regressions).pop() {
        Some(Ok(decision)) => decision.verdict.verdict,
        Some(Err(never)) => match never {},
        None => unreachable!("settle decides every input"),
    }
}

/// Detection rates for every slowdown in [`INJECTED`]: `pooled` are the A/A per-round
/// log-ratios, `rounds` the rounds of one measurement, `seed` makes it repeatable. Empty when
/// there is nothing to resample.
pub fn detection_rates(
    pooled: &[f64],
    rounds: usize,
    max_slowdown: f64,
    seed: u64,
) -> Vec<Detection> {
    if pooled.is_empty() || rounds == 0 || pooled.iter().any(|d| !d.is_finite()) {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    INJECTED
        .iter()
        .map(|&s| {
            let caught = (0..RESAMPLES)
                .filter(|_| {
                    verdict(&mut rng, pooled, rounds, s, max_slowdown) == Verdict::Regressed
                })
                .count();
            Detection {
                slowdown: s,
                rate: caught as f64 / RESAMPLES as f64,
            }
        })
        .collect()
}

/// The smallest injected slowdown detected at least [`DETECTED`] of the time, from which on
/// every larger one is too; `None` when even the largest is not.
pub fn smallest_detected(rates: &[Detection]) -> Option<f64> {
    let from = rates
        .iter()
        .rposition(|d| d.rate < DETECTED)
        .map_or(0, |last_miss| last_miss + 1);
    rates.get(from).map(|d| d.slowdown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    /// Synthetic A/A log-ratios: normal with standard deviation `sigma`.
    fn noise(sigma: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0, sigma).unwrap();
        (0..n).map(|_| normal.sample(&mut rng)).collect()
    }

    #[test]
    fn quiet_trials_catch_small_slowdowns_and_noisy_ones_do_not() {
        // 0.2% round-to-round noise, 32 rounds, max_slowdown 1%: 2% is caught every time,
        // 0.5% (below max_slowdown) never.
        let quiet = detection_rates(&noise(0.002, 640, 1), 32, 0.01, 7);
        assert_eq!(quiet.len(), INJECTED.len());
        assert_eq!(quiet[0].rate, 0.0, "{quiet:?}");
        assert_eq!(smallest_detected(&quiet), Some(0.02), "{quiet:?}");
        // 5% round-to-round noise: 2% is caught about half the time (seen: 50%), 3% and up
        // nearly always.
        let noisy = detection_rates(&noise(0.05, 640, 2), 32, 0.01, 7);
        assert!(noisy[2].rate > 0.2 && noisy[2].rate < 0.8, "{noisy:?}");
        let smallest = smallest_detected(&noisy).expect("20% is caught");
        assert!((0.03..=0.05).contains(&smallest), "{noisy:?}");
    }

    #[test]
    fn the_estimate_is_repeatable() {
        let d = noise(0.01, 200, 3);
        assert_eq!(
            detection_rates(&d, 16, 0.02, 9),
            detection_rates(&d, 16, 0.02, 9)
        );
    }

    #[test]
    fn smallest_needs_every_larger_slowdown_detected() {
        let r = |rates: &[f64]| -> Vec<Detection> {
            INJECTED
                .iter()
                .zip(rates)
                .map(|(&slowdown, &rate)| Detection { slowdown, rate })
                .collect()
        };
        assert_eq!(
            smallest_detected(&r(&[0.0, 0.2, 0.96, 0.99, 1.0, 1.0, 1.0])),
            Some(0.02)
        );
        assert_eq!(
            smallest_detected(&r(&[0.0, 0.96, 0.90, 0.99, 1.0, 1.0, 1.0])),
            Some(0.03),
            "a dip below 95% after it resets the answer"
        );
        assert_eq!(
            smallest_detected(&r(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.9])),
            None
        );
        assert_eq!(smallest_detected(&[]), None);
    }

    #[test]
    fn nothing_to_resample_gives_no_estimate() {
        assert!(detection_rates(&[], 16, 0.02, 1).is_empty());
        assert!(detection_rates(&[0.0, f64::NAN], 16, 0.02, 1).is_empty());
    }
}
