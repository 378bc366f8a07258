//! `Timer`: the timing loop on one GPU — warm-up, the pilot that picks the regime, then
//! interleaved rounds until the stopping rule says enough, with the SM clock watched.

use super::plan::{graph_batch, Plan, FLOOR_FACTOR, INPUT_SETS};
use super::profile::Splits;
use super::samples::{Regime, Samples};
use super::stop::{self, Next};
use crate::device::counters::{self, KernelRecord};
use crate::device::{
    elapsed_seconds, DeviceBuffer, DeviceError, Event, Function, Gpu, Graph, LaunchDims,
};
use crate::stats::Summary;
use crate::suite::{Bench, Flush};
use std::time::Instant;

/// Single-launch samples of each kernel that choose the regime.
const PILOT_SAMPLES: usize = 5;
/// A batch of rounds is discarded when the SM clock read after it is under this fraction of
/// the highest clock seen in the worker: a throttled sample is not the kernel's time.
pub const THROTTLE_FRACTION: f64 = 0.90;
/// A trial with more than this fraction of its rounds discarded is unreliable: never gated.
pub const UNRELIABLE_FRACTION: f64 = 0.25;
/// Iterations of the clock probe's dependent loop (about 10 µs at 2 GHz).
const PROBE_SPINS: i32 = 5000;

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
    /// Where the clock probe's words are read back to (reused: no allocation per reading).
    clock_host: [u8; 24],
    max_mhz: f64,
    /// Whether this timer has sampled: its highest clock reading is then one under load.
    sampled: bool,
    thermal: Option<std::sync::Arc<crate::device::thermal::Thermal>>,
    /// The sampling profile's events and figures, under `KERNELGATE_PROFILE=1`.
    splits: Option<Splits>,
    /// The empty kernel, for the host's round trip to the GPU between rounds.
    empty: Function,
    /// The read pass that leaves L2 clean after a flush (`clean_l2`): a kernel
    /// `(const uint4*, u64 count, unsigned* sink)`.
    read: Function,
    /// That round trip when the worker started, seconds (`measure::contention`).
    latency: f64,
    /// A round's GPU time as the last plan's pilot saw it (seconds): the first group's size
    /// (`group_after`).
    pilot_round: f64,
}

impl Timer {
    /// Creates events and a flush buffer twice the L2's size, and measures the launch floor
    /// and the host's round trip with `empty`, a kernel that does nothing; `clock` reads the SM
    /// clock, `read` reads the flush buffer (`clean_l2`).
    pub fn new(
        gpu: &Gpu,
        empty: Function,
        clock: Function,
        read: Function,
    ) -> Result<Timer, DeviceError> {
        let events = (0..2 * ROUNDS)
            .map(|_| Ok((gpu.event()?, gpu.event()?)))
            .collect::<Result<_, DeviceError>>()?;
        let l2 = gpu.info.l2_bytes.max(0) as usize;
        let flush = (l2 > 0).then(|| gpu.alloc_plain(2 * l2)).transpose()?;
        let mut timer = Timer {
            events,
            flush,
            flushes: 0,
            queued: 0,
            floor: 0.0,
            clock,
            clock_out: gpu.alloc_plain(3 * 8)?,
            clock_host: [0; 24],
            max_mhz: 0.0,
            sampled: false,
            thermal: gpu
                .uuid()
                .and_then(|u| crate::device::thermal::Thermal::open(&u))
                .map(std::sync::Arc::new),
            splits: None,
            empty,
            read,
            latency: 0.0,
            pilot_round: 0.0,
        };
        let dims = LaunchDims {
            grid: [1; 3],
            block: [1; 3],
            shared: 0,
        };
        for _ in 0..20 {
            gpu.launch(&timer.empty, dims, &[])?;
        }
        let mut times = Vec::new();
        for _ in 0..100 {
            let (s, e) = &timer.events[0];
            gpu.record(s)?;
            gpu.launch(&timer.empty, dims, &[])?;
            gpu.record(e)?;
            gpu.synchronize()?;
            times.push(elapsed_seconds(s, e)?);
        }
        timer.floor = Summary::of(&times).map(|s| s.median).unwrap_or(0.0);
        let trips = (0..20)
            .map(|_| timer.round_trip(gpu))
            .collect::<Result<Vec<f64>, DeviceError>>()?;
        timer.latency = Summary::of(&trips).map(|s| s.median).unwrap_or(0.0);
        for _ in 0..3 {
            timer.read_clock(gpu)?;
        }
        Ok(timer)
    }

