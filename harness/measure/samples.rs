//! `Samples`: what timing one trial produced, as results and baselines store it — the regime,
//! the samples of the kernel and of what it was timed against, the SM clock while sampling —
//! and the kernel's `Footprint`. Plain data: the timing loop that fills it is `timer.rs`.

use crate::stats::Summary;
use serde::{Deserialize, Serialize};

/// How a trial is timed; stored in baselines and results as `"cold"`, `"graph"` or `"cupti"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Regime {
    /// Single launches with L2 flushed before each.
    Cold,
    /// CUDA-graph replays of several launches over rotated input copies.
    Graph,
    /// Single launches, each after an L2 flush left clean (`l2_flush = "clean"`), each timed by
    /// CUPTI's kernel records: the sum of its kernels' GPU times, without the gaps between
    /// them or the launch's own cost — Nsight Compute's `gpu__time_duration`.
    Cupti,
}

impl std::fmt::Display for Regime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Regime::Cold => "cold",
            Regime::Graph => "graph",
            Regime::Cupti => "cupti",
        })
    }
}

/// What a kernel occupies on the device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Footprint {
    /// The stream-ordered pool's high-water mark during one run: the case's buffers and the
    /// kernel's scratch, bytes.
    pub pool_peak: u64,
    /// How far the driver's free memory fell across the kernel's first run in the worker,
    /// bytes: the pool's growth plus what the pool does not see (local memory reserved for
    /// spills and stack frames, kept by the driver once reserved).
    pub free_drop: u64,
    /// Local memory the largest launch implies for every thread the GPU can hold at once
    /// (local bytes per thread × threads per SM × SMs), bytes: what the driver reserves.
    pub local_reservation: u64,
    /// Each launch's resources.
    pub launches: Vec<Resources>,
    /// Double-precision instructions in the kernel's code (all launches; `mix`): the count and
    /// the first, as written in the PTX. `None` when there are none (boxed: the worker's
    /// response stays small).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64: Option<Box<crate::device::ptx::Fp64Use>>,
    /// For a library call, the algorithm the library chose (`Gemm::algorithm`); its kernels,
    /// as CUPTI recorded them, are `launches` (without occupancy: `blocks_per_sm` 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
}

/// One launch's resources, from the function's attributes and the occupancy calculator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// The entry launched.
    pub entry: String,
    /// Registers per thread.
    pub registers: i32,
    /// Static shared memory per block, bytes.
    pub static_shared: i32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
    /// Local memory per thread (spills, run-time-indexed arrays), bytes.
    pub local_bytes: i32,
    /// Largest block the function can be launched with.
    pub max_threads: i32,
    /// Threads per block of this launch.
    pub block_threads: u32,
    /// Blocks of this launch resident per SM at once.
    pub blocks_per_sm: i32,
}

/// Samples of one trial, seconds per launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// How they were taken (the regime).
    pub regime: Regime,
    /// Launches per sample: kernel, reference.
    pub batch: [usize; 2],
    /// The event-timed empty-kernel time on this device, seconds.
    pub launch_floor: f64,
    /// The kernel under test.
    pub kernel: Vec<f64>,
    /// The reference, one per round, paired with `kernel` by index (empty for the reference's
    /// own trial).
    pub reference: Vec<f64>,
    /// Whether the time cap stopped sampling before the precision target was met.
    pub hit_time_cap: bool,
    /// Wall time spent sampling.
    pub wall_seconds: f64,
    /// The SM clock while sampling.
    pub clocks: Clocks,
    /// The allocations the samples were taken on, in order: each a fresh set of the case's
    /// buffers and timing copies (the unit that carries a kernel's timing mode, measured:
    /// `docs/measurement.md`). Empty in files written before units were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<Unit>,
}

/// One allocation's share of a trial's samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// How many of `Samples::kernel` (in order) it took.
    pub kernel_samples: usize,
    /// How many of `Samples::reference` it took.
    pub reference_samples: usize,
    /// The kernel's median on it, seconds.
    pub kernel_median: f64,
}

impl Samples {
    /// No samples: what a counters-only request (never timed) returns, and what the timer
    /// fills in.
    pub fn none() -> Samples {
        Samples {
            regime: Regime::Cold,
            batch: [1, 1],
            launch_floor: 0.0,
            kernel: Vec::new(),
            reference: Vec::new(),
            hit_time_cap: false,
            wall_seconds: 0.0,
            clocks: Clocks::default(),
            units: Vec::new(),
        }
    }

