//! `Session`: the worker's GPU, the modules it has loaded, and the execution of one trial —
//! compile (through the cache), check correctness, then time.

use super::counters::Profiling;
use super::loaded::Loaded;
use super::probes::probes;
use super::protocol::{BaseKernel, TrialData, TrialRequest, TrialResult};
use super::trial::Trial;
use super::units::{case_buffers, count_units, time_units, Expected};
use crate::check::copies::Copies;
use crate::check::failure::Failure;
use crate::check::input_set::InputSet;
use crate::check::kernels::Kernels;
use crate::check::reference::References;
use crate::device::compile;
use crate::device::Function;
use crate::device::{DeviceError, Gpu};
use crate::failure::TrialFailure;
use crate::measure::{Samples, Timer, INPUT_SETS};
use crate::suite::Suite;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

/// Where a trial's time went.
#[derive(Default)]
struct Phases {
    setup: f64,
    check: f64,
}

/// A worker's state.
pub struct Session {
    gpu: Gpu,
    timer: Option<Timer>,
    /// The run's suites this worker was sent, by index.
    suites: HashMap<usize, Suite>,
    /// Loaded modules, by suite index.
    loaded: HashMap<usize, Loaded>,
    cache_dir: Option<PathBuf>,
    /// The reference's outputs per case and seed, reused by every kernel.
    references: References,
    /// The harness's check kernels (prepare, compare), loaded with the timer.
    kernels: Option<Kernels>,
    /// The read pass that leaves L2 clean before a profiled launch (a probe kernel).
    read: Option<Function>,
    /// Hardware counters (CUPTI), made on first use.
    profiling: Profiling,
}

impl Session {
    /// Opens the device.
    pub fn open(ordinal: i32, cache_dir: Option<PathBuf>) -> Result<Session, DeviceError> {
        let gpu = Gpu::open(ordinal)?;
        gpu.disable_persisting_l2()?;
        Ok(Session {
            gpu,
            timer: None,
            suites: HashMap::new(),
            loaded: HashMap::new(),
            cache_dir,
            references: References::default(),
            kernels: None,
            read: None,
            profiling: Profiling::default(),
        })
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Keeps suite `index` for the trials that refer to it.
    pub fn add_suite(&mut self, index: usize, suite: Suite) {
        self.loaded.remove(&index);
        self.suites.insert(index, suite);
    }

    /// Runs one trial: never panics on the user's input; a sticky device error is fatal.
    pub fn run_trial(&mut self, req: &TrialRequest) -> TrialResult {
        let before = compile::counts();
        let mut phases = Phases::default();
        // Taken out while the trial runs (it borrows the session mutably), then put back.
        let suite = self.suites.remove(&req.suite);
        let base = req
            .base
            .and_then(|b| self.suites.remove(&b.suite).map(|s| (b, s)));
        let outcome = match (&suite, req.base.is_some() == base.is_some()) {
            (Some(suite), true) => {
                let base = base.as_ref().map(|(b, s)| (*b, s));
                self.trial(suite, base, req, &mut phases)
                    .map_err(Failure::into_trial)
            }
            _ => Err(TrialFailure::Harness(format!(
                "the worker was not sent suite {} (or its base) before its trial",
                req.suite
            ))),
        };
        if let Some(suite) = suite {
            self.suites.insert(req.suite, suite);
        }
        if let Some((b, s)) = base {
            self.suites.insert(b.suite, s);
        }
        let after = compile::counts();
        TrialResult {
            outcome,
            compiled: after.0 - before.0,
            cached: after.1 - before.1,
            setup_seconds: phases.setup,
            check_seconds: phases.check,
            worker_stops: false,
        }
    }

    /// Compiles and loads a suite's kernels once per worker.
    fn load(&mut self, index: usize, suite: &Suite) -> Result<(), Failure> {
        if self.loaded.contains_key(&index) {
            return Ok(());
        }
        let loaded = Loaded::load(&self.gpu, suite, self.cache_dir.as_deref())?;
        self.loaded.insert(index, loaded);
        Ok(())
    }

    /// Compiles and loads what trial `req` needs (once per worker), then runs it: set up,
    /// check, time, check what was timed (`trial.rs`).
    fn trial(
        &mut self,
        suite: &Suite,
        base: Option<(BaseKernel, &Suite)>,
        req: &TrialRequest,
        phases: &mut Phases,
    ) -> Result<TrialData, Failure> {
        let clock = Instant::now();
        self.load(req.suite, suite)?;
        if let Some((b, bs)) = base {
            self.load(b.suite, bs)?;
        }
        if self.timer.is_none() {
            let probes = probes(&self.gpu, self.cache_dir.as_deref())?;
            self.timer = Some(Timer::new(&self.gpu, probes.empty, probes.clock)?);
            self.read = Some(probes.read);
        }
        if self.kernels.is_none() {
            let kernels =
                Kernels::load(&self.gpu, self.cache_dir.as_deref()).map_err(Failure::Trial)?;
            self.kernels = Some(kernels);
        }
        let trial = Trial {
            gpu: &self.gpu,
            suite,
            req,
            loaded: &self.loaded[&req.suite],
            paired: base.map(|(b, bs)| (b, bs, &self.loaded[&b.suite])),
            kernels: self.kernels.as_ref(),
        };
        trial.shared_memory_fits()?;
        let bufs = case_buffers(&self.gpu, suite, req.case)?;
        // The footprint comes from the kernel's first run in this worker, on real inputs, so
        // that the driver's local-memory reservation (kept once made) shows as a drop.
        let first = InputSet::new(req.case, req.seed);
        first.upload(&self.gpu, trial.kernels, suite, &bufs)?;
        let (footprint, base_footprint) = trial.footprints(&bufs)?;
        phases.setup = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        // Timed launches rotate over `INPUT_SETS` input sets: the check's first sets, whose
        // reference outputs are cached, and which the timed outputs are compared with.
        let seeds: Vec<u64> = (0..INPUT_SETS as u64)
            .map(|s| req.seed.wrapping_add(s))
            .collect();
        let mut sets = vec![first];
        sets.extend(seeds[1..].iter().map(|s| InputSet::new(req.case, *s)));
        if req.counters {
            // Counters only (never timed in this worker afterwards: see `count_units`).
            let copies = Copies::new(&self.gpu, trial.kernels, suite, bufs, sets)?;
            let timer = self.timer.as_mut().expect("created above");
            let read = self.read.as_ref().expect("loaded with the timer");
            let profiling = &mut self.profiling;
            let counters = count_units(&trial, (timer, read), profiling, copies, &seeds)?;
            return Ok(TrialData {
                samples: Samples::none(),
                footprint,
                base_footprint,
                counters: Some(Box::new(counters)),
            });
        }
        let expected = trial.check(&mut self.references, &bufs, &sets)?;
        phases.check = clock.elapsed().as_secs_f64();
        let copies = Copies::new(&self.gpu, trial.kernels, suite, bufs, sets)?;
        let timer = self.timer.as_mut().expect("created above");
        let expected = Expected {
            outputs: &expected,
            seeds: &seeds,
        };
        let samples = time_units(&trial, timer, copies, &expected)?;
        self.gpu.synchronize()?;
        Ok(TrialData {
            samples,
            footprint,
            base_footprint,
            counters: None,
        })
    }
}