    /// Turns the sampling profile (`KERNELGATE_PROFILE=1`) on or off. While on, every sample
    /// also records an event before and one after its prepare (work a plain run does not do),
    /// read with the sample's own events.
    pub fn set_profiling(&mut self, gpu: &Gpu, on: bool) -> Result<(), DeviceError> {
        if on != self.splits.is_some() {
            self.splits = on
                .then(|| Splits::new(gpu, self.events.len()))
                .transpose()?;
        }
        Ok(())
    }

    /// Adds the host time since `since` to `sampling.<figure>` ([`crate::spent`]), when
    /// profiling.
    fn host_time(&mut self, since: Instant, figure: &str) {
        if self.splits.is_some() {
            crate::spent::since(&format!("sampling.{figure}"), since);
        }
    }

    /// Leaves L2 holding only clean lines — for a profiled launch whose DRAM traffic must be
    /// its own, and before each sample under `l2_flush = "clean"`: the flush (writes, so L2
    /// holds dirty lines of the flush buffer), then the read pass over the same buffer, whose
    /// reads write those lines back and leave clean ones. Seen on an H100: a 1M-element copy's
    /// `dram__bytes_write` fell from ~2.9 MB to ~6 KB once the read pass ran. Waits for it
    /// when `wait` (the counters' use; a sample's is queued before its start event).
    pub fn clean_l2(&mut self, gpu: &Gpu, wait: bool) -> Result<(), DeviceError> {
        self.flush_l2(gpu)?;
        if let Some(f) = &self.flush {
            let words = (f.bytes / 16) as u64;
            let blocks = 4 * gpu.info.sm_count.max(1) as u32;
            let dims = LaunchDims {
                grid: [blocks, 1, 1],
                block: [512, 1, 1],
                shared: 0,
            };
            let count = words.to_le_bytes();
            gpu.launch(
                &self.read,
                dims,
                &[
                    crate::device::KernelArg::Buffer(f),
                    crate::device::KernelArg::Scalar(&count),
                    crate::device::KernelArg::Buffer(&self.clock_out),
                ],
            )?;
        }
        match wait {
            true => gpu.synchronize(),
            false => Ok(()),
        }
    }

