//! `Session`: the worker's GPU, the modules it has loaded, and the execution of one trial —
//! compile (through the cache), check correctness, then time.

use super::counters::Profiling;
use super::loaded::Loaded;
use super::probes::{probes, Probes};
use super::protocol::{BaseKernel, SuiteRef, TrialData, TrialRequest, TrialResult, Work};
use super::trial::Trial;
use super::units::{case_buffers, time_units, Expected};
use crate::check::copies::Copies;
use crate::check::failure::Failure;
use crate::check::input_set::InputSet;
use crate::check::kernels::Kernels;
use crate::check::reference::References;
use crate::device::compile;
use crate::device::{DeviceError, Gpu};
use crate::failure::TrialFailure;
use crate::measure::{Timer, INPUT_SETS};
use crate::spent;
use crate::suite::Suite;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Trial `req`'s failure when its suite (or its base) was not sent before it.
pub(super) fn not_sent(req: &TrialRequest) -> TrialFailure {
    TrialFailure::Harness(format!(
        "the worker was not sent suite {:?} (or its base) before its trial",
        req.head()
    ))
}

/// A worker's state.
pub struct Session {
    pub(super) gpu: Gpu,
    pub(super) timer: Option<Timer>,
    /// The probe kernels, loaded ahead of the first trial, until its timer takes them.
    probes: Option<Probes>,
    /// The run's suites this worker was sent.
    pub(super) suites: HashMap<SuiteRef, Arc<Suite>>,
    /// Loaded modules, by suite.
    pub(super) loaded: HashMap<SuiteRef, Loaded>,
    cache_dir: Option<PathBuf>,
    /// The reference's outputs per case and seed, reused by every kernel.
    references: References,
    /// The harness's check kernels (prepare, compare), loaded with the timer.
    pub(super) kernels: Option<Kernels>,
    /// Hardware counters (CUPTI), made on first use.
    pub(super) profiling: Profiling,
    /// NVRTC compiles and cached modules counted in results so far.
    pub(super) counted: (usize, usize),
}

