//! `remembers`: whether a kernel is faster on inputs it has seen than on inputs it has not —
//! a kernel that keeps results keyed on its inputs' contents, whose timed launches would
//! measure a cache lookup instead of its work.
//!
//! Timing rotates over two input sets (`INPUT_SETS`), so a kernel with a device cache of two or
//! more entries keyed on contents hits on every timed launch after the first of each set (the
//! fixture `tests/fixtures/memo`: a compute-bound kernel with four slots). No count of sets
//! defeats every cache size, so after timing, the worker measures the kernel the same way on
//! the contents it was timed on, then on fresh contents (seeds nothing has used), [`PROBES`] of
//! each — seen first, so that whatever policy a cache evicts by, the contents timing just used
//! are in it; each fresh set is new, so none can be. A kernel whose every fresh launch is slower
//! than every seen one, and whose fresh median is over [`FACTOR`] times the seen one, fails. Honest kernels take the
//! same time on any set drawn from one distribution; a cache keyed on contents cannot hit on
//! contents it has never seen, so the fresh launches are its full cost. The worker
//! (`Trial::fresh_inputs`) stops the fresh launches at the first one no slower than every seen
//! one — `remembers` is then false whatever follows — and in the cold regime takes the seen
//! launches from the timed samples.

use crate::stats::Summary;

/// Launches of each kind: 6 and 6 leave one chance in 924 that every fresh launch is slower
/// than every seen one when the two take the same time.
pub const PROBES: usize = 6;

/// How much slower the fresh launches must be (median over median): far beyond noise, far
/// below what a cache buys a kernel worth caching.
pub const FACTOR: f64 = 1.5;

/// Whether `fresh` (seconds on unseen contents) says the kernel remembers the contents it was
/// timed on (`seen`).
pub fn remembers(seen: &[f64], fresh: &[f64]) -> bool {
    let (Some(s), Some(f)) = (Summary::of(seen), Summary::of(fresh)) else {
        return false;
    };
    f.median > FACTOR * s.median && f.min > s.max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_kernel_slower_on_every_fresh_input_remembers() {
        let seen = [10e-6, 11e-6, 10.5e-6, 10.2e-6, 10.8e-6, 10.1e-6];
        let cached_miss = [300e-6, 305e-6, 299e-6, 310e-6, 301e-6, 302e-6];
        assert!(remembers(&seen, &cached_miss));
        let honest = [10.3e-6, 10.9e-6, 10.4e-6, 10.0e-6, 11.1e-6, 10.6e-6];
        assert!(!remembers(&seen, &honest));
        // One slow outlier among fresh launches is noise, not a cache.
        let one_slow = [10.3e-6, 40e-6, 10.4e-6, 10.0e-6, 11.1e-6, 10.6e-6];
        assert!(!remembers(&seen, &one_slow));
        // Twice as slow on fresh contents, but overlapping: not separated.
        let overlapping = [20e-6, 21e-6, 22e-6, 10.9e-6, 20e-6, 23e-6];
        assert!(!remembers(&seen, &overlapping));
        assert!(!remembers(&[], &cached_miss));
    }
}
