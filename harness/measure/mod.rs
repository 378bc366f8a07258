//! `measure`: the timing loop. Warm-up, then rounds in which the reference and the kernel
//! under test each take one sample between a pair of events, in alternating order, each sample
//! preceded by restoring in-out buffers and flushing L2. Sampling stops once both medians are
//! precise enough, or at the trial's time cap ([`stop`], a pure function). The stored types
//! (`Samples`, `Footprint`) are in `samples.rs`, apart from the loop (`timer.rs`).
//!
//! Near the launch floor (the event-timed time of an empty kernel, measured when the worker
//! starts) a single launch measures launch latency more than the kernel, and drifts between
//! processes. A trial whose kernel or reference takes less than `FLOOR_FACTOR` times the floor
//! is timed in the `graph` regime: a batch of launches, each on its own copy of the inputs
//! (rotated so that together they outgrow L2: the cache is still not what is measured), is
//! captured into a CUDA graph, each sample is one replay, and the time per launch is reported.
//! A graph keeps the host out of the timed region: launches issued one by one from the host
//! measured the host's submission rate instead (seen: 2.2 µs per launch in one process,
//! 4.7 µs in another, for the same kernel).

#![deny(clippy::too_many_lines)]

pub mod contention;
pub mod counters;
pub mod counters_valid;
pub mod memo;
mod plan;
mod profile;
mod samples;
pub mod stop;
mod timer;

pub use plan::{
    batch_size, graph_batch, Plan, BATCH_TARGET_SECONDS, FLOOR_FACTOR, INPUT_SETS, MAX_BATCH,
    SINGLE_LAUNCH_FLOORS,
};
pub use samples::{Clocks, Footprint, Regime, Resources, Samples, Unit};
pub use timer::{
    clock::{now_us, OthersQuery},
    Sampled, Timed, Timer, ROUNDS, THROTTLE_FRACTION, UNRELIABLE_FRACTION,
};