impl Session {
    /// Opens device `ordinal` — the only one this process sees (device 0) when `alone`, still
    /// reported as `ordinal`.
    pub fn open(
        (ordinal, alone): (i32, bool),
        cache_dir: Option<PathBuf>,
    ) -> Result<Session, DeviceError> {
        let at = Instant::now();
        let mut gpu = Gpu::open(if alone { 0 } else { ordinal })?;
        gpu.info.ordinal = ordinal;
        gpu.disable_persisting_l2()?;
        spent::since("context", at);
        Ok(Session {
            gpu,
            timer: None,
            probes: None,
            suites: HashMap::new(),
            loaded: HashMap::new(),
            cache_dir,
            references: References::default(),
            kernels: None,
            profiling: Profiling::default(),
            counted: compile::counts(),
        })
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Keeps suite `at` for the trials that refer to it, and compiles and loads its kernels
    /// now, while the harness has nothing for this worker yet (a failure is left for the
    /// suite's first trial to meet and report).
    pub fn add_suite(&mut self, at: SuiteRef, suite: Suite) {
        self.loaded.remove(&at);
        let _ = self.load(at, &suite);
        self.suites.insert(at, Arc::new(suite));
    }

    /// Gets the probe and check kernels compiled and loaded ahead of the first trial, while
    /// the harness loads and compiles suites; a failure is left for the first trial to meet
    /// and report. Nothing is timed here: a worker started early (`pool::Started`) runs this
    /// before the harness holds the GPU's lock (`crate::lock`), so the timer, which measures
    /// the launch floor and the host's round trip to the idle GPU, is made in the first trial.
    pub fn warm_up(&mut self) {
        let _ = self.kernels_ready();
    }

    /// Runs one trial: never panics on the user's input; a sticky device error is fatal.
    pub fn run_trial(&mut self, req: &TrialRequest) -> TrialResult {
        if req.work == Work::Counters {
            // A batch of one: the counters are read as a batch's are (`batch.rs`).
            let mut results = self.run_counters(std::slice::from_ref(req));
            return results.swap_remove(0);
        }
        // Shared while the trial runs (it borrows the session mutably).
        let suite = self.suites.get(&req.head()).cloned();
        let base = (req.base).and_then(|b| Some((b, self.suites.get(&b.at())?.clone())));
        let outcome = match (&suite, req.base.is_some() == base.is_some()) {
            (Some(suite), true) => {
                let base = base.as_ref().map(|(b, s)| (*b, &**s));
                self.trial(suite, base, req).map_err(Failure::into_trial)
            }
            _ => Err(not_sent(req)),
        };
        let (before, after) = (self.counted, compile::counts());
        self.counted = after;
        TrialResult {
            compiled: after.0 - before.0,
            cached: after.1 - before.1,
            spent: spent::take(),
            ..TrialResult::of(outcome)
        }
    }

    /// Compiles and loads suite `at`, as sent (`Request::Suite`), once per worker.
    pub(super) fn load_sent(&mut self, at: SuiteRef) -> Result<(), TrialFailure> {
        let suite = self.suites.get(&at).cloned().ok_or_else(|| {
            TrialFailure::Harness(format!(
                "the worker was not sent suite {at:?} before its trial"
            ))
        })?;
        self.load(at, &suite).map_err(Failure::into_trial)
    }

    /// Compiles and loads a suite's kernels once per worker.
    fn load(&mut self, at: SuiteRef, suite: &Suite) -> Result<(), Failure> {
        if self.loaded.contains_key(&at) {
            return Ok(());
        }
        let cache = self.cache_dir.as_deref();
        let loaded = spent::timed("compile", || Loaded::load(&self.gpu, suite, cache))?;
        self.loaded.insert(at, loaded);
        Ok(())
    }

    /// Compiles and loads the probe kernels (unless the timer has them) and the check kernels,
    /// unless loaded: once per worker. Times nothing on the GPU.
    fn kernels_ready(&mut self) -> Result<(), Failure> {
        if self.timer.is_none() && self.probes.is_none() {
            let probes = spent::timed("compile", || probes(&self.gpu, self.cache_dir.as_deref()));
            self.probes = Some(probes?);
        }
        if self.kernels.is_none() {
            let cache = self.cache_dir.as_deref();
            let kernels = spent::timed("compile", || Kernels::load(&self.gpu, cache));
            self.kernels = Some(kernels.map_err(Failure::Trial)?);
        }
        Ok(())
    }

    /// Makes the timer (the launch floor and the host's round trip measured with the probe
    /// kernels) and loads the check kernels, unless made: once per worker, in a trial (inside
    /// the GPU's lock, since the timer times the GPU).
    pub(super) fn timing_ready(&mut self) -> Result<(), Failure> {
        self.kernels_ready()?;
        if let Some(Probes { empty, clock, read }) = self.probes.take() {
            let timer = spent::timed("floor_probe", || Timer::new(&self.gpu, empty, clock, read));
            self.timer = Some(timer?);
        }
        Ok(())
    }

    /// Compiles and loads what trial `req` needs (once per worker), then runs it: set up,
    /// check, time, check what was timed (`trial.rs`).
    fn trial(
        &mut self,
        suite: &Suite,
        base: Option<(BaseKernel, &Suite)>,
        req: &TrialRequest,
    ) -> Result<TrialData, Failure> {
        self.load(req.head(), suite)?;
        if let Some((b, bs)) = base {
            self.load(b.at(), bs)?;
        }
        self.timing_ready()?;
        // Compiling and the probe are counted apart from setup.
        let clock = Instant::now();
        let trial = Trial {
            gpu: &self.gpu,
            suite,
            req,
            loaded: &self.loaded[&req.head()],
            paired: base.map(|(b, bs)| (b, bs, &self.loaded[&b.at()])),
            kernels: self.kernels.as_ref().expect("loaded by timing_ready"),
        };
        trial.shared_memory_fits()?;
        let bufs = case_buffers(&self.gpu, suite, req.case)?;
        // The footprint comes from the kernel's first run in this worker, on real inputs, so
        // that the driver's local-memory reservation (kept once made) shows as a drop.
        let first = InputSet::new(req.case, req.seed);
        first.upload(&self.gpu, trial.kernels, suite, &bufs)?;
        let (footprints, base_footprint) = trial.footprints(&bufs)?;
        spent::since("setup", clock);
        let clock = Instant::now();
        // Timed launches rotate over `INPUT_SETS` input sets: the check's first sets, whose
        // reference outputs are cached, and which the timed outputs are compared with.
        let seeds: Vec<u64> = (0..INPUT_SETS as u64)
            .map(|s| req.seed.wrapping_add(s))
            .collect();
        let mut sets = vec![first];
        sets.extend(seeds[1..].iter().map(|s| InputSet::new(req.case, *s)));
        let expected = trial.check(&mut self.references, &bufs, &sets)?;
        spent::since("check", clock);
        let clock = Instant::now();
        let copies = Copies::new(&self.gpu, trial.kernels, suite, bufs, sets)?;
        spent::since("copies", clock);
        let timer = self.timer.as_mut().expect("created above");
        let expected = Expected {
            outputs: &expected,
            seeds: &seeds,
        };
        let samples = time_units(&trial, timer, copies, &expected)?;
        self.gpu.synchronize()?;
        let mut each = samples
            .into_iter()
            .zip(footprints)
            .map(|(samples, footprint)| TrialData {
                samples,
                footprint,
                base_footprint: None,
                counters: None,
                with: Vec::new(),
            });
        let lead = each.next().ok_or_else(|| {
            Failure::Trial(TrialFailure::Harness("a trial timed no kernel".into()))
        })?;
        Ok(TrialData {
            base_footprint,
            with: each.collect(),
            ..lead
        })
    }
}
