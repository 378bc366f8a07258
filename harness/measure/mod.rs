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

/// The regime of single launches with L2 flushed before each.
pub const COLD: &str = "cold";
/// The regime of CUDA-graph replays of several launches over rotated input copies.
pub const GRAPH: &str = "graph";

/// What one timed operation is: everything to do before it (untimed) and one launch.
pub trait Timed {
    /// Untimed preparation before a sample (restore in-out buffers of every input copy).
    fn prepare(&mut self, gpu: &Gpu) -> Result<(), DeviceError>;
    /// One launch, on input copy `copy`.
    fn run(&mut self, gpu: &Gpu, copy: usize) -> Result<(), DeviceError>;
}

/// How a trial will be timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// `COLD` or `GRAPH`.
    pub regime: &'static str,
    /// Launches per sample of the kernel under test.
    pub kernel_batch: usize,
    /// Launches per sample of the reference.
    pub reference_batch: usize,
}

impl Plan {
    /// Input copies to rotate through: enough that a batch's launches together touch more
    /// than twice the L2 (one copy when not batching or not flushing).
    pub fn copies(&self, footprint_bytes: usize, l2_bytes: usize, l2_flush: bool) -> usize {
        if self.regime != GRAPH || !l2_flush {
            return 1;
        }
        let needed = (2 * l2_bytes).div_ceil(footprint_bytes.max(1));
        needed.clamp(1, self.kernel_batch.max(self.reference_batch))
    }
}

/// Launches per batch for a kernel that takes `seconds` alone: a power of two, so that small
/// differences in the pilot between runs do not change it.
pub fn batch_size(seconds: f64) -> usize {
    let n = (BATCH_TARGET_SECONDS / seconds.max(1e-9)).ceil() as usize;
    n.max(1).next_power_of_two().min(MAX_BATCH)
}

/// What a kernel occupies on the device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Samples {
    /// How they were taken (`COLD` or `GRAPH`).
    pub regime: String,
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
        slot: usize,
    ) -> Result<(), DeviceError> {
        op.prepare(gpu)?;
        if bench.l2_flush {
            self.flush_l2(gpu)?;
        }
        let (start, end) = &self.events[slot];
        gpu.record(start)?;
        match graph {
            Some(g) => gpu.replay(g)?,
            None => op.run(gpu, 0)?,
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
        preferred: Option<&str>,
    ) -> Result<Plan, DeviceError> {
        let start = Instant::now();
        let mut runs = 0;
        while runs < WARMUP_RUNS || (start.elapsed() < WARMUP_TIME && runs < WARMUP_MAX_RUNS) {
            kernel.prepare(gpu)?;
            kernel.run(gpu, 0)?;
            if let Some(r) = reference.as_deref_mut() {
                r.prepare(gpu)?;
                r.run(gpu, 0)?;
            }
            gpu.synchronize()?;
            runs += 1;
        }
        let pilot = |timer: &mut Timer, op: &mut dyn Timed| -> Result<f64, DeviceError> {
            let mut times = Vec::new();
            for _ in 0..PILOT_SAMPLES {
                timer.queue(gpu, bench, op, None, 0)?;
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
            Some(GRAPH) => true,
            Some(COLD) => false,
            _ => k.min(r) < FLOOR_FACTOR * self.floor,
        };
        if graph {
            Ok(Plan {
                regime: GRAPH,
                kernel_batch: batch_size(k),
                reference_batch: if r.is_finite() { batch_size(r) } else { 1 },
            })
        } else {
            Ok(Plan {
                regime: COLD,
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
            regime: plan.regime.to_string(),
            batch: [plan.kernel_batch, plan.reference_batch],
            launch_floor: self.floor,
            kernel: Vec::new(),
            reference: Vec::new(),
            hit_time_cap: false,
            wall_seconds: 0.0,
            clocks: Clocks::default(),
        };
        let capture = |op: &mut dyn Timed, launches: usize| -> Result<Option<Graph>, DeviceError> {
            if plan.regime != GRAPH {
                return Ok(None);
            }
            op.prepare(gpu)?;
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
            // Queue a few rounds, then read every event pair.
            for b in 0..ROUNDS {
                let kernel_first = (round + b) % 2 == 0;
                for slot in 0..2 {
                    let is_kernel = (slot == 0) == kernel_first;
                    if is_kernel {
                        self.queue(gpu, bench, kernel, kernel_graph.as_ref(), 2 * b + slot)?;
                    } else if let Some(r) = reference.as_deref_mut() {
                        self.queue(gpu, bench, r, reference_graph.as_ref(), 2 * b + slot)?;
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
    fn copies_outgrow_l2_but_not_the_batch() {
        let batch = Plan {
            regime: GRAPH,
            kernel_batch: 32,
            reference_batch: 8,
        };
        assert_eq!(
            batch.copies(32 << 10, 50 << 20, true),
            32,
            "capped by the largest batch"
        );
        assert_eq!(batch.copies(16 << 20, 50 << 20, true), 7);
        assert_eq!(
            batch.copies(32 << 10, 50 << 20, false),
            1,
            "no flush, no rotation"
        );
        let cold = Plan {
            regime: COLD,
            kernel_batch: 1,
            reference_batch: 1,
        };
        assert_eq!(cold.copies(32 << 10, 50 << 20, true), 1);
    }
}
