//! `Plan`: how a trial will be timed — the regime, and launches per sample of each side —
//! and the launch-floor rule that chooses it.

use super::samples::Regime;

/// Kernels faster than this many launch floors are timed as graph replays.
pub const FLOOR_FACTOR: f64 = 10.0;
/// A graph replay lasts about this long.
pub const BATCH_TARGET_SECONDS: f64 = 100e-6;
/// Launches in a graph, at most.
pub const MAX_BATCH: usize = 1024;
/// In the graph regime, a side whose launch takes at least this many launch floors is replayed
/// one launch per graph, a graph per input set, alternated sample by sample as single launches
/// are: a batch of [`INPUT_SETS`] launches only doubled its cost. (Issue 22: the example
/// suites' `reduce::atomic::n=4194304`, 7.4 ms, is the reference of two graph-regime trials;
/// its second launch per sample was ~0.4 s of the run's GPU time.) The per-launch time then
/// carries a graph's launch cost once rather than spread over two: under half a floor over
/// 100 floors, ≤ 0.5%.
pub const SINGLE_LAUNCH_FLOORS: f64 = 100.0;

/// How a trial will be timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The regime.
    pub regime: Regime,
    /// Launches per sample of the kernel under test.
    pub kernel_batch: usize,
    /// Launches per sample of the reference.
    pub reference_batch: usize,
}

/// Input sets with different contents that timed launches rotate over, so that a result
/// keyed on input contents (or on a launch count) gains nothing.
pub const INPUT_SETS: usize = 2;

impl Plan {
    /// Input copies to rotate through. In the graph regime every launch of a replay has its
    /// own copy: a launch that shared a copy with an earlier one in the same replay would find
    /// that launch's answer already in its output, a state no checked launch starts from. So
    /// a copy per launch of the larger batch (which also outgrows L2 at the batch sizes the
    /// floor rule picks). In the cold regime, one copy per input set, alternated by sample.
    pub fn copies(&self) -> usize {
        if self.regime == Regime::Graph {
            self.kernel_batch.max(self.reference_batch).max(INPUT_SETS)
        } else {
            INPUT_SETS
        }
    }

    /// Input copies the kernel's timed launches ran on, at most (fewer where the case has
    /// fewer): one per launch of its graph, or one per input set — single launches alternate
    /// over them, and so do graphs of one launch.
    pub fn kernel_copies(&self) -> usize {
        self.kernel_batch.max(INPUT_SETS)
    }
}

/// Launches per graph replay, in the graph regime, for a side that takes `seconds` alone on a
/// device whose launch floor is `floor`: [`batch_size`], at least one launch per input set so
/// that a replay times every set — except for a side slow enough ([`SINGLE_LAUNCH_FLOORS`]) to
/// be replayed one launch per graph, a graph per input set (`Timer::sample` alternates them).
pub fn graph_batch(seconds: f64, floor: f64) -> usize {
    let batch = batch_size(seconds);
    if batch == 1 && seconds >= SINGLE_LAUNCH_FLOORS * floor {
        1
    } else {
        batch.max(INPUT_SETS)
    }
}

/// Launches per batch for a kernel that takes `seconds` alone: a power of two, so that small
/// differences in the pilot between runs do not change it.
pub fn batch_size(seconds: f64) -> usize {
    let n = (BATCH_TARGET_SECONDS / seconds.max(1e-9)).ceil() as usize;
    n.max(1).next_power_of_two().min(MAX_BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes_are_stable_powers_of_two() {
        assert_eq!(batch_size(4e-6), 32);
        assert_eq!(
            batch_size(4.2e-6),
            32,
            "a slightly different pilot gives the same batch"
        );
        assert_eq!(batch_size(3e-6), 64);
        assert_eq!(batch_size(200e-6), 1);
        assert_eq!(batch_size(1e-12), MAX_BATCH);
    }

    #[test]
    fn only_a_side_far_above_the_floor_is_replayed_one_launch_per_graph() {
        let floor = 4.3e-6;
        assert_eq!(graph_batch(4e-6, floor), 32, "fast sides as before");
        assert_eq!(
            graph_batch(200e-6, floor),
            INPUT_SETS,
            "under 100 floors: a launch per input set, as before"
        );
        assert_eq!(graph_batch(7.4e-3, floor), 1, "reduce::atomic at 4M");
        assert_eq!(graph_batch(SINGLE_LAUNCH_FLOORS * floor, floor), 1);
        assert_eq!(
            graph_batch(60e-6, floor),
            2,
            "batch_size 2 is not lowered, whatever the floor"
        );
    }

    #[test]
    fn every_graph_launch_has_its_own_copy_and_both_input_sets_are_used() {
        let batch = Plan {
            regime: Regime::Graph,
            kernel_batch: 32,
            reference_batch: 8,
        };
        assert_eq!(
            batch.copies(),
            32,
            "one copy per launch of the larger batch"
        );
        let one = Plan {
            regime: Regime::Graph,
            kernel_batch: 1,
            reference_batch: 1,
        };
        assert_eq!(
            one.copies(),
            INPUT_SETS,
            "never fewer copies than input sets"
        );
        let cold = Plan {
            regime: Regime::Cold,
            kernel_batch: 1,
            reference_batch: 1,
        };
        assert_eq!(cold.copies(), INPUT_SETS);
        assert_eq!(cold.kernel_copies(), INPUT_SETS);
        assert_eq!(one.kernel_copies(), INPUT_SETS, "a graph per input set");
        assert_eq!(batch.kernel_copies(), 32);
    }
}
