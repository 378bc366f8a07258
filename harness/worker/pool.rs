//! `WorkerPool`: the runner's executor on real hardware — one GPU worker process per device in
//! `KERNELGATE_DEVICE`, and compile trials in this process through NVRTC.

use super::client::{NoDevice, Worker};
use super::protocol::TrialRequest;
use crate::baseline::Fingerprint;
use crate::code::SuiteCode;
use crate::config::Config;
use crate::device::{self, DeviceInfo};
use crate::failure::TrialFailure;
use crate::report::results::RunTotals;
use crate::runner::{Executor, Kind, Measured, Outcome, TrialSpec};
use crate::suite::Suite;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// `KERNELGATE_DEVICE` lists GPUs of different kinds (fingerprints): the run cannot start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("KERNELGATE_DEVICE lists GPUs of different kinds: {} is {}, {} is {}; baselines are per kind of GPU, so run them separately", .first.0, .first.1, .other.0, .other.1)]
pub struct MixedGpus {
    /// The first GPU's ordinal and kind.
    pub first: (i32, String),
    /// The first GPU of another kind.
    pub other: (i32, String),
}

/// The GPU workers of a run, one per device, and what they have done.
pub struct WorkerPool<'a> {
    config: &'a Config,
    suites: &'a [Suite],
    /// Paired mode: the base revision's suites, numbered after `suites`.
    base: &'a [Suite],
    workers: Vec<Mutex<Worker>>,
    totals: Mutex<RunTotals>,
    /// Each suite's code, once computed (`None`: it could not be had).
    codes: Mutex<HashMap<usize, Option<Arc<SuiteCode>>>>,
}

