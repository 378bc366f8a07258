//! `Session::run_counters`: the counters-only requests of a batch, read together — every
//! trial's kernel and what it is timed against, on [`COUNTER_UNITS`] allocations each, profiled
//! in one CUPTI configuration (`Profiling::collect`) as far as the device's memory and
//! [`MAX_RANGES`] allow, else in as few configurations as they do.
//!
//! Why: CUPTI's range profiler costs ~17 ms to start and ~6.5 ms to stop per configuration
//! (measured on an H100: 60 configurations, one per trial, were 1.6 s of a 2.4 s counters pass),
//! while the ranges themselves cost what their launches do. A worker that has profiled times
//! nothing more: the pool restarts it before a timed request (`Worker::profiled`).

use super::counters::Profiling;
use super::protocol::{SuiteRef, TrialData, TrialRequest, TrialResult};
use super::session::Session;
use super::trial::Trial;
use super::units::{case_buffers, fresh_copies, spacer_bytes, COUNTER_UNITS};
use crate::check::copies::Copies;
use crate::check::failure::Failure;
use crate::check::input_set::InputSet;
use crate::device::{DeviceBuffer, Gpu};
use crate::failure::TrialFailure;
use crate::measure::counters::CounterReport;
use crate::measure::{Footprint, Samples, Timer};
use std::collections::BTreeSet;
use std::time::Instant;

/// The most ranges one configuration profiles (an operation per range: a trial's kernel and
/// what it is timed against on each allocation, so up to four per trial).
pub const MAX_RANGES: usize = 128;

/// One trial of a batch, ready to profile: its buffers on every allocation.
struct Ready<'a> {
    /// Its place in the batch.
    index: usize,
    trial: Trial<'a>,
    /// The timing copies of each allocation, the first on the case's own buffers.
    units: Vec<Copies>,
    footprint: Footprint,
    base_footprint: Option<Footprint>,
}

impl Ready<'_> {
    /// Whether what the kernel is timed against is profiled too: only in paired mode, where
    /// the base kernel's counters are what the kernel's are compared with (a stored baseline
    /// holds the kernel's own; nothing reads the reference's).
    fn with_against(&self) -> bool {
        self.trial.req.base.is_some()
    }

    /// Profiled operations: the kernel, and in paired mode the base kernel, per allocation.
    fn ranges(&self) -> usize {
        self.units.len() * (1 + usize::from(self.with_against()))
    }
}

impl Session {
    /// Reads the counters of every request of `reqs` (each a counters-only request): one
    /// result per request, in order. Never panics on the user's input.
    pub fn run_counters(&mut self, reqs: &[TrialRequest]) -> Vec<TrialResult> {
        // Every suite the batch needs, compiled and loaded once (`Session::load`); a suite
        // that cannot be fails its trials.
        let needed: BTreeSet<SuiteRef> = reqs.iter().flat_map(TrialRequest::needs).collect();
        let unloadable: Vec<(SuiteRef, TrialFailure)> = needed
            .into_iter()
            .filter_map(|at| Some((at, self.load_sent(at).err()?)))
            .collect();
        let ready = self.timing_ready().map_err(Failure::into_trial);
        let mut results: Vec<Option<TrialResult>> = reqs
            .iter()
            .map(|req| {
                let unloaded = unloadable
                    .iter()
                    .find(|(s, _)| req.needs().any(|n| n == *s));
                let failed = ready.as_ref().err().or(unloaded.map(|(_, f)| f));
                failed.cloned().map(TrialResult::failed)
            })
            .collect();
        let mut next = 0;
        while next < reqs.len() {
            next = self.count_chunk(reqs, next, &mut results);
        }
        let (before, after) = (self.counted, crate::device::compile::counts());
        self.counted = after;
        let mut out: Vec<TrialResult> = results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    TrialResult::failed(TrialFailure::Harness(
                        "the batch left this trial's counters unread".into(),
                    ))
                })
            })
            .collect();
        if let Some(r) = out.first_mut() {
            r.compiled = after.0 - before.0;
            r.cached = after.1 - before.1;
            // The batch's time, profiling's included, goes with its first result.
            r.spent = crate::spent::take();
        }
        out
    }

    /// Readies the trials of `reqs` from `from` on (those without a result yet) until the
    /// device has no room for the next one or [`MAX_RANGES`] is reached, profiles them in one
    /// configuration, and fills their results; returns where the next chunk starts. A trial the
    /// device has no room for even alone fails with what it needed.
    fn count_chunk(
        &mut self,
        reqs: &[TrialRequest],
        from: usize,
        results: &mut [Option<TrialResult>],
    ) -> usize {
        let Session {
            gpu,
            suites,
            loaded,
            kernels,
            timer,
            profiling,
            ..
        } = self;
        let (gpu, suites, loaded, kernels): (&_, &_, &_, &_) = (gpu, suites, loaded, kernels);
        let (Some(timer), Some(kernels)) = (timer.as_mut(), kernels.as_ref()) else {
            return reqs.len();
        };
        let mut chunk: Vec<Ready> = Vec::new();
        let mut ranges = 0;
        let mut next = from;
        while next < reqs.len() {
            if results[next].is_some() {
                next += 1;
                continue;
            }
            let req = &reqs[next];
            let paired = req
                .base
                .and_then(|b| Some((b, &**suites.get(&b.at())?, loaded.get(&b.at())?)));
            let own = suites.get(&req.head()).zip(loaded.get(&req.head()));
            let Some((suite, own)) = own.filter(|_| req.base.is_some() == paired.is_some()) else {
                results[next] = Some(TrialResult::failed(super::session::not_sent(req)));
                next += 1;
                continue;
            };
            let trial = Trial {
                gpu,
                suite,
                req,
                loaded: own,
                paired,
                kernels,
            };
            match ready_units(trial, next, chunk.is_empty()) {
                Ok(r) => {
                    if !chunk.is_empty() && ranges + r.ranges() > MAX_RANGES {
                        break;
                    }
                    ranges += r.ranges();
                    chunk.push(r);
                }
                // Retried alone, after the chunk is read and freed.
                Err(TrialFailure::OutOfMemory(_)) if !chunk.is_empty() => break,
                Err(f) if f.is_fatal() => {
                    // The context is gone: nothing more is read in this worker. The trials
                    // readied or not yet reached are not this one's victims: sent again.
                    let name = format!("trial {} of the batch", next + 1);
                    results[next] = Some(TrialResult::failed(f));
                    for i in chunk.iter().map(|r| r.index).chain(next + 1..reqs.len()) {
                        if results[i].is_none() {
                            results[i] = Some(TrialResult {
                                again: true,
                                ..TrialResult::failed(TrialFailure::Harness(format!(
                                    "not read: {name} faulted the GPU first"
                                )))
                            });
                        }
                    }
                    return reqs.len();
                }
                Err(f) => results[next] = Some(TrialResult::failed(f)),
            }
            next += 1;
        }
        if !chunk.is_empty() {
            read_chunk(chunk, (gpu, timer), profiling, results);
        }
        next
    }
}

