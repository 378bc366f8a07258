//! `WorkerPool`: the runner's executor on real hardware — one GPU worker process per device in
//! `KERNELGATE_DEVICE`, and compile trials in this process through NVRTC.

use super::client::{NoDevice, Worker, PROGRAM_ENV};
use super::protocol::{SuiteRef, TrialRequest, TrialResult, Work};
use crate::baseline::Fingerprint;
use crate::code::SuiteCode;
use crate::config::Config;
use crate::device::{self, DeviceInfo};
use crate::failure::TrialFailure;
use crate::report::results::{Compiled, RunTotals};
use crate::report::totals::TrialCost;
use crate::runner::{Executor, Kind, Measured, Outcome, TrialSpec};
use crate::suite::Suite;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Why no GPU worker can run here: no CUDA driver, unless the worker is a program of its own
/// (`KERNELGATE_WORKER_PROGRAM`, e.g. the tests' scripted worker), which answers for itself.
fn driver_missing() -> Option<String> {
    match std::env::var_os(PROGRAM_ENV) {
        Some(_) => None,
        None => device::driver_missing(),
    }
}

/// `KERNELGATE_DEVICE` lists GPUs of different kinds (fingerprints): the run cannot start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("KERNELGATE_DEVICE lists GPUs of different kinds: {} is {}, {} is {}; baselines are per kind of GPU, so run them separately", .first.0, .first.1, .other.0, .other.1)]
pub struct MixedGpus {
    /// The first GPU's ordinal and kind.
    pub first: (i32, String),
    /// The first GPU of another kind.
    pub other: (i32, String),
}

/// GPU workers started before the suites are read, for the run's pool to adopt
/// ([`WorkerPool::adopt`]): each opens its device, measures the launch floor and loads the
/// harness's kernels while this process reads and compiles the suites.
pub struct Started(Vec<Worker>);

