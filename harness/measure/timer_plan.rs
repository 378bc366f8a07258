//! `Timer::plan`: warm-up, then the pilot that picks a group's regime and each side's batch.

use super::rules::{pilot_clear_of, warmed, PILOT_CLEAR_SAMPLES, WARMUP_RUNS, WARMUP_SLOW};
use super::{Timed, Timer, PILOT_SAMPLES, THROTTLE_FRACTION};
use crate::device::{counters, elapsed_seconds, DeviceError, Gpu};
use crate::measure::plan::{graph_batch, Plan, FLOOR_FACTOR, INPUT_SETS};
use crate::measure::samples::Regime;
use crate::stats::Summary;
use crate::suite::{Bench, Flush};
use std::time::Instant;

impl Timer {
    /// Warms every kernel and the reference up, then chooses the regime from a few
    /// single-launch samples of each: one regime for all (they share their rounds), a batch
    /// per kernel. `preferred` (the regime of the trial's baseline) wins over the floor rule, so
    /// that a kernel near the boundary is timed the same way every run; the floor itself varies
    /// between processes (seen: 4.1 to 5.2 µs on one H200).
    pub fn plan(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        kernels: &mut [&mut dyn Timed],
        mut reference: Option<&mut dyn Timed>,
        preferred: Option<Regime>,
    ) -> Result<Vec<Plan>, DeviceError> {
        let start = Instant::now();
        let mut runs = 0;
        let mut clock_up = false;
        while !warmed(runs, start.elapsed(), clock_up) {
            let copy = runs % INPUT_SETS;
            for op in kernels.iter_mut() {
                op.prepare(gpu, Some(copy))?;
                op.run(gpu, copy)?;
            }
            if let Some(r) = reference.as_deref_mut() {
                r.prepare(gpu, Some(copy))?;
                r.run(gpu, copy)?;
            }
            if (runs + 1 >= WARMUP_RUNS || start.elapsed() >= WARMUP_SLOW) && self.sampled {
                // Queued behind the runs: its reading waits for them too.
                clock_up = self.read_clock(gpu)? >= THROTTLE_FRACTION * self.max_mhz;
            } else {
                gpu.synchronize()?;
            }
            runs += 1;
        }
        let mut ks = Vec::with_capacity(kernels.len());
        for k in kernels.iter_mut() {
            ks.push(self.pilot(gpu, bench, &mut **k)?);
        }
        let r = match reference {
            Some(op) => self.pilot(gpu, bench, op)?,
            None => f64::INFINITY,
        };
        // Under a clean flush, CUPTI's kernel records time single launches as Nsight Compute
        // does, whatever their length; where CUPTI cannot load, events as for any flush.
        let cupti = bench.l2_flush == Flush::Clean && counters::cupti_missing().is_none();
        let fastest = ks.iter().copied().fold(r, f64::min);
        let graph = !cupti
            && match preferred {
                Some(Regime::Graph) => true,
                Some(_) => false,
                None => fastest < FLOOR_FACTOR * self.floor,
            };
        // Graphs time every input set: a launch per set in a replay, or a graph per set.
        let batch = |t: f64| match graph && t.is_finite() {
            true => graph_batch(t, self.floor),
            false => 1,
        };
        let regime = match (cupti, graph) {
            (true, _) => Regime::Cupti,
            (_, true) => Regime::Graph,
            _ => Regime::Cold,
        };
        let plans: Vec<Plan> = ks
            .iter()
            .map(|&k| Plan {
                regime,
                kernel_batch: batch(k),
                reference_batch: batch(r),
            })
            .collect();
        let r = if r.is_finite() {
            r * batch(r) as f64
        } else {
            0.0
        };
        let k: f64 = ks
            .iter()
            .zip(&plans)
            .map(|(k, p)| k * p.kernel_batch as f64)
            .sum();
        self.pilot_round = k + r;
        Ok(plans)
    }

    /// The median of a few single-launch samples of `op`: fewer once it is far above every
    /// threshold the plan compares with.
    fn pilot(&mut self, gpu: &Gpu, bench: &Bench, op: &mut dyn Timed) -> Result<f64, DeviceError> {
        let clear = pilot_clear_of(self.floor);
        let mut times = Vec::new();
        for turn in 0..PILOT_SAMPLES {
            self.queue(gpu, bench, op, &[], INPUT_SETS, (0, turn))?;
            gpu.synchronize()?;
            let (s, e) = &self.events[0];
            times.push(elapsed_seconds(s, e)?);
            if times.len() >= PILOT_CLEAR_SAMPLES && times.iter().all(|t| *t >= clear) {
                break;
            }
        }
        Ok(Summary::of(&times)
            .map(|s| s.median)
            .unwrap_or(f64::INFINITY))
    }
}
