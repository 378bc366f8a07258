//! `Plan`: how a trial will be timed — the regime, and launches per sample of each side —
//! and the launch-floor rule that chooses it.

use super::samples::Regime;

/// Kernels faster than this many launch floors are timed as graph replays.
pub const FLOOR_FACTOR: f64 = 10.0;
/// A graph replay lasts about this long.
pub const BATCH_TARGET_SECONDS: f64 = 100e-6;
/// Launches in a graph, at most.
pub const MAX_BATCH: usize = 1024;

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
    }
}
