//! `time_units`: a trial's samples taken on several allocations — the first on the case's own
//! buffers and copies, each further one on freshly allocated buffers and copies, placed apart by
//! a spacer allocation of a different size each time — with what every unit timed checked
//! against the reference (the counters-only requests' allocations are `batch.rs`'s).
//!
//! Why: re-allocating a trial's buffers inside one process reproduces the timing modes first
//! seen between processes (measured on an H200: `ptx::ptx_vec4::n=1048576` at 3.65 or 3.82 µs,
//! 7 of 24 allocations in the slow mode; `softmax::online::rows=4096,cols=128` 2 of 24 at
//! +3.5%; the launch floor and the flush buffer's placement made no difference). So the
//! allocation, not the process, is the unit a baseline must sample.

use super::trial::Trial;
use crate::check::copies::Copies;
use crate::check::failure::Failure;
use crate::check::input_set::InputSet;
use crate::check::reference::Outputs;
use crate::device::{DeviceBuffer, ErrorKind, Gpu};
use crate::failure::TrialFailure;
use crate::measure::{Plan, Samples, Timer};
use crate::report::bytes;
use crate::spent;
use crate::suite::Suite;
use std::time::Instant;

/// Allocations a counters-only request reads counters on: two, so that a counter that
/// differs between allocations shows as unstable.
pub const COUNTER_UNITS: u32 = 2;

/// What every unit is checked against: the reference's outputs per input set, and the seeds.
pub(super) struct Expected<'a> {
    pub outputs: &'a [Outputs],
    pub seeds: &'a [u64],
}

/// Times `trial` (every kernel of its group, in the same rounds) on `req.units` allocations,
/// the first on `copies`; returns each kernel's pooled samples, one [`crate::measure::Unit`]
/// per allocation. Making (and freeing) each allocation's copies counts as `copies`, checking
/// what its timed launches left as `timed_check` ([`crate::spent`]).
pub(super) fn time_units(
    trial: &Trial,
    timer: &mut Timer,
    copies: Copies,
    expected: &Expected,
) -> Result<Vec<Samples>, Failure> {
    let units = trial.req.units.max(1);
    let kernels: Vec<usize> = trial.req.kernels().collect();
    let mut spacers: Vec<DeviceBuffer> = Vec::new();
    let mut copies = Some(copies);
    let mut pooled: Vec<Samples> = Vec::new();
    let mut plans: Option<Vec<Plan>> = None;
    let since_us = crate::measure::now_us();
    let mut others = None;
    for u in 0..units {
        let at = Instant::now();
        let mut here = match copies.take() {
            Some(c) => c,
            None => {
                spacers.push(trial.gpu.alloc_plain(spacer_bytes(u))?);
                fresh_copies(trial, expected.seeds)?
            }
        };
        spent::since("copies", at);
        let (mut sampled, p) = trial.time(timer, &mut here, plans.take())?;
        // Once the last allocation is sampled, NVML is asked (on a thread) while its timed
        // launches are checked.
        if u + 1 == units {
            others = Some(timer.ask_others(since_us));
        }
        let at = Instant::now();
        for (i, &k) in kernels.iter().enumerate() {
            trial.write_last(timer, &here, (&sampled, i))?;
            let samples = &sampled.samples[i];
            trial.check_timed(
                (&here, k),
                p[i],
                samples,
                (expected.outputs, expected.seeds),
            )?;
            // The first measurement's first unit only: a re-measure times the same kernel
            // again, and a further unit would only repeat the question on other buffers.
            if u == 0 && trial.req.work == super::protocol::Work::CheckAndTime {
                let cold = samples.regime == crate::measure::Regime::Cold;
                let timed = cold.then_some(samples.kernel.as_slice());
                trial.fresh_inputs(timer, (&here, k), timed)?;
            }
        }
        plans = Some(p);
        spent::since("timed_check", at);
        let taken = std::mem::take(&mut sampled.samples);
        let at = Instant::now();
        // The graphs (captured on these copies) first, then the copies.
        drop(sampled);
        drop(here);
        spent::since("copies", at);
        for (i, mut samples) in taken.into_iter().enumerate() {
            samples.close_unit();
            match pooled.get_mut(i) {
                Some(all) => all.append(samples),
                None => pooled.push(samples),
            }
        }
    }
    spent::timed("copies", || drop(spacers));
    if pooled.is_empty() {
        let none = TrialFailure::Harness("a trial was timed on no unit".into());
        return Err(Failure::Trial(none));
    }
    // Another process on the GPU while any allocation was timed: not to be trusted.
    let others = others.map_or_else(Vec::new, |q| timer.others(q));
    for samples in &mut pooled {
        let clocks = &mut samples.clocks;
        clocks.others = others.clone();
        clocks.unreliable |= !clocks.others.is_empty();
    }
    Ok(pooled)
}

/// The spacer before unit `u`: 1 to 61 MiB, a different size for each unit, so the fresh
/// buffers do not land where the last unit's were freed.
pub(super) fn spacer_bytes(u: u32) -> usize {
    (1 + (u as usize * 37) % 61) << 20
}

/// A fresh allocation of the case's buffers holding the trial's input sets, as timing copies.
pub(super) fn fresh_copies(trial: &Trial, seeds: &[u64]) -> Result<Copies, Failure> {
    let (gpu, suite, case) = (trial.gpu, trial.suite, trial.req.case);
    let bufs = case_buffers(gpu, suite, case)?;
    let sets: Vec<InputSet> = seeds.iter().map(|s| InputSet::new(case, *s)).collect();
    // `Copies::new` writes every set, the first into `bufs`.
    Copies::new(gpu, trial.kernels, suite, bufs, sets)
}

/// The case's buffers, from the pool; running out of memory says how much was asked for.
pub(super) fn case_buffers(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
) -> Result<Vec<DeviceBuffer>, Failure> {
    let lens = &suite.cases[case].lens;
    let mut out = Vec::new();
    for (b, len) in suite.buffers.iter().zip(lens) {
        match gpu.alloc(len * b.dtype.size()) {
            Ok(buf) => out.push(buf),
            Err(e) if e.kind() == ErrorKind::OutOfMemory => {
                let (free, total) = gpu.memory_info().unwrap_or((0, 0));
                return Err(Failure::Trial(TrialFailure::OutOfMemory(format!(
                    "out of memory: the case's buffers need {} in all (`{}` alone {}), the device has {} free of {}",
                    bytes(suite.buffer_bytes(case)),
                    b.name,
                    bytes((len * b.dtype.size()) as u64),
                    bytes(free as u64),
                    bytes(total as u64)
                ))));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_gets_its_own_spacer_size() {
        let sizes: Vec<usize> = (1..8).map(spacer_bytes).collect();
        let mut unique = sizes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), sizes.len(), "{sizes:?}");
        assert!(sizes.iter().all(|s| *s >= 1 << 20 && *s <= 61 << 20));
    }
}
