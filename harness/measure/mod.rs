//! `measure`: the timing loop. Warm-up, then rounds in which the reference and the kernel
//! under test each take one sample between a pair of events, in alternating order, each sample
//! preceded by restoring in-out buffers and flushing L2. Sampling stops once both medians are
//! precise enough, or at the trial's time cap.
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

use crate::device::{
    elapsed_ms, DeviceBuffer, DeviceError, Event, Function, Gpu, Graph, LaunchDims,
};
use crate::stats::Summary;
use crate::suite::Bench;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Rounds queued between synchronizations.
const ROUNDS: usize = 8;
/// Warm-up: at least this many runs of each kernel...
const WARMUP_RUNS: usize = 3;
/// ...and at least this long, unless `WARMUP_MAX_RUNS` comes first.
const WARMUP_TIME: Duration = Duration::from_millis(20);
const WARMUP_MAX_RUNS: usize = 200;
/// Single-launch samples of each kernel that choose the regime.
const PILOT_SAMPLES: usize = 5;
/// Kernels faster than this many launch floors are timed as graph replays.
pub const FLOOR_FACTOR: f64 = 10.0;
/// A graph replay lasts about this long.
pub const BATCH_TARGET_SECONDS: f64 = 100e-6;
/// Launches in a graph, at most.
pub const MAX_BATCH: usize = 1024;

/// How a trial is timed; stored in baselines and results as `"cold"` or `"graph"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Regime {
    /// Single launches with L2 flushed before each.
    Cold,
    /// CUDA-graph replays of several launches over rotated input copies.
    Graph,
}

impl std::fmt::Display for Regime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Regime::Cold => "cold",
            Regime::Graph => "graph",
        })
    }
}

/// What one timed operation is: everything to do before it (untimed) and one launch.
///
/// Every timed launch must start from the state a checked launch starts from (issue 11): so
/// `prepare` puts the copies a sample will use back into that state — outputs poisoned,
/// in-out buffers restored — outside the timed interval, before the L2 flush.
pub trait Timed {
    /// Untimed preparation before a sample that uses input copy `copy` (`None`: every copy,
    /// as before a graph replay): poison its outputs and restore its in-out buffers.
    fn prepare(&mut self, gpu: &Gpu, copy: Option<usize>) -> Result<(), DeviceError>;
    /// One launch, on input copy `copy`.
    fn run(&mut self, gpu: &Gpu, copy: usize) -> Result<(), DeviceError>;
}

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
}

impl Samples {
    /// Summary of the kernel's times.
    pub fn kernel_summary(&self) -> Option<Summary> {
        Summary::of(&self.kernel)
    }

