//! `NextestRun`: the perf binary under `cargo nextest run`, which starts one process per trial.
//! What must hold for a run — one GPU trial at a time per GPU, one false-discovery family,
//! complete reports, one bless — holds because the first process of the run to take the run's
//! lock runs every trial once, exactly as `cargo test --test perf` would, and writes the
//! run's results where every other process (itself included) reads its own trial's outcome.
//!
//! Listing is the other half: nextest asks `--list --format terse` and `--list --ignored`, and
//! skips what the second lists. So a GPU trial is listed as ignored when no CUDA driver loads
//! (and a compile trial when NVRTC does not), unless `KERNELGATE_REQUIRE_*` makes it fail.

mod invocation;
mod share;

pub use invocation::{invocation, Invocation, InvocationError, NextestRun, PROCESS_PER_TEST};
pub use share::{Shared, StateError};

use crate::config::Config;
use crate::runner::{Kind, Planned};
use std::path::PathBuf;
use std::time::Duration;

/// The target directory: `CARGO_TARGET_DIR`, or `target` (relative to the working
/// directory, which nextest sets to the package's folder, as cargo does).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// Whether `--list` marks `trial` ignored: a GPU trial when no CUDA driver loads, a compile
/// trial when NVRTC does not — each unless the matching `KERNELGATE_REQUIRE_*` is set, which
/// makes it run and fail instead. Nextest skips what is listed ignored.
pub fn listed_ignored(config: &Config, trial: &Planned) -> bool {
    match trial.kind {
        Kind::Compile => !config.require_nvrtc && crate::device::nvrtc_missing().is_some(),
        Kind::Kernel { .. } => !config.require_gpu && crate::device::driver_missing().is_some(),
    }
}

/// How long a process waits for the run's lock: as long as the process holding it may take
/// to run `trials` trials, each re-measured once at [`crate::gate::REMEASURE_EFFORT`] times
/// the per-trial time-out. A process that dies frees the lock at once, so this limit is only
/// met when the one running the trials hangs past every time-out of its own.
pub fn wait_limit(config: &Config, trials: usize) -> Duration {
    let trials = u32::try_from(trials.max(1)).unwrap_or(u32::MAX);
    config
        .timeout
        .saturating_mul(1 + crate::gate::REMEASURE_EFFORT)
        .saturating_mul(trials)
        .saturating_add(Duration::from_secs(60))
}