    /// The flush before a sample, as `flush` says.
    fn flush_as(&mut self, gpu: &Gpu, flush: Flush) -> Result<(), DeviceError> {
        match flush {
            Flush::Write => self.flush_l2(gpu),
            Flush::Clean => self.clean_l2(gpu, false),
            Flush::Off => Ok(()),
        }
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
    /// its graph (`graphs`: one over every copy, or one of one launch per input copy) —
    /// without reading it.
    fn queue(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        op: &mut dyn Timed,
        graphs: &[Graph],
        copies: usize,
        slot: usize,
    ) -> Result<(), DeviceError> {
        // Single launches alternate over the input copies (one per input set), and so do
        // graphs of one launch (one per copy); a graph of a batch uses every copy.
        let copy = sample_copy(self.queued, copies, graphs.len());
        self.queued = self.queued.wrapping_add(1);
        if let Some(s) = &self.splits {
            s.mark(gpu, slot, false)?;
        }
        let graph = match graphs {
            [] => None,
            [one] => Some(one),
            many => Some(&many[copy]),
        };
        op.prepare(gpu, (graphs.len() != 1).then_some(copy))?;
        if let Some(s) = &self.splits {
            s.mark(gpu, slot, true)?;
        }
        self.flush_as(gpu, bench.l2_flush)?;
        let (start, end) = &self.events[slot];
        gpu.record(start)?;
        match graph {
            Some(g) => gpu.replay(g)?,
            None => op.run(gpu, copy)?,
        }
        gpu.record(end)
    }

    /// One single-launch sample of `op` on input copy `copy`, prepared and (as `bench` says)
    /// after an L2 flush, as a cold sample is taken; seconds.
    pub fn sample_on(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        op: &mut dyn Timed,
        copy: usize,
    ) -> Result<f64, DeviceError> {
        let one = self.samples_on(gpu, bench, op, (copy, 1))?;
        Ok(one.first().copied().unwrap_or(0.0))
    }

    /// `count` single-launch samples of `op` on input copy `copy`, each prepared and (as
    /// `bench` says) after an L2 flush, queued back to back and waited for once; seconds.
    pub fn samples_on(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        op: &mut dyn Timed,
        (copy, count): (usize, usize),
    ) -> Result<Vec<f64>, DeviceError> {
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let n = (count - out.len()).min(self.events.len());
            for slot in 0..n {
                op.prepare(gpu, Some(copy))?;
                self.flush_as(gpu, bench.l2_flush)?;
                let (start, end) = &self.events[slot];
                gpu.record(start)?;
                op.run(gpu, copy)?;
                gpu.record(end)?;
            }
            gpu.synchronize()?;
            for (start, end) in &self.events[..n] {
                out.push(elapsed_seconds(start, end)?);
            }
        }
        Ok(out)
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
        let mut clock_up = false;
        while !warmed(runs, start.elapsed(), clock_up) {
            let copy = runs % INPUT_SETS;
            kernel.prepare(gpu, Some(copy))?;
            kernel.run(gpu, copy)?;
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
        let clear = pilot_clear_of(self.floor);
        let pilot = |timer: &mut Timer, op: &mut dyn Timed| -> Result<f64, DeviceError> {
            let mut times = Vec::new();
            for _ in 0..PILOT_SAMPLES {
                timer.queue(gpu, bench, op, &[], INPUT_SETS, 0)?;
                gpu.synchronize()?;
                let (s, e) = &timer.events[0];
                times.push(elapsed_seconds(s, e)?);
                // Far above every threshold the plan compares with: more pilot samples
                // cannot change it.
                if times.len() >= PILOT_CLEAR_SAMPLES && times.iter().all(|t| *t >= clear) {
                    break;
                }
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
        // Under a clean flush, CUPTI's kernel records time single launches as Nsight Compute
        // does, whatever their length; where CUPTI cannot load, events as for any flush.
        let cupti = bench.l2_flush == Flush::Clean && counters::cupti_missing().is_none();
        let graph = !cupti
            && match preferred {
                Some(Regime::Graph) => true,
                Some(_) => false,
                None => k.min(r) < FLOOR_FACTOR * self.floor,
            };
        // Graphs time every input set: a launch per set in a replay, or a graph per set.
        let batch = |t: f64| match graph && t.is_finite() {
            true => graph_batch(t, self.floor),
            false => 1,
        };
        let plan = Plan {
            regime: match (cupti, graph) {
                (true, _) => Regime::Cupti,
                (_, true) => Regime::Graph,
                _ => Regime::Cold,
            },
            kernel_batch: batch(k),
            reference_batch: batch(r),
        };
        let r = if r.is_finite() {
            r * plan.reference_batch as f64
        } else {
            0.0
        };
        self.pilot_round = k * plan.kernel_batch as f64 + r;
        Ok(plan)
    }

    /// Times `kernel`, interleaved with `reference` when given, as `plan` says, rotating
    /// through `copies` input copies within a graph; the stopping rule (`stop.rs`) says when.
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
        let mut out = Samples {
            regime: plan.regime,
            batch: [plan.kernel_batch, plan.reference_batch],
            launch_floor: self.floor,
            ..Samples::none()
        };
        let kernel_graph = capture(gpu, plan, copies, kernel, plan.kernel_batch)?;
        let reference_graph = match reference.as_deref_mut() {
            Some(r) => capture(gpu, plan, copies, r, plan.reference_batch)?,
            None => Vec::new(),
        };
        self.host_time(start, "capture");
        let graphs = [kernel_graph.as_slice(), reference_graph.as_slice()];
        let sets = [
            alternated_sets(copies, graphs[0].len()),
            alternated_sets(copies, graphs[1].len()),
        ];
        let activity = match plan.regime {
            Regime::Cupti => Some(counters::Activity::start().map_err(cupti_failed)?),
            _ => None,
        };
        let mut round = 0usize;
        let mut group = group_after(self.pilot_round);
        loop {
            let at = Instant::now();
            let group_start = at;
            let ops = (&mut *kernel, reference.as_deref_mut());
            self.queue_rounds(gpu, bench, (round, group), copies, ops, graphs)?;
            // The clock probe queued behind the rounds: reading it back waits for both, one
            // synchronisation per group of rounds (the events are complete once it returns).
            self.queue_clock(gpu)?;
            self.host_time(at, "submit");
            let at = Instant::now();
            let mhz = self.clock_result(gpu)?;
            // The GPU is idle for us now: the host's round trip to it says whether another
            // context holds it (it then waits for that context's time slice).
            let trip = self.round_trip(gpu)?;
            // Taken after every group, kept or not: the next group's are its own.
            let records = activity.as_ref().map(|a| a.take()).transpose();
            let mut gpu_times = records.map_err(cupti_failed)?.map(counters::per_sample);
            self.host_time(at, "sync");
            let per_round = group_start.elapsed().as_secs_f64() / group as f64;
            let at = Instant::now();
            let (next, short) = if self.clock_held(mhz, trip, group, &mut out.clocks) {
                let times = gpu_times.as_mut().map(|t| t.drain(..));
                let rounds = (round, group);
                self.read_rounds(rounds, plan, (reference.is_some(), times), &mut out)?;
                let reference = reference.is_some().then_some(out.reference.as_slice());
                stop::after_group(bench, &out.kernel, reference, sets, start.elapsed())
            } else {
                (stop::after_throttled(bench, start.elapsed()), None)
            };
            self.host_time(at, "readback");
            round += group;
            group = group_after(per_round);
            if let Some((samples, time)) = short {
                group = group.min(rounds_to_reach(samples, time, per_round));
            }
            if let Next::Stop { hit_time_cap } = next {
                out.hit_time_cap = hit_time_cap;
                break;
            }
        }
        // The kernel writes last: one more sample of it (not kept), queued exactly as the timed
        // ones — a replay of the same graph, or one single launch (or graph of one) per input
        // copy — so that every copy's outputs are the kernel's, for the caller to check against
        // the reference ("timed work is checked work"). The kernel cannot tell it from a timed
        // one. Timed alone, it wrote last already: its own timed samples, every copy in turn.
        drop(activity);
        let at = Instant::now();
        for _ in 0..last_launches(reference.is_some(), kernel_graph.len(), copies) {
            self.queue(gpu, bench, kernel, &kernel_graph, copies, 0)?;
        }
        gpu.synchronize()?;
        let c = &mut out.clocks;
        let dropped = c.discarded_rounds + c.contended_rounds;
        let rounds = c.kept_rounds + dropped;
        c.unreliable = dropped as f64 > UNRELIABLE_FRACTION * rounds as f64;
        self.host_time(at, "finish");
        out.wall_seconds = start.elapsed().as_secs_f64();
        self.sampled = true;
        Ok(out)
    }

    /// Queues `group` rounds from `round` on: in each, the kernel and the reference (when
    /// there is one) take one sample, in alternating order; `graphs` are their replays.
    fn queue_rounds(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        (round, group): (usize, usize),
        copies: usize,
        (kernel, mut reference): (&mut (dyn Timed + '_), Option<&mut (dyn Timed + '_)>),
        [kernel_graph, reference_graph]: [&[Graph]; 2],
    ) -> Result<(), DeviceError> {
        // Persisting-L2 lines survive a flush by writes. The worker sets the carve-out to 0
        // when it opens the device (`Gpu::disable_persisting_l2`), so none can exist; only
        // where that did not take (a limit still above 0) are they reset here, before every
        // group of rounds. The reset costs every graph launch ~0.35 µs (measured on an
        // H200, docs/timing-integrity.md §8), so it must not run where it is not needed.
        if gpu.persisting_l2_limit() > 0 {
            gpu.reset_persisting_l2()?;
        }
        for b in 0..group {
            let kernel_first = (round + b).is_multiple_of(2);
            for slot in 0..2 {
                let is_kernel = (slot == 0) == kernel_first;
                if is_kernel {
                    self.queue(gpu, bench, kernel, kernel_graph, copies, 2 * b + slot)?;
                } else if let Some(r) = reference.as_deref_mut() {
                    self.queue(gpu, bench, r, reference_graph, copies, 2 * b + slot)?;
                }
            }
        }
        Ok(())
    }

    /// Reads the event pairs of the `group` rounds queued from `round` on into `out`, as
    /// seconds per launch (and, when profiling, each sample's splits) — or, in the CUPTI
    /// regime, each sample's kernel records (`records`, in the order the samples were queued):
    /// the sum of its launches' GPU times.
    fn read_rounds(
        &mut self,
        (round, group): (usize, usize),
        plan: Plan,
        (with_reference, mut records): (bool, Option<impl Iterator<Item = Vec<KernelRecord>>>),
        out: &mut Samples,
    ) -> Result<(), DeviceError> {
        for b in 0..group {
            let kernel_first = (round + b).is_multiple_of(2);
            for slot in 0..2 {
                let is_kernel = (slot == 0) == kernel_first;
                if !is_kernel && !with_reference {
                    continue;
                }
                let (s, e) = &self.events[2 * b + slot];
                let seconds = match records.as_mut().map(Iterator::next) {
                    None => elapsed_seconds(s, e)?,
                    Some(Some(launches)) if !launches.is_empty() => {
                        launches.iter().map(KernelRecord::seconds).sum()
                    }
                    Some(_) => return Err(no_records(2 * b + slot)),
                };
                if let Some(splits) = self.splits.as_mut() {
                    splits.read(2 * b + slot, s, e)?;
                }
                if is_kernel {
                    out.kernel.push(seconds / plan.kernel_batch as f64);
                } else {
                    out.reference.push(seconds / plan.reference_batch as f64);
                }
            }
        }
        Ok(())
    }
}

/// A failed CUPTI call of the CUPTI regime, as the timing loop's error.
fn cupti_failed(e: counters::CounterError) -> DeviceError {
    DeviceError::harness("CUPTI activity", "CUPTI_ERROR", e.to_string())
}

/// A sample of the CUPTI regime with no kernel record.
fn no_records(slot: usize) -> DeviceError {
    DeviceError::harness(
        "CUPTI activity",
        "NO_KERNEL_RECORD",
        format!("CUPTI recorded no kernel launch for sample {slot} of a group (records are split at each sample's L2 flush)"),
    )
}

#[path = "timer_rules.rs"]
mod rules;
pub use rules::ROUNDS;
use rules::*;

/// In the graph regime, `launches` launches of `op` over `copies` input copies captured into a
/// graph (after preparing every copy) — or, for a side of one launch per replay
/// (`plan::graph_batch`), a graph of one launch per input copy (one per set), which samples
/// alternate over; none in the cold regime.
fn capture(
    gpu: &Gpu,
    plan: Plan,
    copies: usize,
    op: &mut dyn Timed,
    launches: usize,
) -> Result<Vec<Graph>, DeviceError> {
    if plan.regime != Regime::Graph {
        return Ok(Vec::new());
    }
    op.prepare(gpu, None)?;
    if launches == 1 {
        return (0..copies.min(INPUT_SETS))
            .map(|j| gpu.capture(|gpu| op.run(gpu, j)))
            .collect();
    }
    let graph = gpu.capture(|gpu| (0..launches).try_for_each(|j| op.run(gpu, j % copies)))?;
    Ok(vec![graph])
}

#[path = "timer_clock.rs"]
pub mod clock;

#[cfg(test)]
#[path = "timer_tests.rs"]
mod tests;