impl<'a> WorkerPool<'a> {
    /// Workers for every device in `config.devices`, started on first use; `base` holds the
    /// base revision's suites in paired mode (empty otherwise).
    pub fn new(config: &'a Config, suites: &'a [Suite], base: &'a [Suite]) -> WorkerPool<'a> {
        WorkerPool {
            config,
            suites,
            base,
            workers: config
                .devices
                .iter()
                .map(|d| Mutex::new(Worker::new(*d)))
                .collect(),
            totals: Mutex::new(RunTotals::default()),
            codes: Mutex::new(HashMap::new()),
        }
    }

    fn worker(&self, w: usize) -> MutexGuard<'_, Worker> {
        self.workers[w].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first GPU's description, starting its worker; why there is none, when not.
    pub fn first_device(&self) -> Result<DeviceInfo, NoDevice> {
        match self.workers.first() {
            Some(_) => self.worker(0).device(),
            None => Err(NoDevice::Absent("KERNELGATE_DEVICE names no GPU".into())),
        }
    }

    /// With several GPUs, all must share one fingerprint: baselines are per kind of GPU.
    pub fn same_kind_of_gpu(&self) -> Result<(), MixedGpus> {
        if self.workers.len() < 2 || device::driver_missing().is_some() {
            return Ok(());
        }
        let mut seen: Vec<(i32, Fingerprint)> = Vec::new();
        for w in 0..self.workers.len() {
            let mut worker = self.worker(w);
            if let Ok(info) = worker.device() {
                seen.push((worker.ordinal(), Fingerprint::of(&info)));
            }
        }
        match seen.iter().find(|(_, f)| *f != seen[0].1) {
            Some((d, f)) => Err(MixedGpus {
                first: (seen[0].0, seen[0].1.describe()),
                other: (*d, f.describe()),
            }),
            None => Ok(()),
        }
    }

    /// The architecture trials run on: slot `slot`'s GPU's, or `KERNELGATE_ARCH` without one.
    fn arch(&self, slot: usize) -> String {
        match device::driver_missing() {
            None => self
                .worker(slot)
                .device()
                .map(|d| d.arch())
                .unwrap_or_else(|_| self.config.arch.clone()),
            Some(_) => self.config.arch.clone(),
        }
    }

    /// Compiles every kernel of a suite: with a GPU for its architecture, without one for
    /// `KERNELGATE_ARCH`, so compile errors fail CI machines that have NVRTC but no GPU.
    fn compile(&self, suite: &Suite, slot: usize) -> Outcome {
        if let Some(reason) = device::nvrtc_missing() {
            if self.config.require_nvrtc {
                return Outcome::Failed(TrialFailure::Unavailable(format!(
                    "{reason} (KERNELGATE_REQUIRE_NVRTC is set)"
                )));
            }
            return Outcome::Ignored(reason);
        }
        let arch = self.arch(slot);
        let compiled =
            match crate::compile_suite::compile_suite(suite, &arch, Some(&self.config.cache)) {
                Ok(c) => c,
                Err(e) => return Outcome::Failed(TrialFailure::Compile(e.to_string())),
            };
        for (si, c) in compiled.iter().filter(|(_, c)| !c.log.is_empty()) {
            eprintln!(
                "warning: NVRTC said, for suite `{}`, {}: {}",
                suite.name,
                suite.sources[*si].path.display(),
                c.log
            );
        }
        // The instruction-mix gate (`mix`): a kernel that forbids FP64 and holds some fails
        // here, as a limit (like `spills = "forbid"`), not a wrong result.
        let breaches = crate::mix::fp64_breaches(suite, &compiled);
        if !breaches.is_empty() {
            let text: Vec<String> = breaches.into_iter().map(|(_, m)| m).collect();
            return Outcome::Failed(TrialFailure::Forbidden(text.join("\n")));
        }
        // PTX, CUBIN and fatbin sources are loaded as built, not compiled (`device::binary`).
        let built = compiled
            .iter()
            .filter(|(si, _)| suite.sources[*si].kind() != crate::suite::SourceKind::Cuda)
            .count();
        Outcome::Compiled {
            sources: compiled.len(),
            fresh: compiled.iter().filter(|(_, c)| !c.cached).count() - built,
            built,
            arch,
            fp64: crate::mix::fp64_summary(suite, &compiled),
        }
    }

    fn kernel(&self, spec: &TrialSpec, case: usize, kernel: usize, slot: usize) -> Outcome {
        let suite = &self.suites[spec.suite];
        let no_gpu = |reason: String| {
            if self.config.require_gpu {
                Outcome::Failed(TrialFailure::Unavailable(format!(
                    "{reason} (KERNELGATE_REQUIRE_GPU is set)"
                )))
            } else {
                Outcome::Ignored(reason)
            }
        };
        if let Some(reason) = device::driver_missing() {
            return no_gpu(reason);
        }
        let mut worker = self.worker(slot);
        if spec.fresh_worker || (worker.profiled && !spec.counters) {
            worker.stop();
        }
        let ordinal = worker.ordinal();
        let info = match worker.device() {
            Ok(info) => info,
            Err(NoDevice::Absent(reason)) => return no_gpu(format!("no usable GPU: {reason}")),
            Err(NoDevice::Broken(reason)) => return Outcome::Failed(TrialFailure::Harness(reason)),
        };
        let request = TrialRequest {
            suite: spec.suite,
            case,
            kernel,
            seed: spec.seed,
            check: spec.effort <= 1 && !spec.counters,
            regime: spec.regime,
            base: spec.base,
            counters: spec.counters,
            units: spec.units,
            effort: spec.effort,
        };
        let mut needed = vec![(spec.suite, suite)];
        if let Some(b) = spec.base {
            match b
                .suite
                .checked_sub(self.suites.len())
                .and_then(|i| self.base.get(i))
            {
                Some(bs) => needed.push((b.suite, bs)),
                None => {
                    return Outcome::Failed(TrialFailure::Harness(format!(
                        "no base suite numbered {}",
                        b.suite
                    )))
                }
            }
        }
        let timeout = self.config.timeout.saturating_mul(spec.effort.max(1));
        // One request at a time on this physical GPU, across every kernelgate process: timed
        // ones, counters-only ones (CUPTI replays the kernel) and fresh-worker confirmations
        // alike. A worker stopped above (`stop` keeps its device) starts again inside the lock,
        // so its timer's idle round trip (`measure::contention`) is measured on a quiet GPU.
        let gpu = match take_gpu(self.config, &info) {
            Ok(held) => held,
            Err(e) => return Outcome::Failed(TrialFailure::Harness(e.to_string())),
        };
        let started = std::time::Instant::now();
        let result = match worker.trial(&needed, request, timeout) {
            Ok(r) => r,
            Err(e) => return Outcome::Failed(e),
        };
        drop(gpu);
        worker.profiled |= spec.counters;
        drop(worker);
        self.account(spec, ordinal, result, started.elapsed().as_secs_f64())
    }

    /// What a worker's `result` for `spec` (on GPU `ordinal`, `elapsed` seconds in all) makes
    /// of the trial, with its time added to the run's totals.
    fn account(
        &self,
        spec: &TrialSpec,
        ordinal: i32,
        result: super::protocol::TrialResult,
        elapsed: f64,
    ) -> Outcome {
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        totals.compiled += result.compiled;
        totals.cached += result.cached;
        totals.setup_seconds += result.setup_seconds;
        totals.check_seconds += result.check_seconds;
        match result.outcome {
            Ok(data) => {
                if spec.counters {
                    totals.counter_reads += 1;
                    totals.counter_seconds += elapsed;
                } else {
                    totals.add(&data.samples);
                }
                Outcome::Measured(Box::new(Measured {
                    ordinal,
                    seconds: result.setup_seconds
                        + result.check_seconds
                        + data.samples.wall_seconds,
                    samples: data.samples,
                    footprint: data.footprint,
                    base_footprint: data.base_footprint,
                    counters: data.counters.map(|c| *c),
                }))
            }
            Err(failure) => Outcome::Failed(failure),
        }
    }
}

/// The lock of `info`'s physical GPU (`crate::lock`), waiting — and saying for whom — while
/// another kernelgate process measures on it; at most ten trial time-outs and a minute.
fn take_gpu(
    config: &Config,
    info: &DeviceInfo,
) -> Result<crate::lock::Held, crate::lock::LockError> {
    let path = crate::lock::gpu_lock_path(&config.lock_dir, info.uuid.as_deref(), info.ordinal);
    let what = format!(
        "GPU {} ({})",
        info.ordinal,
        info.uuid.as_deref().unwrap_or("UUID unknown")
    );
    let wait = config
        .timeout
        .saturating_mul(10)
        .saturating_add(std::time::Duration::from_secs(60));
    crate::lock::acquire(&path, &what, wait, &mut |holder, waited| {
        eprintln!(
            "kernelgate: {what} is measuring for {holder}; waiting for it ({} s so far; one trial at a time per GPU, `{}`)",
            waited.as_secs(),
            path.display()
        )
    })
}

impl Executor for WorkerPool<'_> {
    fn slots(&self) -> usize {
        self.workers.len()
    }

