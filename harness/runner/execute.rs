//! `execute`: runs one planned trial — a suite's compile check in this process, or a kernel
//! trial in the GPU worker — and says what came of it. Nothing here decides pass or fail
//! against baselines; that waits until every trial has run.

use super::{FailKind, Kind, Outcome, Planned, Run};
use crate::device;
use crate::suite::Suite;
use crate::worker::client::NoDevice;
use crate::worker::protocol::TrialRequest;

/// Runs `trial` with worker `w` (one per GPU); `effort` > 1 re-measures a trial already checked.
pub(super) fn execute(
    run: &Run,
    suites: &[Suite],
    trial: &Planned,
    effort: u32,
    w: usize,
) -> Outcome {
    let suite = &suites[trial.suite];
    match trial.kind {
        Kind::Compile => compile(run, suite, w),
        Kind::Kernel { case, kernel } => gpu(run, suite, case, kernel, effort, w),
    }
}

/// Compiles every kernel of a suite: with a GPU for its architecture, without one for
/// `KERNELGATE_ARCH`, so compile errors fail CI machines that have NVRTC but no GPU.
fn compile(run: &Run, suite: &Suite, w: usize) -> Outcome {
    if let Some(reason) = device::nvrtc_missing() {
        if run.config.require_nvrtc {
            return Outcome::Failed(
                FailKind::Infrastructure,
                format!("{reason} (KERNELGATE_REQUIRE_NVRTC is set)"),
            );
        }
        return Outcome::Ignored(reason);
    }
    let arch = match device::driver_missing() {
        None => run
            .worker(w)
            .device()
            .map(|d| d.arch())
            .unwrap_or_else(|_| run.config.arch.clone()),
        Some(_) => run.config.arch.clone(),
    };
    let compiled = match crate::worker::compile_suite(suite, &arch, Some(&run.config.cache)) {
        Ok(c) => c,
        Err((_, e)) => return Outcome::Failed(FailKind::Correctness, e),
    };
    for (si, c) in compiled.iter().filter(|(_, c)| !c.log.is_empty()) {
        eprintln!(
            "warning: NVRTC said, for suite `{}`, {}: {}",
            suite.name,
            suite.sources[*si].path.display(),
            c.log
        );
    }
    // The instruction-mix gate (`mix`): a kernel that forbids FP64 and holds some fails here.
    let breaches = crate::mix::fp64_breaches(suite, &compiled);
    if !breaches.is_empty() {
        let text: Vec<String> = breaches.into_iter().map(|(_, m)| m).collect();
        // A limit, like `spills = "forbid"`: a performance failure (exit 1), not a wrong result.
        return Outcome::Failed(FailKind::Performance, text.join("\n"));
    }
    let fp64 = crate::mix::fp64_summary(suite, &compiled);
    // PTX, CUBIN and fatbin sources are loaded as built, not compiled (`device::binary`).
    let built = compiled
        .iter()
        .filter(|(si, _)| suite.sources[*si].kind() != crate::suite::SourceKind::Cuda)
        .count();
    let fresh = compiled.iter().filter(|(_, c)| !c.cached).count() - built;
    Outcome::Compiled(format!(
        "{} source(s) for {arch}, {fresh} compiled, {} from cache{}{}",
        compiled.len(),
        compiled.len() - fresh - built,
        if built > 0 {
            format!(", {built} built (PTX/CUBIN/fatbin)")
        } else {
            String::new()
        },
        if fp64.is_empty() {
            String::new()
        } else {
            format!(" · {fp64}")
        }
    ))
}

fn gpu(run: &Run, suite: &Suite, case: usize, kernel: usize, effort: u32, w: usize) -> Outcome {
    let no_gpu = |reason: String| {
        if run.config.require_gpu {
            Outcome::Failed(
                FailKind::Infrastructure,
                format!("{reason} (KERNELGATE_REQUIRE_GPU is set)"),
            )
        } else {
            Outcome::Ignored(reason)
        }
    };
    if let Some(reason) = device::driver_missing() {
        return no_gpu(reason);
    }
    let mut worker = run.worker(w);
    let ordinal = worker.ordinal();
    match worker.device() {
        Ok(_) => {}
        Err(NoDevice::Absent(reason)) => return no_gpu(format!("no usable GPU: {reason}")),
        Err(NoDevice::Broken(reason)) => return Outcome::Failed(FailKind::Infrastructure, reason),
    }
    let request = TrialRequest {
        suite: suite.clone(),
        case,
        kernel,
        seed: run.config.seed.unwrap_or(suite.check.seed),
        check: effort <= 1,
        regime: run.regimes.get(&suite.trial_name(case, kernel)).cloned(),
        effort,
    };
    let result = match worker.trial(request, run.config.timeout * effort.max(1)) {
        Ok(r) => r,
        Err(e) => return Outcome::Failed(FailKind::Correctness, e),
    };
    drop(worker);
    let mut totals = run.totals();
    totals.compiled += result.compiled;
    totals.cached += result.cached;
    totals.setup_seconds += result.setup_seconds;
    totals.check_seconds += result.check_seconds;
    match result.outcome {
        Ok(data) => {
            let samples = &data.samples;
            totals.trials_measured += 1;
            totals.launch_floor = Some(samples.launch_floor);
            totals.batched += (samples.regime == crate::measure::GRAPH) as usize;
            totals.clock_mhz.extend(&samples.clocks.mhz);
            totals.celsius.extend(&samples.clocks.celsius);
            totals.dropped_rounds += samples.clocks.discarded_rounds;
            totals.unreliable += samples.clocks.unreliable as usize;
            totals.sampled_seconds += samples.wall_seconds;
            totals.kernel_seconds +=
                samples.kernel.iter().sum::<f64>() + samples.reference.iter().sum::<f64>();
            Outcome::Measured(Box::new(super::Measured {
                ordinal,
                samples: data.samples,
                footprint: data.footprint,
                baseline: None,
                gate: super::GateNote::Pending,
            }))
        }
        Err(m) => {
            let line = suite.kernel_lines.get(kernel).copied().unwrap_or(1);
            Outcome::Failed(
                FailKind::Correctness,
                format!("{m}\n  kernel declared at {}:{line}", suite.path.display()),
            )
        }
    }
}
