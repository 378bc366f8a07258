//! `measure`: the timing loop. Warm-up, then rounds in which the reference and the kernel
//! under test each run once between a pair of events, in alternating order, each sample
//! preceded by restoring in-out buffers and flushing L2. Sampling stops once both medians are
//! precise enough, or at the trial's time cap.

use crate::device::{elapsed_ms, DeviceBuffer, DeviceError, Event, Gpu};
use crate::stats::Summary;
use crate::suite::Bench;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Rounds queued between synchronizations.
const BATCH: usize = 8;
/// Warm-up: at least this many runs of each kernel...
const WARMUP_RUNS: usize = 3;
/// ...and at least this long, unless `WARMUP_MAX_RUNS` comes first.
const WARMUP_TIME: Duration = Duration::from_millis(20);
const WARMUP_MAX_RUNS: usize = 200;

/// What one timed operation is: everything to do before it (untimed) and the launch itself.
pub trait Timed {
    /// Untimed preparation before a sample (restore in-out buffers).
    fn prepare(&mut self, gpu: &Gpu) -> Result<(), DeviceError>;
    /// The timed work.
    fn run(&mut self, gpu: &Gpu) -> Result<(), DeviceError>;
}

/// How samples were taken. Baselines of another regime are not compared.
pub const REGIME: &str = "cold";

/// Samples of one trial, seconds per run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Samples {
    /// How they were taken (`REGIME`).
    pub regime: String,
    /// The kernel under test.
    pub kernel: Vec<f64>,
    /// The reference, one per round, paired with `kernel` by index (empty for the reference's
    /// own trial).
    pub reference: Vec<f64>,
    /// Whether the time cap stopped sampling before the precision target was met.
    pub hit_time_cap: bool,
    /// Wall time spent sampling.
    pub wall_seconds: f64,
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

    /// Speedup over the reference: the median of per-round ratios reference / kernel, with
    /// its interval. Pairing by round cancels drift that affects both.
    pub fn speedup(&self) -> Option<Summary> {
        let ratios: Vec<f64> = self
            .reference
            .iter()
            .zip(&self.kernel)
            .map(|(r, k)| r / k)
            .collect();
        Summary::of(&ratios)
    }
}

/// Reusable timing state on one GPU: events and the L2 flush buffer.
pub struct Timer {
    events: Vec<(Event, Event)>,
    flush: Option<DeviceBuffer>,
    flushes: u8,
}

impl Timer {
    /// Creates events for a batch, and a flush buffer twice the L2's size.
    pub fn new(gpu: &Gpu) -> Result<Timer, DeviceError> {
        let events = (0..2 * BATCH)
            .map(|_| Ok((gpu.event()?, gpu.event()?)))
            .collect::<Result<_, DeviceError>>()?;
        let l2 = gpu.info.l2_bytes.max(0) as usize;
        let flush = if l2 > 0 {
            Some(gpu.alloc(2 * l2)?)
        } else {
            None
        };
        Ok(Timer {
            events,
            flush,
            flushes: 0,
        })
    }

    fn flush_l2(&mut self, gpu: &Gpu) -> Result<(), DeviceError> {
        if let Some(f) = &self.flush {
            // A different byte each time, so no write can be elided.
            self.flushes = self.flushes.wrapping_add(1);
            gpu.fill(f, self.flushes)?;
        }
        Ok(())
    }

    /// Times `kernel`, interleaved with `reference` when given.
    pub fn sample(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        kernel: &mut dyn Timed,
        mut reference: Option<&mut dyn Timed>,
    ) -> Result<Samples, DeviceError> {
        // Warm-up: module load, caches and clocks settle before anything is recorded.
        let start = Instant::now();
        let mut runs = 0;
        while runs < WARMUP_RUNS || (start.elapsed() < WARMUP_TIME && runs < WARMUP_MAX_RUNS) {
            kernel.prepare(gpu)?;
            kernel.run(gpu)?;
            if let Some(r) = reference.as_deref_mut() {
                r.prepare(gpu)?;
                r.run(gpu)?;
            }
            gpu.synchronize()?;
            runs += 1;
        }

        let start = Instant::now();
        let cap = Duration::from_millis(bench.max_time_ms);
        let mut out = Samples {
            regime: REGIME.to_string(),
            kernel: Vec::new(),
            reference: Vec::new(),
            hit_time_cap: false,
            wall_seconds: 0.0,
        };
        let mut round = 0usize;
        loop {
            // Queue a batch of rounds, then read every event pair.
            for b in 0..BATCH {
                let kernel_first = round % 2 == 0;
                round += 1;
                for slot in 0..2 {
                    let is_kernel = (slot == 0) == kernel_first;
                    let op: &mut dyn Timed = if is_kernel {
                        &mut *kernel
                    } else if let Some(r) = reference.as_deref_mut() {
                        r
                    } else {
                        continue;
                    };
                    op.prepare(gpu)?;
                    if bench.l2_flush {
                        self.flush_l2(gpu)?;
                    }
                    let (first_event, second_event) = &self.events[2 * b + slot];
                    gpu.record(first_event)?;
                    op.run(gpu)?;
                    gpu.record(second_event)?;
                }
            }
            gpu.synchronize()?;
            for b in 0..BATCH {
                let kernel_first = (round - BATCH + b) % 2 == 0;
                for slot in 0..2 {
                    let is_kernel = (slot == 0) == kernel_first;
                    if !is_kernel && reference.is_none() {
                        continue;
                    }
                    let (s, e) = &self.events[2 * b + slot];
                    let seconds = elapsed_ms(s, e)? as f64 / 1e3;
                    if is_kernel {
                        out.kernel.push(seconds);
                    } else {
                        out.reference.push(seconds);
                    }
                }
            }
            let n = out.kernel.len();
            let precise =
                |s: Option<Summary>| s.is_none_or(|s| s.relative_half_width() <= bench.precision);
            let reference_summary = if reference.is_some() {
                out.reference_summary()
            } else {
                None
            };
            let done = precise(out.kernel_summary()) && precise(reference_summary);
            if n >= bench.min_samples && done {
                break;
            }
            if n >= bench.max_samples {
                out.hit_time_cap = !done;
                break;
            }
            if start.elapsed() >= cap && n >= bench.min_samples {
                out.hit_time_cap = true;
                break;
            }
        }
        out.wall_seconds = start.elapsed().as_secs_f64();
        Ok(out)
    }
}
