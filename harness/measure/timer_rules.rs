//! The `Timer`'s rules as pure functions, tested without a GPU: how many rounds a group
//! queues, which input copy a sample uses, how many sets a side alternates, when warm-up and
//! the pilot may stop, what the kernel's last launches are.

use crate::measure::plan::{FLOOR_FACTOR, INPUT_SETS};
use std::time::Duration;

/// Rounds queued between synchronizations.
pub const ROUNDS: usize = 8;
/// Warm-up: at least this many runs of each kernel...
pub(super) const WARMUP_RUNS: usize = 3;
/// ...and at least this long, unless `WARMUP_MAX_RUNS` comes first, or (once the worker has
/// sampled, so that its highest clock reading is one under load) the SM clock is read at
/// that clock again: a clock that is up needs no more warming (issue 22: 20 ms per trial was
/// ~1 s of the example run).
pub(super) const WARMUP_TIME: Duration = Duration::from_millis(20);
pub(super) const WARMUP_MAX_RUNS: usize = 200;
/// Runs that together last this long stand for `WARMUP_RUNS`: one run of a kernel of several
/// ms has loaded its code and touched its pages as three would (issue 22: three runs each of
/// `reduce::atomic::n=4194304`, 7.4 ms, in every trial that uses it).
pub(super) const WARMUP_SLOW: Duration = Duration::from_millis(5);

/// A round (both sides' samples, with their prepares and flushes) at least this long is slow:
/// later groups take [`SLOW_GROUP`] rounds, so that sampling stops within a few ms of the
/// precision target instead of up to 7 rounds after it (issue 22: a second group of 8 rounds of
/// `reduce::atomic::n=4194304`, 7.4 ms, as the reference of two trials, on two allocations).
/// The host's wait per group is then a small share of the group's time.
pub const SLOW_ROUND_SECONDS: f64 = 1e-3;
/// Rounds per group once rounds are slow: even, so that each side's samples keep alternating
/// the input sets by position (`stop::precise_side`) and the order of the sides alternates.
pub const SLOW_GROUP: usize = 2;

/// Rounds in the next group after one whose rounds took `per_round` seconds of wall time each.
pub(super) fn group_after(per_round: f64) -> usize {
    if per_round >= SLOW_ROUND_SECONDS {
        SLOW_GROUP
    } else {
        ROUNDS
    }
}

/// The kernel's last (checked, not kept) launches after sampling: none when it was timed
/// alone — each sample rotates to the next copy (`sample_copy`) and every group has at least
/// as many samples as the rotation, so the last timed samples wrote every copy, prepared as
/// every sample is (issue 22: two launches of a 7.4 ms kernel per allocation) —, else one
/// replay of a graph of a batch, or one sample per copy of the rotation.
pub(super) fn last_launches(with_reference: bool, graphs: usize, copies: usize) -> usize {
    match (with_reference, graphs) {
        (false, _) => 0,
        (true, 0) => copies,
        (true, n) => n,
    }
}

/// Rounds that take `samples` more samples of each side and last `time` more, at `per_round`
/// seconds each: even (the sides keep alternating their order and input sets), at least 2.
pub(super) fn rounds_to_reach(samples: usize, time: Duration, per_round: f64) -> usize {
    let for_time = (time.as_secs_f64() / per_round.max(1e-9)).ceil() as usize;
    let rounds = samples.max(for_time).max(1);
    rounds.div_ceil(2) * 2
}

/// Pilot samples that settle a side far above every threshold (`pilot_clear_of`).
pub(super) const PILOT_CLEAR_SAMPLES: usize = 2;

/// A pilot time at or above which the plan's choices for a side are all settled, on a device
/// whose launch floor is `floor`: the regime (`FLOOR_FACTOR` floors), the batch (one launch at
/// `BATCH_TARGET_SECONDS`) and a graph of one launch (`SINGLE_LAUNCH_FLOORS` floors) — each
/// with a 50% margin.
pub(super) fn pilot_clear_of(floor: f64) -> f64 {
    use crate::measure::plan::{BATCH_TARGET_SECONDS, SINGLE_LAUNCH_FLOORS};
    1.5 * (FLOOR_FACTOR * floor)
        .max(BATCH_TARGET_SECONDS)
        .max(SINGLE_LAUNCH_FLOORS * floor)
}

/// Whether warm-up may stop after `runs` runs of each kernel and `elapsed`, `clock_up` saying
/// whether the last clock reading (taken once the timer has sampled) was at the highest clock
/// seen under load.
pub(super) fn warmed(runs: usize, elapsed: Duration, clock_up: bool) -> bool {
    (runs >= WARMUP_RUNS || (runs >= 1 && elapsed >= WARMUP_SLOW))
        && (clock_up || elapsed >= WARMUP_TIME || runs >= WARMUP_MAX_RUNS)
}

/// The input copy of the sample queued `queued`-th: single launches rotate over `copies`,
/// graphs of one launch over their `graphs` (one per copy, from copy 0); with one graph of a
/// batch, which uses every copy, 0 (unused).
pub(super) fn sample_copy(queued: usize, copies: usize, graphs: usize) -> usize {
    let rotation = if graphs == 0 { copies } else { graphs };
    queued % rotation.max(1)
}

/// The input sets a side's samples alternate over, sample by sample (`stop::precise_side`):
/// single launches and graphs of one launch rotate over their copies, which with
/// [`INPUT_SETS`] copies alternate the sets (each side's samples, interleaved with the other's
/// in alternating order, still alternate: `copies_used` in the tests); 1 where every sample
/// covers every set (a graph of a batch) or the rotation is not the sets'.
pub(super) fn alternated_sets(copies: usize, graphs: usize) -> usize {
    let rotation = if graphs == 0 { copies } else { graphs };
    if graphs != 1 && rotation == INPUT_SETS {
        INPUT_SETS
    } else {
        1
    }
}