impl Started {
    /// Starts a worker for every device `config` names, without waiting for any; none where no
    /// CUDA driver loads.
    pub fn now(config: &Config) -> Started {
        if driver_missing().is_some() {
            return Started(Vec::new());
        }
        Started(
            config
                .devices
                .iter()
                .map(|d| {
                    let mut w = Worker::new(*d);
                    w.start_early();
                    w
                })
                .collect(),
        )
    }
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
    codes: Mutex<HashMap<SuiteRef, Option<Arc<SuiteCode>>>>,
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
        lock(&self.workers[w])
    }

    /// Takes over the workers of `started` (started for the same devices) instead of starting
    /// its own on first use.
    pub fn adopt(mut self, started: Started) -> WorkerPool<'a> {
        let ordinals: Vec<i32> = started.0.iter().map(Worker::ordinal).collect();
        if !started.0.is_empty() && ordinals == self.config.devices {
            self.workers = started.0.into_iter().map(Mutex::new).collect();
        }
        self
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
        if self.workers.len() < 2 || driver_missing().is_some() {
            return Ok(());
        }
        let mut seen: Vec<(i32, Fingerprint)> = Vec::new();
        for mut worker in self.workers.iter().map(lock) {
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

    /// Compiles every kernel of a suite: with a GPU for its architecture, without one for
    /// `KERNELGATE_ARCH`, so compile errors fail CI machines that have NVRTC but no GPU.
    fn compile(&self, index: usize, slot: usize) -> Outcome {
        let suite = &self.suites[index];
        if let Some(reason) = device::nvrtc_missing() {
            if self.config.require_nvrtc {
                return Outcome::Failed(TrialFailure::Unavailable(format!(
                    "{reason} (KERNELGATE_REQUIRE_NVRTC is set)"
                )));
            }
            return Outcome::Ignored(reason);
        }
        // Waiting for the worker's device counts as worker start, not as compiling.
        let arch = self.arch(slot, Some(index));
        let at = std::time::Instant::now();
        let outcome = self.compiled(suite, arch);
        lock(&self.totals).compile_seconds += at.elapsed().as_secs_f64();
        outcome
    }

    /// The architecture trials run on: slot `slot`'s GPU's, or `KERNELGATE_ARCH` without one.
    /// With `send` (a suite about to be compiled for it), the slot's worker is sent that suite
    /// first, to compile and load it for its trials while this process compiles it (a suite
    /// that cannot be sent now is sent with its first trial).
    fn arch(&self, slot: usize, send: Option<usize>) -> String {
        if driver_missing().is_some() {
            return self.config.arch.clone();
        }
        let mut worker = self.worker(slot);
        match worker.device() {
            Ok(d) => {
                if let Some(index) = send {
                    let _ = worker.send_suites(&[(SuiteRef::Head(index), &self.suites[index])]);
                }
                d.arch()
            }
            Err(_) => self.config.arch.clone(),
        }
    }

    /// The compile trial's outcome for `suite`, compiled here for `arch`.
    fn compiled(&self, suite: &Suite, arch: String) -> Outcome {
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
            .filter(|(si, _)| !suite.sources[*si].kind().is_compiled())
            .count();
        Outcome::Compiled(Compiled {
            sources: compiled.len(),
            fresh: compiled.iter().filter(|(_, c)| !c.cached).count() - built,
            built,
            arch,
            fp64: crate::mix::fp64_summary(suite, &compiled),
        })
    }

    /// Kernel `kernel` of `spec` and its `with` in one request: one outcome each, in order. A
    /// group that fails is run again kernel by kernel, so that one variant's failure is its
    /// own.
    fn kernels(&self, spec: &TrialSpec, case: usize, kernel: usize, slot: usize) -> Vec<Outcome> {
        let (request, needed) = match self.request(spec, case, kernel) {
            Ok(r) => r,
            Err(outcome) => return vec![outcome],
        };
        let kernels = 1 + spec.with.len() as u32;
        let timeout = self
            .config
            .timeout
            .saturating_mul(spec.effort.max(1) * kernels);
        let call = |worker: &mut Worker| worker.trial(&needed, request, timeout);
        let outcomes = match self.on_worker(slot, (spec.fresh_worker, spec.counters), call) {
            Ok((ordinal, result, wall)) => self.account(spec, ordinal, result, wall),
            Err(outcome) => vec![outcome],
        };
        match outcomes.len() == kernels as usize {
            true => outcomes,
            false => spec
                .kernels()
                .into_iter()
                .map(|k| self.execute(slot, &spec.alone(k)))
                .collect(),
        }
    }

    /// The worker request for kernel trial `spec` (`case`, `kernel`) and the suites it needs
    /// (its own, and in paired mode its base's); the outcome when it cannot be made.
    #[allow(clippy::type_complexity)]
    fn request(
        &self,
        spec: &TrialSpec,
        case: usize,
        kernel: usize,
    ) -> Result<(TrialRequest, Vec<(SuiteRef, &'a Suite)>), Outcome> {
        let suite = &self.suites[spec.suite];
        let request = TrialRequest {
            work: match (spec.counters, spec.effort <= 1) {
                (true, _) => Work::Counters,
                (false, true) => Work::CheckAndTime,
                (false, false) => Work::Time,
            },
            suite: spec.suite,
            case,
            kernel,
            seed: spec.seed,
            regime: spec.regime,
            base: spec.base,
            units: spec.units,
            effort: spec.effort,
            profile: self.config.profile,
            with: spec.with.clone(),
        };
        let mut needed = vec![(request.head(), suite)];
        if let Some(b) = spec.base {
            let bs = self.base.get(b.suite).ok_or_else(|| {
                Outcome::Failed(TrialFailure::Harness(format!(
                    "no base suite numbered {}",
                    b.suite
                )))
            })?;
            needed.push((b.at(), bs));
        }
        Ok((request, needed))
    }

    /// Runs `call` on slot `slot`'s worker holding its GPU's lock — restarted first when
    /// `fresh` or when it has profiled and this is not a counters request (`counters`): its
    /// GPU's ordinal, the answer and the seconds from inside the lock; the outcome instead
    /// when there is no usable GPU or the call failed.
    fn on_worker<T>(
        &self,
        slot: usize,
        (fresh, counters): (bool, bool),
        call: impl FnOnce(&mut Worker) -> Result<T, TrialFailure>,
    ) -> Result<(i32, T, f64), Outcome> {
        let no_gpu = |reason: String| {
            if self.config.require_gpu {
                Outcome::Failed(TrialFailure::Unavailable(format!(
                    "{reason} (KERNELGATE_REQUIRE_GPU is set)"
                )))
            } else {
                Outcome::Ignored(reason)
            }
        };
        if let Some(reason) = driver_missing() {
            return Err(no_gpu(reason));
        }
        let mut worker = self.worker(slot);
        if fresh || (worker.profiled && !counters) {
            worker.stop();
        }
        let ordinal = worker.ordinal();
        let info = match worker.device() {
            Ok(info) => info,
            Err(NoDevice::Absent(reason)) => {
                return Err(no_gpu(format!("no usable GPU: {reason}")))
            }
            Err(NoDevice::Broken(reason)) => {
                return Err(Outcome::Failed(TrialFailure::Harness(reason)))
            }
        };
        // One request at a time on this physical GPU, across every kernelgate process: timed
        // ones, counters-only ones (CUPTI replays the kernel) and fresh-worker confirmations
        // alike. A worker stopped above (`stop` keeps its device) starts again inside the lock,
        // so its timer's idle round trip (`measure::contention`) is measured on a quiet GPU;
        // so does the first trial's timer of a worker started early (`Started`), which only
        // opened its device and loaded kernels before.
        let gpu = crate::lock::take_gpu((&self.config.lock_dir, self.config.timeout), &info)
            .map_err(|e| Outcome::Failed(TrialFailure::Harness(e.to_string())))?;
        // Counted from inside the lock: waiting for another process is not this trial's time.
        let started = self.first_gpu_work();
        let answer = call(&mut worker).map_err(Outcome::Failed)?;
        drop(gpu);
        worker.profiled |= counters;
        Ok((ordinal, answer, started.elapsed().as_secs_f64()))
    }

    /// Now, noted as the run's first GPU work if it is.
    fn first_gpu_work(&self) -> std::time::Instant {
        let mut totals = lock(&self.totals);
        let since = crate::report::totals::since_entry();
        totals.first_gpu_work_seconds.get_or_insert(since);
        std::time::Instant::now()
    }

    /// What a worker's `result` for `spec` (on GPU `ordinal`, `wall` seconds in all) makes of
    /// the trial, with its time added to the run's totals: compiles, phases, samples, and the
    /// request's wall time (a counters-only request's apart).
    fn account(
        &self,
        spec: &TrialSpec,
        ordinal: i32,
        result: TrialResult,
        wall: f64,
    ) -> Vec<Outcome> {
        let mut totals = lock(&self.totals);
        totals.compiled += result.compiled;
        totals.cached += result.cached;
        totals.add_spent(&result.spent);
        let mut cost = TrialCost {
            trial: match spec.kind {
                Kind::Kernel { case, kernel } => self
                    .suites
                    .get(spec.suite)
                    .map_or(String::new(), |s| s.trial_name(case, kernel)),
                Kind::Compile => String::new(),
            },
            seconds: wall,
            check: result.spent.get("check"),
            copies: result.spent.get("copies"),
            warmup: result.spent.get("warmup"),
            timed_check: result.spent.get("timed_check"),
            ..TrialCost::default()
        };
        if spec.counters {
            cost.trial.push_str(" (counters)");
        } else if spec.effort > 1 {
            cost.trial.push_str(" (re-measure)");
        }
        if let Ok(data) = &result.outcome {
            let s = &data.samples;
            cost.sampling = s.wall_seconds;
            cost.samples = s.kernel.len() + s.reference.len();
            cost.launches = s.launch_seconds();
        }
        totals.add_cost(cost, self.config.profile);
        if spec.counters {
            totals.counter_seconds += wall;
        } else {
            totals.trials_seconds += wall;
        }
        let mut data = match result.outcome {
            Ok(data) => data,
            Err(failure) => return vec![Outcome::Failed(failure)],
        };
        if spec.counters {
            totals.counter_reads += 1;
        }
        // A group's kernels share the setup, the check and the sampling time, and the
        // reference's samples: each counts its share, the reference's launches once.
        let with = std::mem::take(&mut data.with);
        let n = (1 + with.len()) as f64;
        let share =
            (result.spent.get("setup") + result.spent.get("check") + data.samples.wall_seconds) / n;
        std::iter::once(data)
            .chain(with)
            .enumerate()
            .map(|(i, mut data)| {
                data.samples.wall_seconds /= n;
                if !spec.counters && i == 0 {
                    totals.add(&data.samples);
                } else if !spec.counters {
                    let reference = std::mem::take(&mut data.samples.reference);
                    totals.add(&data.samples);
                    data.samples.reference = reference;
                }
                Outcome::Measured(Box::new(Measured {
                    ordinal,
                    seconds: share,
                    samples: data.samples,
                    footprint: data.footprint,
                    base_footprint: data.base_footprint,
                    counters: data.counters.map(|c| *c),
                }))
            })
            .collect()
    }
}

/// `m`'s guard, even where a thread panicked holding it: the counts it guards stay usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Which of a counters request's `results` are sent again, to a fresh worker: those another
/// trial's fault kept from being read (`TrialResult::again`) — never all of them, so that
/// sending again ends.
fn sent_again(results: &[TrialResult]) -> Vec<bool> {
    let some_read = results.iter().any(|r| !r.again);
    results.iter().map(|r| r.again && some_read).collect()
}

impl Executor for WorkerPool<'_> {
    fn slots(&self) -> usize {
        self.workers.len()
    }

    fn device(&self) -> Option<DeviceInfo> {
        if driver_missing().is_some() {
            return None;
        }
        self.worker(0).device().ok()
    }

    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome {
        self.execute_group(slot, spec).swap_remove(0)
    }

    /// A kernel trial and its `with` in one request ([`WorkerPool::kernels`]); a compile trial.
    fn execute_group(&self, slot: usize, spec: &TrialSpec) -> Vec<Outcome> {
        match spec.kind {
            Kind::Compile => vec![self.compile(spec.suite, slot)],
            Kind::Kernel { case, kernel } => self.kernels(spec, case, kernel, slot),
        }
    }

    /// The counters-only trials of `specs`, read in one request (`Request::Counters`): one
    /// outcome per spec, in order. Each result is accounted with an equal share of the
    /// request's wall time.
    fn execute_counters(&self, slot: usize, specs: &[TrialSpec]) -> Vec<Outcome> {
        let mut outcomes: Vec<Option<Outcome>> = specs.iter().map(|_| None).collect();
        let (mut requests, mut needed, mut asked) = (Vec::new(), Vec::new(), Vec::new());
        for (i, spec) in specs.iter().enumerate() {
            let made = match spec.kind {
                Kind::Kernel { case, kernel } => self.request(spec, case, kernel),
                Kind::Compile => Err(self.compile(spec.suite, slot)),
            };
            match made {
                Ok((request, suites)) => {
                    requests.push(request);
                    needed.extend(suites);
                    asked.push(i);
                }
                Err(outcome) => outcomes[i] = Some(outcome),
            }
        }
        needed.sort_by_key(|(index, _)| *index);
        needed.dedup_by_key(|(index, _)| *index);
        if !requests.is_empty() {
            let timeout = self.config.timeout.saturating_mul(requests.len() as u32);
            let call = |worker: &mut Worker| worker.counters(&needed, requests, timeout);
            match self.on_worker(slot, (false, true), call) {
                Ok((ordinal, results, wall)) => {
                    let again = sent_again(&results);
                    let counted = again.iter().filter(|a| !**a).count();
                    let share = wall / counted.max(1) as f64;
                    let mut retry = Vec::new();
                    for ((i, result), again) in asked.iter().zip(results).zip(again) {
                        match again {
                            true => retry.push(*i),
                            false => {
                                let mut one = self.account(&specs[*i], ordinal, result, share);
                                outcomes[*i] = Some(one.swap_remove(0))
                            }
                        }
                    }
                    if !retry.is_empty() {
                        let specs: Vec<TrialSpec> =
                            retry.iter().map(|i| specs[*i].clone()).collect();
                        for (i, outcome) in
                            retry.into_iter().zip(self.execute_counters(slot, &specs))
                        {
                            outcomes[i] = Some(outcome);
                        }
                    }
                }
                Err(outcome) => asked
                    .into_iter()
                    .for_each(|i| outcomes[i] = Some(outcome.clone())),
            }
        }
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Outcome::Ignored("not sent".into())))
            .collect()
    }

    fn stop(&self) {
        self.workers.iter().for_each(|w| lock(w).stop());
    }

    fn totals(&self) -> RunTotals {
        let mut t = lock(&self.totals).clone();
        let (compiled, cached) = device::compile::counts();
        t.compiled += compiled;
        t.cached += cached;
        for worker in self.workers.iter().map(lock) {
            t.worker_starts += worker.starts;
            t.worker_start_seconds += worker.start_seconds;
            t.worker_wait_seconds += worker.waited_seconds;
        }
        t
    }

    fn code(&self, suite: SuiteRef) -> Option<Arc<SuiteCode>> {
        if let Some(known) = lock(&self.codes).get(&suite) {
            return known.clone();
        }
        let s = match suite {
            SuiteRef::Head(i) => self.suites.get(i)?,
            SuiteRef::Base(i) => self.base.get(i)?,
        };
        let arch = if self.workers.is_empty() {
            self.config.arch.clone()
        } else {
            self.arch(0, None)
        };
        let toolchain = crate::sass::Toolchain::here();
        // Waiting for the worker's device (its architecture) counts as worker start.
        let at = std::time::Instant::now();
        let built = SuiteCode::build(s, &arch, Some(&self.config.cache), &toolchain)
            .ok()
            .map(Arc::new);
        lock(&self.totals).code_seconds += at.elapsed().as_secs_f64();
        lock(&self.codes).insert(suite, built.clone());
        built
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_victims_of_a_fault_are_sent_again_and_never_all() {
        let read = TrialResult::failed(TrialFailure::Harness("faulted".into()));
        let victim = TrialResult {
            again: true,
            ..read.clone()
        };
        let got = sent_again(&[read.clone(), victim.clone(), victim.clone()]);
        assert_eq!(got, [false, true, true]);
        assert_eq!(sent_again(&[victim.clone(), victim]), [false, false]);
        assert!(sent_again(&[]).is_empty());
    }
}