    /// Summary of the reference's times.
    pub fn reference_summary(&self) -> Option<Summary> {
        Summary::of(&self.reference)
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

/// A batch of rounds is discarded when the SM clock read after it is under this fraction of
/// the highest clock seen in the worker: a throttled sample is not the kernel's time.
pub const THROTTLE_FRACTION: f64 = 0.90;
/// A trial with more than this fraction of its rounds discarded is unreliable: never gated.
pub const UNRELIABLE_FRACTION: f64 = 0.25;
/// Iterations of the clock probe's dependent loop (about 10 µs at 2 GHz).
const PROBE_SPINS: i32 = 5000;

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
    /// Too many rounds were throttled: the trial's times are not to be trusted or gated.
    pub unreliable: bool,
}

impl Clocks {
    /// (min, median, max) MHz, when read.
    pub fn summary(&self) -> Option<(f64, f64, f64)> {
        Summary::of(&self.mhz).map(|s| (s.min, s.median, s.max))
    }
}

/// Reusable timing state on one GPU: events, the L2 flush buffer, the launch floor and the
/// clock probe.
pub struct Timer {
    events: Vec<(Event, Event)>,
    flush: Option<DeviceBuffer>,
    flushes: u8,
    /// Samples queued so far: picks the input copy of the next single-launch sample.
    queued: usize,
    floor: f64,
    clock: Function,
    clock_out: DeviceBuffer,
    max_mhz: f64,
    thermal: Option<crate::device::thermal::Thermal>,
    // Last: the functions above must not outlive their module.
    _module: crate::device::Module,
}

impl Timer {
    /// Creates events and a flush buffer twice the L2's size, and measures the launch floor
    /// with `empty`, a kernel that does nothing; `clock` reads the SM clock (both from `module`).
    pub fn new(
        gpu: &Gpu,
        empty: &Function,
        clock: Function,
        module: crate::device::Module,
    ) -> Result<Timer, DeviceError> {
        let events = (0..2 * ROUNDS)
            .map(|_| Ok((gpu.event()?, gpu.event()?)))
            .collect::<Result<_, DeviceError>>()?;
        let l2 = gpu.info.l2_bytes.max(0) as usize;
        let flush = if l2 > 0 {
            Some(gpu.alloc_plain(2 * l2)?)
        } else {
            None
        };
        let mut timer = Timer {
            events,
            flush,
            flushes: 0,
            queued: 0,
            floor: 0.0,
            clock,
            clock_out: gpu.alloc_plain(3 * 8)?,
            max_mhz: 0.0,
            thermal: gpu
                .uuid()
                .and_then(|u| crate::device::thermal::Thermal::open(&u)),
            _module: module,
        };
        let dims = LaunchDims {
            grid: [1; 3],
            block: [1; 3],
            shared: 0,
        };
        for _ in 0..20 {
            gpu.launch(empty, dims, &[])?;
        }
        let mut times = Vec::new();
        for _ in 0..100 {
            let (s, e) = &timer.events[0];
            gpu.record(s)?;
            gpu.launch(empty, dims, &[])?;
            gpu.record(e)?;
            gpu.synchronize()?;
            times.push(elapsed_ms(s, e)? as f64 / 1e3);
        }
        timer.floor = Summary::of(&times).map(|s| s.median).unwrap_or(0.0);
        for _ in 0..3 {
            timer.read_clock(gpu)?;
        }
        Ok(timer)
    }