/// Profiles the trials of `chunk` in one configuration and fills their results: the
/// configuration's profile goes with its first trial. When the configuration cannot be read
/// (a launch failed, CUPTI refused), each trial of a larger chunk is profiled alone, so that
/// one trial's failure is its own.
fn read_chunk(
    chunk: Vec<Ready>,
    (gpu, timer): (&Gpu, &mut Timer),
    profiling: &mut Profiling,
    results: &mut [Option<TrialResult>],
) {
    let device = (gpu, gpu.info.ordinal);
    let mut pairs: Vec<_> = chunk
        .iter()
        .flat_map(|r| {
            r.units.iter().map(|c| {
                let (kernel, against) = r.trial.op_of(r.trial.req.kernel, c);
                (kernel, against.filter(|_| r.with_against()))
            })
        })
        .collect();
    let read_on = profiling.collect(device, &mut *timer, &mut pairs);
    drop(pairs);
    if read_on.is_err() && chunk.len() > 1 {
        for r in chunk {
            read_chunk(vec![r], (gpu, &mut *timer), profiling, results);
        }
        return;
    }
    let mut read_on = read_on.map(Vec::into_iter);
    for r in chunk {
        let counters = match read_on.as_mut() {
            Ok(values) => CounterReport::Collected(values.by_ref().take(r.units.len()).collect()),
            Err(e) => CounterReport::NotCollected { why: e.to_string() },
        };
        results[r.index] = Some(TrialResult::of(Ok(TrialData {
            samples: Samples::none(),
            footprint: r.footprint,
            base_footprint: r.base_footprint,
            counters: Some(Box::new(counters)),
            with: Vec::new(),
        })));
    }
}

/// Makes `trial`'s buffers and a copy of its first input set on [`COUNTER_UNITS`] allocations,
/// with its footprint from a first run, as trial `index` of the batch. Each further allocation
/// is placed after a spacer (`units::spacer_bytes`), freed once it is made. A further
/// allocation the device has no room for is left out when the trial is readied `alone`;
/// beside other trials it is out of memory, so that the trial is readied again alone.
fn ready_units(trial: Trial<'_>, index: usize, alone: bool) -> Result<Ready<'_>, TrialFailure> {
    let made = (|| {
        let at = Instant::now();
        trial.shared_memory_fits()?;
        let req = trial.req;
        let bufs = case_buffers(trial.gpu, trial.suite, req.case)?;
        let first = InputSet::new(req.case, req.seed);
        first.upload(trial.gpu, trial.kernels, trial.suite, &bufs)?;
        let (mut footprints, base_footprint) = trial.footprints(&bufs)?;
        let footprint = footprints.swap_remove(0);
        crate::spent::since("setup", at);
        let at = Instant::now();
        // The profiled launches run on the first input set only (`Profiling::collect`).
        let seeds = [req.seed];
        let made = Copies::new(trial.gpu, trial.kernels, trial.suite, bufs, vec![first]);
        let mut units = vec![made?];
        for u in 1..COUNTER_UNITS {
            let _spacer: DeviceBuffer = trial.gpu.alloc_plain(spacer_bytes(u))?;
            match fresh_copies(&trial, &seeds) {
                Ok(c) => units.push(c),
                Err(Failure::Trial(TrialFailure::OutOfMemory(_))) if alone => break,
                Err(e) => return Err(e),
            }
        }
        crate::spent::since("copies", at);
        Ok((units, footprint, base_footprint))
    })();
    let (units, footprint, base_footprint) = made.map_err(Failure::into_trial)?;
    Ok(Ready {
        index,
        trial,
        units,
        footprint,
        base_footprint,
    })
}
