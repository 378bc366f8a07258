//! `RunTotals`: where a run's time went — setup, correctness, sampling, counter reads — and
//! what the clocks did, for its closing lines and its results file.

use crate::measure::Regime;
use serde::{Deserialize, Serialize};

/// Where a run's time went, and what the clocks did, for its summary lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunTotals {
    /// Kernel trials measured (re-measures included).
    pub trials_measured: usize,
    /// Seconds compiling, loading and allocating.
    pub setup_seconds: f64,
    /// Seconds checking correctness.
    pub check_seconds: f64,
    /// Seconds sampling.
    pub sampled_seconds: f64,
    /// Kernel time inside the samples.
    pub kernel_seconds: f64,
    /// NVRTC compiles.
    pub compiled: usize,
    /// Modules from the compile cache.
    pub cached: usize,
    /// The last launch floor measured, seconds.
    pub launch_floor: Option<f64>,
    /// Trials timed as CUDA-graph replays.
    pub batched: usize,
    /// Every SM clock reading, MHz.
    pub clock_mhz: Vec<f64>,
    /// Every temperature reading, °C.
    pub celsius: Vec<f64>,
    /// Rounds dropped as throttled.
    pub dropped_rounds: usize,
    /// Trials marked unreliable.
    pub unreliable: usize,
    /// GPU worker processes started.
    pub worker_starts: usize,
    /// Trials whose hardware counters were read (counters-only requests).
    #[serde(default)]
    pub counter_reads: usize,
    /// Wall seconds of those requests.
    #[serde(default)]
    pub counter_seconds: f64,
}

impl RunTotals {
    /// Counts one measured trial's samples.
    pub fn add(&mut self, samples: &crate::measure::Samples) {
        self.trials_measured += 1;
        self.launch_floor = Some(samples.launch_floor);
        self.batched += (samples.regime == Regime::Graph) as usize;
        self.clock_mhz.extend(&samples.clocks.mhz);
        self.celsius.extend(&samples.clocks.celsius);
        self.dropped_rounds += samples.clocks.discarded_rounds;
        self.unreliable += samples.clocks.unreliable as usize;
        self.sampled_seconds += samples.wall_seconds;
        self.kernel_seconds +=
            samples.kernel.iter().sum::<f64>() + samples.reference.iter().sum::<f64>();
    }
}