    /// Runs the clock probe and returns the SM clock in MHz (0 when it cannot tell).
    fn read_clock(&mut self, gpu: &Gpu) -> Result<f64, DeviceError> {
        let dims = LaunchDims {
            grid: [1; 3],
            block: [32, 1, 1],
            shared: 0,
        };
        let spins = PROBE_SPINS.to_le_bytes();
        gpu.launch(
            &self.clock,
            dims,
            &[
                crate::device::KernelArg::Buffer(&self.clock_out),
                crate::device::KernelArg::Scalar(&spins),
            ],
        )?;
        let raw = gpu.download(&self.clock_out)?;
        let word =
            |i: usize| u64::from_le_bytes(raw[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (cycles, ns) = (word(0), word(1));
        let mhz = if ns > 0 {
            cycles as f64 / ns as f64 * 1e3
        } else {
            0.0
        };
        self.max_mhz = self.max_mhz.max(mhz);
        Ok(mhz)
    }

    /// The launch floor, seconds.
    pub fn floor(&self) -> f64 {
        self.floor
    }

    fn flush_l2(&mut self, gpu: &Gpu) -> Result<(), DeviceError> {
        if let Some(f) = &self.flush {
            // A different byte each time, so no write can be elided.
            self.flushes = self.flushes.wrapping_add(1);
            gpu.fill(f, self.flushes)?;
        }
        Ok(())
    }

    /// Queues one sample of `op` between the events of `slot` — one launch, or one replay of
    /// `graph` — without reading it.
    fn queue(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        op: &mut dyn Timed,
        graph: Option<&Graph>,
        copies: usize,
        slot: usize,
    ) -> Result<(), DeviceError> {
        // Single launches alternate over the input copies (one per input set); a graph
        // replay uses every copy.
        let copy = self.queued % copies;
        self.queued = self.queued.wrapping_add(1);
        op.prepare(gpu, graph.is_none().then_some(copy))?;
        if bench.l2_flush {
            self.flush_l2(gpu)?;
        }
        let (start, end) = &self.events[slot];
        gpu.record(start)?;
        match graph {
            Some(g) => gpu.replay(g)?,
            None => op.run(gpu, copy)?,
        }
        gpu.record(end)
    }

    /// Warms both kernels up, then chooses the regime from a few single-launch samples.
    /// `preferred` (the regime of the trial's baseline) wins over the floor rule, so that a
    /// kernel near the boundary is timed the same way every run; the floor itself varies
    /// between processes (seen: 4.1 to 5.2 µs on one H200).
    pub fn plan(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        kernel: &mut dyn Timed,
        mut reference: Option<&mut dyn Timed>,
        preferred: Option<Regime>,
    ) -> Result<Plan, DeviceError> {
        let start = Instant::now();
        let mut runs = 0;
        while runs < WARMUP_RUNS || (start.elapsed() < WARMUP_TIME && runs < WARMUP_MAX_RUNS) {
            let copy = runs % INPUT_SETS;
            kernel.prepare(gpu, Some(copy))?;
            kernel.run(gpu, copy)?;
            if let Some(r) = reference.as_deref_mut() {
                r.prepare(gpu, Some(copy))?;
                r.run(gpu, copy)?;
            }
            gpu.synchronize()?;
            runs += 1;
        }
        let pilot = |timer: &mut Timer, op: &mut dyn Timed| -> Result<f64, DeviceError> {
            let mut times = Vec::new();
            for _ in 0..PILOT_SAMPLES {
                timer.queue(gpu, bench, op, None, INPUT_SETS, 0)?;
                gpu.synchronize()?;
                let (s, e) = &timer.events[0];
                times.push(elapsed_ms(s, e)? as f64 / 1e3);
            }
            Ok(Summary::of(&times)
                .map(|s| s.median)
                .unwrap_or(f64::INFINITY))
        };
        let k = pilot(self, kernel)?;
        let r = match reference {
            Some(op) => pilot(self, op)?,
            None => f64::INFINITY,
        };
        let graph = match preferred {
            Some(Regime::Graph) => true,
            Some(Regime::Cold) => false,
            None => k.min(r) < FLOOR_FACTOR * self.floor,
        };
        if graph {
            Ok(Plan {
                regime: Regime::Graph,
                // At least one launch per input set, so that a replay times every set.
                kernel_batch: batch_size(k).max(INPUT_SETS),
                reference_batch: if r.is_finite() {
                    batch_size(r).max(INPUT_SETS)
                } else {
                    1
                },
            })
        } else {
            Ok(Plan {
                regime: Regime::Cold,
                kernel_batch: 1,
                reference_batch: 1,
            })
        }
    }

    /// Times `kernel`, interleaved with `reference` when given, as `plan` says, rotating
    /// through `copies` input copies within a graph.
    pub fn sample(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        plan: Plan,
        copies: usize,
        kernel: &mut dyn Timed,
        mut reference: Option<&mut dyn Timed>,
    ) -> Result<Samples, DeviceError> {
        let start = Instant::now();
        let cap = Duration::from_millis(bench.max_time_ms);
        let mut out = Samples {
            regime: plan.regime,
            batch: [plan.kernel_batch, plan.reference_batch],
            launch_floor: self.floor,
            kernel: Vec::new(),
            reference: Vec::new(),
            hit_time_cap: false,
            wall_seconds: 0.0,
            clocks: Clocks::default(),
        };
        let capture = |op: &mut dyn Timed, launches: usize| -> Result<Option<Graph>, DeviceError> {
            if plan.regime != Regime::Graph {
                return Ok(None);
            }
            op.prepare(gpu, None)?;
            gpu.capture(|gpu| (0..launches).try_for_each(|j| op.run(gpu, j % copies)))
                .map(Some)
        };
        let kernel_graph = capture(kernel, plan.kernel_batch)?;
        let reference_graph = match reference.as_deref_mut() {
            Some(r) => capture(r, plan.reference_batch)?,
            None => None,
        };
        let mut round = 0usize;
        loop {
            // Persisting-L2 lines survive a flush by writes. The worker sets the carve-out to 0
            // when it opens the device (`Gpu::disable_persisting_l2`), so none can exist; only
            // where that did not take (a limit still above 0) are they reset here, before every
            // group of rounds. The reset costs every graph launch ~0.35 µs (measured on an
            // H200, docs/timing-integrity.md §8), so it must not run where it is not needed.
            if gpu.persisting_l2_limit() > 0 {
                gpu.reset_persisting_l2()?;
            }
            // Queue a few rounds, then read every event pair.
            for b in 0..ROUNDS {
                let kernel_first = (round + b) % 2 == 0;
                for slot in 0..2 {
                    let is_kernel = (slot == 0) == kernel_first;
                    if is_kernel {
                        let g = kernel_graph.as_ref();
                        self.queue(gpu, bench, kernel, g, copies, 2 * b + slot)?;
                    } else if let Some(r) = reference.as_deref_mut() {
                        let g = reference_graph.as_ref();
                        self.queue(gpu, bench, r, g, copies, 2 * b + slot)?;
                    }
                }
            }
            gpu.synchronize()?;
            let mhz = self.read_clock(gpu)?;
            out.clocks.mhz.push(mhz);
            if let Some(c) = self.thermal.as_ref().and_then(|t| t.celsius()) {
                out.clocks.celsius.push(c);
            }
            if mhz > 0.0 && mhz < THROTTLE_FRACTION * self.max_mhz {
                // Throttled: these rounds are not the kernel's time.
                out.clocks.discarded_rounds += ROUNDS;
                round += ROUNDS;
                if start.elapsed() >= 2 * cap {
                    break;
                }
                continue;
            }
            out.clocks.kept_rounds += ROUNDS;
            for b in 0..ROUNDS {
                let kernel_first = (round + b) % 2 == 0;
                for slot in 0..2 {
                    let is_kernel = (slot == 0) == kernel_first;
                    if !is_kernel && reference.is_none() {
                        continue;
                    }
                    let (s, e) = &self.events[2 * b + slot];
                    let seconds = elapsed_ms(s, e)? as f64 / 1e3;
                    if is_kernel {
                        out.kernel.push(seconds / plan.kernel_batch as f64);
                    } else {
                        out.reference.push(seconds / plan.reference_batch as f64);
                    }
                }
            }
            round += ROUNDS;
            let n = out.kernel.len();
            let precise =
                |s: Option<Summary>| s.is_none_or(|s| s.relative_half_width() <= bench.precision);
            let reference_summary = if reference.is_some() {
                out.reference_summary()
            } else {
                None
            };
            let done = precise(out.kernel_summary()) && precise(reference_summary);
            let enough_time = start.elapsed() >= Duration::from_millis(bench.min_time_ms);
            if n >= bench.min_samples && done && enough_time {
                break;
            }
            if n >= bench.max_samples || (start.elapsed() >= cap && n >= bench.min_samples) {
                out.hit_time_cap = !done;
                break;
            }
        }
        // The kernel writes last: one more sample of it (not kept), queued exactly as the timed
        // ones — a replay of the same graph, or one single launch per input copy — so that
        // every copy's outputs are the kernel's, for the caller to check against the
        // reference ("timed work is checked work"). The kernel cannot tell it from a timed one.
        let last = if kernel_graph.is_some() { 1 } else { copies };
        for _ in 0..last {
            self.queue(gpu, bench, kernel, kernel_graph.as_ref(), copies, 0)?;
        }
        gpu.synchronize()?;
        let rounds = out.clocks.kept_rounds + out.clocks.discarded_rounds;
        out.clocks.unreliable =
            out.clocks.discarded_rounds as f64 > UNRELIABLE_FRACTION * rounds as f64;
        out.wall_seconds = start.elapsed().as_secs_f64();
        Ok(out)
    }
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
