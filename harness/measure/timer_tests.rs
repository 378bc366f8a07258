//! The `Timer`'s rules, without a GPU.

use super::*;
use crate::measure::FLOOR_FACTOR;
use std::time::Duration;

/// The copies each side's samples use over `rounds` rounds queued as `queue_rounds` does (the
/// order of the sides rotated by one each round), `graphs` per side (0: single launches).
fn copies_used(rounds: usize, copies: usize, graphs: &[usize]) -> Vec<Vec<usize>> {
    let sides = graphs.len();
    let mut used = vec![Vec::new(); sides];
    for round in 0..rounds {
        for position in 0..sides {
            let side = (position + round) % sides;
            used[side].push(sample_copy(round, copies, graphs[side]));
        }
    }
    used
}

#[test]
fn each_side_alternates_its_input_sets_sample_by_sample() {
    // A 4 µs kernel replayed in one graph of 32 launches over 32 copies; a 7 ms reference
    // in a graph of one launch per input set: it alternates sets 0 and 1.
    let used = copies_used(8, 32, &[1, INPUT_SETS]);
    assert_eq!(used[1], [0, 1, 0, 1, 0, 1, 0, 1]);
    // A slow kernel against a fast reference: the same for the kernel.
    let used = copies_used(8, 32, &[INPUT_SETS, 1]);
    assert_eq!(used[0], [0, 1, 0, 1, 0, 1, 0, 1]);
    // Cold: single launches over the copies.
    let used = copies_used(4, INPUT_SETS, &[0, 0]);
    assert_eq!(used, [vec![0, 1, 0, 1], vec![0, 1, 0, 1]]);
    // Three variants and their reference in the same rounds: each side still alternates.
    for side in copies_used(6, INPUT_SETS, &[0, 0, INPUT_SETS, 0]) {
        assert_eq!(side, [0, 1, 0, 1, 0, 1]);
    }
    // The kernel's last launches, queued turn by turn, reach every graph of one launch.
    let last: Vec<usize> = (0..INPUT_SETS)
        .map(|turn| sample_copy(turn, 32, INPUT_SETS))
        .collect();
    assert_eq!(last, [0, 1]);
}

#[test]
fn a_kernel_timed_alone_has_written_every_copy_last_already() {
    assert_eq!(last_launches(false, 0, INPUT_SETS), 0);
    assert_eq!(last_launches(false, 1, 32), 0);
    assert_eq!(
        last_launches(true, 0, INPUT_SETS),
        INPUT_SETS,
        "cold: each copy"
    );
    assert_eq!(last_launches(true, 1, 32), 1, "one replay of the batch");
    assert_eq!(
        last_launches(true, INPUT_SETS, 32),
        INPUT_SETS,
        "graphs of one"
    );
    // Alone, the last `rotation` samples of the smallest group reach every copy.
    let rotation = INPUT_SETS;
    assert!(
        SLOW_GROUP >= rotation,
        "the smallest group reaches every copy"
    );
    let last: Vec<usize> = (7..7 + SLOW_GROUP)
        .map(|q| sample_copy(q, INPUT_SETS, 0))
        .collect();
    assert!((0..INPUT_SETS).all(|c| last.contains(&c)));
}

#[test]
fn slow_rounds_are_sampled_in_small_even_groups() {
    assert_eq!(group_after(10e-6), ROUNDS);
    assert_eq!(group_after(0.99e-3), ROUNDS);
    assert_eq!(group_after(7.4e-3), SLOW_GROUP);
    assert!(SLOW_GROUP.is_multiple_of(INPUT_SETS) && ROUNDS.is_multiple_of(INPUT_SETS));
}

#[test]
fn precise_sampling_short_of_its_minimum_queues_only_what_reaches_it() {
    let ms = Duration::from_millis;
    // 1.4 ms to go at 0.32 ms a round: 5 rounds, made even.
    assert_eq!(rounds_to_reach(0, Duration::from_micros(1400), 320e-6), 6);
    assert_eq!(rounds_to_reach(3, ms(0), 320e-6), 4, "3 samples more");
    assert_eq!(rounds_to_reach(0, ms(0), 320e-6), 2, "never fewer than 2");
    assert_eq!(
        rounds_to_reach(0, ms(50), 320e-6),
        158,
        "capped by the group"
    );
}

#[test]
fn a_pilot_stops_early_only_far_above_every_threshold() {
    use crate::measure::plan::{batch_size, graph_batch};
    let floor = 6.5e-6;
    let clear = pilot_clear_of(floor);
    // At the clear time, every choice is already the one a slower time gets.
    assert!(clear >= 1.5 * FLOOR_FACTOR * floor);
    assert_eq!(batch_size(clear / 1.5), 1);
    assert_eq!(graph_batch(clear / 1.5, floor), 1);
    assert!(clear < 7.4e-3, "reduce::atomic at 4M stops after two");
    assert!(clear > 200e-6, "a 200 µs kernel takes every pilot sample");
}

#[test]
fn only_sides_that_alternate_their_input_sets_are_split_by_set() {
    assert_eq!(alternated_sets(INPUT_SETS, 0), INPUT_SETS, "cold");
    assert_eq!(alternated_sets(32, INPUT_SETS), INPUT_SETS, "graphs of one");
    assert_eq!(
        alternated_sets(32, 1),
        1,
        "a graph of a batch covers every set"
    );
    assert_eq!(alternated_sets(1, 0), 1, "one input set");
    // Every kernel sample at an even index is on one set, every odd one on the other.
    for side in copies_used(16, INPUT_SETS, &[0, 0]) {
        assert!(side.iter().step_by(2).all(|c| *c == side[0]));
        assert!(side.iter().skip(1).step_by(2).all(|c| *c != side[0]));
    }
}

#[test]
fn warm_up_ends_with_the_clock_up_but_never_before_its_runs() {
    let ms = Duration::from_millis;
    assert!(
        !warmed(2, ms(4), true),
        "at least WARMUP_RUNS, clock or not, unless they were slow"
    );
    assert!(warmed(3, ms(1), true), "a clock that is up ends it");
    assert!(
        !warmed(3, ms(1), false),
        "a clock not up waits for the time"
    );
    assert!(warmed(3, WARMUP_TIME, false));
    assert!(
        warmed(1, WARMUP_SLOW, true),
        "one run of a slow kernel, clock up, is enough"
    );
    assert!(
        !warmed(1, WARMUP_SLOW, false),
        "but not with the clock down"
    );
    assert!(!warmed(2, ms(4), true), "fast runs still need WARMUP_RUNS");
    assert!(
        warmed(WARMUP_MAX_RUNS, ms(1), false),
        "or for the most runs"
    );
}