    /// Appends the samples of another allocation of the same trial (same regime and plan).
    pub fn append(&mut self, mut more: Samples) {
        self.kernel.append(&mut more.kernel);
        self.reference.append(&mut more.reference);
        self.hit_time_cap |= more.hit_time_cap;
        self.wall_seconds += more.wall_seconds;
        self.clocks.mhz.append(&mut more.clocks.mhz);
        self.clocks.celsius.append(&mut more.clocks.celsius);
        self.clocks.discarded_rounds += more.clocks.discarded_rounds;
        self.clocks.kept_rounds += more.clocks.kept_rounds;
        self.clocks.contended_rounds += more.clocks.contended_rounds;
        self.clocks.unreliable |= more.clocks.unreliable;
        let others = std::mem::take(&mut self.clocks.others).into_iter();
        self.clocks.others = crate::order::first_seen(others.chain(more.clocks.others));
        self.units.append(&mut more.units);
    }

    /// Marks every sample not yet in a unit as one more unit.
    pub fn close_unit(&mut self) {
        let taken: usize = self.units.iter().map(|u| u.kernel_samples).sum();
        let taken_ref: usize = self.units.iter().map(|u| u.reference_samples).sum();
        let kernel = &self.kernel[taken.min(self.kernel.len())..];
        self.units.push(Unit {
            kernel_samples: kernel.len(),
            reference_samples: self.reference.len().saturating_sub(taken_ref),
            kernel_median: Summary::of(kernel).map_or(0.0, |s| s.median),
        });
    }

    /// The kept samples' times summed, each the time per launch: (kernel, reference).
    pub fn per_launch_seconds(&self) -> (f64, f64) {
        (self.kernel.iter().sum(), self.reference.iter().sum())
    }

    /// GPU time of every launch the kept samples timed: each sample times its whole batch (a
    /// graph replay's launches; one launch otherwise).
    pub fn launch_seconds(&self) -> f64 {
        let (kernel, reference) = self.per_launch_seconds();
        kernel * self.batch[0] as f64 + reference * self.batch[1] as f64
    }

    /// Summary of the kernel's times.
    pub fn kernel_summary(&self) -> Option<Summary> {
        Summary::of(&self.kernel)
    }

    /// Per-round speedups over the reference: reference / kernel, paired by round (empty for
    /// the reference's own trial).
    pub fn ratios(&self) -> Vec<f64> {
        self.reference
            .iter()
            .zip(&self.kernel)
            .map(|(r, k)| r / k)
            .collect()
    }

    /// Speedup over the reference: the median of per-round ratios reference / kernel, with
    /// its interval. Pairing by round cancels drift that affects both.
    pub fn speedup(&self) -> Option<Summary> {
        Summary::of(&self.ratios())
    }
}

/// The SM clock during a trial's sampling, read by a probe kernel after every few rounds
/// (`clock64()` cycles over `%globaltimer` nanoseconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    /// Each reading, MHz.
    pub mhz: Vec<f64>,
    /// The GPU's temperature at each reading, °C (empty where NVML is not available).
    #[serde(default)]
    pub celsius: Vec<f64>,
    /// Rounds discarded because the clock read after them was throttled.
    pub discarded_rounds: usize,
    /// Rounds kept.
    pub kept_rounds: usize,
    /// Too many rounds were throttled or contended, or another process used the GPU: the
    /// trial's times are not to be trusted or gated.
    pub unreliable: bool,
    /// Rounds dropped because another context held the GPU (`measure::contention`), counted
    /// apart from the throttled ones in `discarded_rounds`.
    #[serde(default)]
    pub contended_rounds: usize,
    /// Other processes NVML saw using the GPU's SMs while the trial was timed (`pid 4242
    /// (python3)`); empty where NVML cannot tell.
    #[serde(default)]
    pub others: Vec<String>,
}

impl Clocks {
    /// (min, median, max) MHz, when read.
    pub fn summary(&self) -> Option<(f64, f64, f64)> {
        Summary::of(&self.mhz).map(|s| (s.min, s.median, s.max))
    }
}