    fn device(&self) -> Option<DeviceInfo> {
        if device::driver_missing().is_some() {
            return None;
        }
        self.worker(0).device().ok()
    }

    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome {
        match spec.kind {
            Kind::Compile => self.compile(&self.suites[spec.suite], slot),
            Kind::Kernel { case, kernel } => self.kernel(spec, case, kernel, slot),
        }
    }

    fn stop(&self) {
        for w in 0..self.workers.len() {
            self.worker(w).stop();
        }
    }

    fn totals(&self) -> RunTotals {
        let mut t = self
            .totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let (compiled, cached) = device::compile::counts();
        t.compiled += compiled;
        t.cached += cached;
        t.worker_starts = (0..self.workers.len()).map(|w| self.worker(w).starts).sum();
        t
    }

    fn code(&self, suite: usize) -> Option<Arc<SuiteCode>> {
        if let Some(known) = self
            .codes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&suite)
        {
            return known.clone();
        }
        let s = match suite.checked_sub(self.suites.len()) {
            None => self.suites.get(suite)?,
            Some(b) => self.base.get(b)?,
        };
        let arch = if self.workers.is_empty() {
            self.config.arch.clone()
        } else {
            self.arch(0)
        };
        let toolchain = crate::sass::Toolchain::here();
        let built = SuiteCode::build(s, &arch, Some(&self.config.cache), &toolchain)
            .ok()
            .map(Arc::new);
        self.codes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(suite, built.clone());
        built
    }
}
