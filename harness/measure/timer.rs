//! `Timer`: the timing loop on one GPU — warm-up, the pilot that picks the regime, then
//! interleaved rounds until the stopping rule says enough, with the SM clock watched.

use super::plan::{Plan, INPUT_SETS};
use super::profile::Splits;
use super::samples::{Regime, Samples};
use super::stop::{self, Next};
use crate::device::counters::{self, KernelRecord};
use crate::device::KernelArg as Arg;
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
        let l2 = gpu.info.l2_bytes.max(0) as usize;
        let flush = (l2 > 0).then(|| gpu.alloc_plain(2 * l2)).transpose()?;
        let mut timer = Timer {
            events: Vec::new(),
            flush,
            flushes: 0,
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
        timer.events_for(gpu, 2 * ROUNDS)?;
        let dims = LaunchDims::line(1, 1);
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
            let count = ((f.bytes / 16) as u64).to_le_bytes();
            let blocks = 4 * gpu.info.sm_count.max(1) as u32;
            let args = [
                Arg::Buffer(f),
                Arg::Scalar(&count),
                Arg::Buffer(&self.clock_out),
            ];
            gpu.launch(&self.read, LaunchDims::line(blocks, 512), &args)?;
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
    /// without reading it. `turn` (the round) picks the input copy.
    fn queue(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        op: &mut dyn Timed,
        graphs: &[Graph],
        copies: usize,
        (slot, turn): (usize, usize),
    ) -> Result<(), DeviceError> {
        // Single launches alternate over the input copies (one per input set) round by round,
        // and so do graphs of one launch (one per copy); a graph of a batch uses every copy.
        let copy = sample_copy(turn, copies, graphs.len());
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

    /// Times `kernels` (one or several, each with its plan: one regime for all), interleaved
    /// with `reference` when given, in rounds in which each takes one sample, in an order that
    /// rotates by one each round; the stopping rule (`stop.rs`) says when, for every kernel.
    /// Each kernel's samples come with the reference's, the same for all: a group of variants
    /// is measured against one set of reference samples.
    pub fn sample(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        plans: &[Plan],
        copies: usize,
        kernels: &mut [&mut dyn Timed],
        mut reference: Option<&mut dyn Timed>,
    ) -> Result<Sampled, DeviceError> {
        let start = Instant::now();
        let plan = plans[0];
        let mut out = Samples {
            regime: plan.regime,
            batch: [plan.kernel_batch, plan.reference_batch],
            launch_floor: self.floor,
            ..Samples::none()
        };
        let mut graphs = Vec::with_capacity(kernels.len() + 1);
        for (op, p) in kernels.iter_mut().zip(plans) {
            graphs.push(capture(gpu, plan, copies, &mut **op, p.kernel_batch)?);
        }
        graphs.push(match reference.as_deref_mut() {
            Some(r) => capture(gpu, plan, copies, r, plan.reference_batch)?,
            None => Vec::new(),
        });
        self.host_time(start, "capture");
        let sides = kernels.len() + usize::from(reference.is_some());
        let sets: Vec<usize> = graphs
            .iter()
            .map(|g| alternated_sets(copies, g.len()))
            .collect();
        let activity = match plan.regime {
            Regime::Cupti => Some(counters::Activity::start().map_err(cupti_failed)?),
            _ => None,
        };
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
        let mut round = 0usize;
        let mut group = group_after(self.pilot_round);
        let capped = loop {
            let at = Instant::now();
            let group_start = at;
            self.events_for(gpu, sides * group)?;
            let ops = (&mut *kernels, reference.as_deref_mut());
            self.queue_rounds(gpu, bench, (round, group), copies, ops, &graphs)?;
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
            let (stop, short) = if self.clock_held(mhz, trip, group, &mut out.clocks) {
                let records = gpu_times.as_mut().map(|t| t.drain(..));
                let read = (round, group, sides);
                self.read_rounds(read, plans, records, (&mut times, &mut out.reference))?;
                let reference = reference.is_some().then_some(out.reference.as_slice());
                stop::after_groups(bench, &times, reference, &sets, start.elapsed())
            } else {
                let stop = match stop::after_throttled(bench, start.elapsed()) {
                    Next::Stop { hit_time_cap } => Some(vec![hit_time_cap; kernels.len()]),
                    Next::Sample => None,
                };
                (stop, None)
            };
            self.host_time(at, "readback");
            round += group;
            group = group_after(per_round);
            if let Some((samples, time)) = short {
                group = group.min(rounds_to_reach(samples, time, per_round));
            }
            if let Some(capped) = stop {
                break capped;
            }
        };
        drop(activity);
        out.wall_seconds = start.elapsed().as_secs_f64();
        self.sampled = true;
        graphs.pop();
        let graphs = (graphs, reference.is_some());
        Ok(Sampled::new(out, (times, capped), plans, graphs))
    }

    /// A kernel writes last: one more sample of it (not kept), queued exactly as its timed
    /// ones — a replay of the same graph, or one single launch (or graph of one) per input
    /// copy — so that every copy's outputs are its own, for the caller to check against the
    /// reference ("timed work is checked work"). The kernel cannot tell it from a timed one.
    /// Timed alone, it wrote last already: its own timed samples, every copy in turn.
    /// `kernel` is its index in `sampled`.
    pub fn write_last(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        (sampled, kernel): (&Sampled, usize),
        op: &mut dyn Timed,
        copies: usize,
    ) -> Result<(), DeviceError> {
        let at = Instant::now();
        let graphs = &sampled.graphs[kernel];
        // Alone: no reference, and no other kernel writing the same copies.
        let alone = !sampled.with_reference && sampled.graphs.len() == 1;
        for turn in 0..last_launches(!alone, graphs.len(), copies) {
            self.queue(gpu, bench, op, graphs, copies, (0, turn))?;
        }
        gpu.synchronize()?;
        self.host_time(at, "finish");
        Ok(())
    }

    /// At least `count` event pairs.
    fn events_for(&mut self, gpu: &Gpu, count: usize) -> Result<(), DeviceError> {
        while self.events.len() < count {
            self.events.push((gpu.event()?, gpu.event()?));
        }
        if let Some(s) = self.splits.as_mut() {
            s.grow(gpu, count)?;
        }
        Ok(())
    }

    /// Queues `group` rounds from `round` on: in each, every kernel and the reference (when
    /// there is one) take one sample, in an order rotated by one each round (two sides
    /// alternate); `graphs` are their replays, the reference's last.
    fn queue_rounds(
        &mut self,
        gpu: &Gpu,
        bench: &Bench,
        (round, group): (usize, usize),
        copies: usize,
        (kernels, mut reference): (&mut [&mut dyn Timed], Option<&mut (dyn Timed + '_)>),
        graphs: &[Vec<Graph>],
    ) -> Result<(), DeviceError> {
        // Persisting-L2 lines survive a flush by writes. The worker sets the carve-out to 0
        // when it opens the device (`Gpu::disable_persisting_l2`), so none can exist; only
        // where that did not take (a limit still above 0) are they reset here, before every
        // group of rounds. The reset costs every graph launch ~0.35 µs (measured on an
        // H200, docs/timing-integrity.md §8), so it must not run where it is not needed.
        if gpu.persisting_l2_limit() > 0 {
            gpu.reset_persisting_l2()?;
        }
        let sides = kernels.len() + usize::from(reference.is_some());
        for b in 0..group {
            for position in 0..sides {
                let side = (position + round + b) % sides;
                let slot = (sides * b + position, round + b);
                match kernels.get_mut(side) {
                    Some(k) => self.queue(gpu, bench, &mut **k, &graphs[side], copies, slot)?,
                    None => {
                        let r = reference.as_deref_mut().expect("a side past the kernels");
                        self.queue(gpu, bench, r, &graphs[kernels.len()], copies, slot)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads the event pairs of the `group` rounds of `sides` queued from `round` on into each
    /// kernel's `times` and the `reference`'s, as seconds per launch (and, when profiling, each
    /// sample's splits) — or, in the CUPTI regime, each sample's kernel records (`records`, in
    /// the order the samples were queued): the sum of its launches' GPU times.
    fn read_rounds(
        &mut self,
        (round, group, sides): (usize, usize, usize),
        plans: &[Plan],
        mut records: Option<impl Iterator<Item = Vec<KernelRecord>>>,
        (times, reference): (&mut [Vec<f64>], &mut Vec<f64>),
    ) -> Result<(), DeviceError> {
        for b in 0..group {
            for position in 0..sides {
                let side = (position + round + b) % sides;
                let slot = sides * b + position;
                let (s, e) = &self.events[slot];
                let seconds = match records.as_mut().map(Iterator::next) {
                    None => elapsed_seconds(s, e)?,
                    Some(Some(launches)) if !launches.is_empty() => {
                        launches.iter().map(KernelRecord::seconds).sum()
                    }
                    Some(_) => return Err(no_records(slot)),
                };
                if let Some(splits) = self.splits.as_mut() {
                    splits.read(slot, s, e)?;
                }
                match times.get_mut(side) {
                    Some(t) => t.push(seconds / plans[side].kernel_batch as f64),
                    None => reference.push(seconds / plans[0].reference_batch as f64),
                }
            }
        }
        Ok(())
    }
}

/// What sampling produced: each kernel's samples (the reference's, shared, in each), and the
/// graphs each kernel was replayed in, for its last launches ([`Timer::write_last`]).
pub struct Sampled {
    /// Per kernel, in the order given.
    pub samples: Vec<Samples>,
    graphs: Vec<Vec<Graph>>,
    with_reference: bool,
}

impl Sampled {
    /// Each kernel's `times` and whether it hit the time cap (`capped`: a group stopped at the
    /// cap marks only the kernels not yet precise then) with what they share in `out` (the
    /// reference's samples, the clocks: unreliable where too many rounds were dropped) and its
    /// batch from `plans`.
    fn new(
        mut out: Samples,
        (times, capped): (Vec<Vec<f64>>, Vec<bool>),
        plans: &[Plan],
        (graphs, with_reference): (Vec<Vec<Graph>>, bool),
    ) -> Self {
        let c = &mut out.clocks;
        let dropped = c.discarded_rounds + c.contended_rounds;
        let rounds = c.kept_rounds + dropped;
        c.unreliable = dropped as f64 > UNRELIABLE_FRACTION * rounds as f64;
        let samples = (times.into_iter().zip(plans).zip(capped))
            .map(|((kernel, p), hit_time_cap)| Samples {
                kernel,
                batch: [p.kernel_batch, out.batch[1]],
                hit_time_cap,
                ..out.clone()
            })
            .collect();
        Sampled {
            samples,
            graphs,
            with_reference,
        }
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

#[path = "timer_plan.rs"]
mod planning;
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
