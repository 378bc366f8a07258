//! `Session`: the worker's GPU, the modules it has loaded, and the execution of one trial —
//! compile (through the cache), check correctness, then time.

use super::footprint::footprint_of;
use super::op::{timed_pair, Which};
use super::probes::probes;
use super::protocol::{BaseKernel, TrialData, TrialRequest, TrialResult};
use crate::check::copies::Copies;
use crate::check::failure::Failure;
use crate::check::input_set::InputSet;
use crate::check::kernels::Kernels;
use crate::check::plausible::plausible;
use crate::check::reference::References;
use crate::check::verify;
use crate::compile_suite::{compile_suite, source_entries};
use crate::device::compile;
use crate::device::{DeviceBuffer, DeviceError, ErrorKind, Function, Gpu, Module};
use crate::failure::TrialFailure;
use crate::measure::{Regime, Timed, Timer, INPUT_SETS};
use crate::report::bytes;
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

/// Modules and functions of one suite: per kernel, one function per launch.
struct Loaded {
    functions: Vec<Vec<Function>>,
    /// Per kernel, its FP64 instructions (`mix`), for the footprint.
    fp64: Vec<crate::device::ptx::Fp64Use>,
    // Declared after `functions` so functions are dropped first; they must not outlive it.
    _modules: Vec<Module>,
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
        }
    }

    /// Compiles and loads a suite's kernels once per worker.
    fn load(&mut self, index: usize, suite: &Suite) -> Result<(), Failure> {
        if self.loaded.contains_key(&index) {
            return Ok(());
        }
        let arch = self.gpu.info.arch();
        let compiled = compile_suite(suite, &arch, self.cache_dir.as_deref())
            .map_err(|e| Failure::Trial(TrialFailure::Compile(e.to_string())))?;
        let fp64 = crate::mix::kernel_fp64(suite, &compiled);
        let mut modules = Vec::new();
        let mut functions: Vec<Vec<Function>> = suite.kernels.iter().map(|_| Vec::new()).collect();
        for (si, c) in compiled {
            let module = self.gpu.load(&c.cubin)?;
            let entries = source_entries(suite, si);
            for (ki, k) in suite
                .kernels
                .iter()
                .enumerate()
                .filter(|(_, k)| k.source == si)
            {
                for entry in &k.entries {
                    let at = entries
                        .iter()
                        .position(|e| e == entry)
                        .expect("every entry was compiled");
                    let f = module.function(&c.lowered[at]).map_err(|e| {
                        Failure::Trial(TrialFailure::Compile(format!(
                            "kernel `{}`: entry `{entry}` not found in the module: {e}",
                            k.name
                        )))
                    })?;
                    functions[ki].push(f);
                }
            }
            modules.push(module);
        }
        self.loaded.insert(
            index,
            Loaded {
                functions,
                fp64,
                _modules: modules,
            },
        );
        Ok(())
    }

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
            let (empty, clock, module) = probes(&self.gpu, self.cache_dir.as_deref())?;
            self.timer = Some(Timer::new(&self.gpu, &empty, clock, module)?);
        }
        if self.kernels.is_none() {
            let kernels = Kernels::load(&self.gpu, self.cache_dir.as_deref())
                .map_err(|m| Failure::Trial(TrialFailure::Harness(m)))?;
            self.kernels = Some(kernels);
        }
        let loaded = &self.loaded[&req.suite];
        let case = &suite.cases[req.case];
        let (k, r) = (req.kernel, suite.reference);
        // Paired: the base revision's kernel, its loaded functions.
        let paired = base.map(|(b, bs)| (b, bs, &self.loaded[&b.suite]));
        let launch_limit = self.gpu.max_shared_optin()? as u32;
        let mut checked: Vec<(&Suite, usize, usize)> =
            vec![(suite, req.case, k), (suite, req.case, r)];
        checked.extend(paired.map(|(b, bs, _)| (bs, b.case, b.kernel)));
        for (s, c, ki) in checked {
            if let Some(l) = s.cases[c].launches[ki]
                .iter()
                .find(|l| l.shared > launch_limit)
            {
                return Err(Failure::Trial(TrialFailure::ResourceLimit(format!(
                    "kernel `{}` asks for {} bytes of dynamic shared memory; this device allows {launch_limit}",
                    s.kernels[ki].name, l.shared
                ))));
            }
        }
        let bufs = self.case_buffers(suite, req.case)?;
        let kernels = self.kernels.as_ref();
        // The footprint comes from the kernel's first run in this worker, on real inputs, so
        // that the driver's local-memory reservation (kept once made) shows as a drop.
        let first = InputSet::new(req.case, req.seed);
        first.upload(&self.gpu, kernels, suite, &bufs)?;
        let mut footprint =
            footprint_of(&self.gpu, suite, req.case, k, &loaded.functions[k], &bufs)?;
        if loaded.fp64[k].count > 0 {
            footprint.fp64 = Some(Box::new(loaded.fp64[k].clone()));
        }
        let base_footprint = match paired {
            Some((b, bs, bl)) => Some(footprint_of(
                &self.gpu,
                bs,
                b.case,
                b.kernel,
                &bl.functions[b.kernel],
                &bufs,
            )?),
            None => None,
        };
        phases.setup = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        // Timed launches rotate over `INPUT_SETS` input sets: the check's first sets, whose
        // reference outputs are cached, and which the timed outputs are compared with.
        let seeds: Vec<u64> = (0..INPUT_SETS as u64)
            .map(|s| req.seed.wrapping_add(s))
            .collect();
        let mut sets = vec![first];
        sets.extend(seeds[1..].iter().map(|s| InputSet::new(req.case, *s)));
        if req.check {
            verify::verify(
                &self.gpu,
                suite,
                req.case,
                k,
                &loaded.functions,
                &bufs,
                verify::FirstInputs {
                    seed: req.seed,
                    sets: &sets,
                    kernels,
                },
                &mut self.references,
            )?;
        }
        let mut expected = Vec::new();
        for set in &sets {
            let funcs = &loaded.functions;
            let refs = &mut self.references;
            expected.push(refs.outputs(&self.gpu, suite, (set, kernels), funcs, &bufs)?);
        }
        phases.check = clock.elapsed().as_secs_f64();

        let mut copies = Copies::new(&self.gpu, kernels, suite, bufs, sets)?;
        let timer = self.timer.as_mut().expect("created above");
        let bench = suite.bench.with_effort(req.effort);
        // The timed pair: the kernel, and what it is timed against — its suite's reference, or
        // in paired mode the base revision's kernel (`None` when it is the reference itself).
        let under_test: Which = (suite, req.case, k, &loaded.functions);
        let against: Option<Which> = match paired {
            Some((b, bs, bl)) => Some((bs, b.case, b.kernel, &bl.functions)),
            None => (k != r).then_some((suite, req.case, r, &loaded.functions)),
        };
        let plan = {
            let (mut kernel, mut against) = timed_pair(under_test, against, &copies, kernels);
            let against = against.as_mut().map(|o| o as &mut dyn Timed);
            timer.plan(&self.gpu, &bench, &mut kernel, against, req.regime)?
        };
        // Paired: base and candidate replayed in graphs of one size. Seen on an H200, paired
        // A/A with batches chosen per side from each pilot (16 and 32 launches): the same
        // ~4 µs kernel read 3.8–4.3% slower on one side, every run (a graph's launch cost is
        // spread over its launches).
        let plan = match paired {
            Some(_) => {
                let batch = plan.kernel_batch.max(plan.reference_batch);
                crate::measure::Plan {
                    kernel_batch: batch,
                    reference_batch: batch,
                    ..plan
                }
            }
            None => plan,
        };
        // Cold: the copies made for the input sets (one, when the case does not fit twice).
        let wanted = if plan.regime == Regime::Graph {
            plan.copies()
        } else {
            copies.len()
        };
        copies.grow(&self.gpu, kernels, wanted)?;
        let samples = {
            let (mut kernel, mut against) = timed_pair(under_test, against, &copies, kernels);
            let against = against.as_mut().map(|o| o as &mut dyn Timed);
            timer.sample(&self.gpu, &bench, plan, copies.len(), &mut kernel, against)?
        };
        // The kernel wrote last (see `Timer::sample`): every copy it ran on must hold the
        // reference's answer for that copy's input set.
        let used = if plan.regime == Regime::Graph {
            plan.kernel_batch
        } else {
            copies.len()
        };
        let at = (req.case, k);
        copies.check(&self.gpu, kernels, suite, at, used, &expected, &seeds)?;
        if let Some(median) = samples.kernel_summary().map(|s| s.median) {
            // Only where L2 cannot hold what a sample moves: the launches of one sample on
            // their own copies, at least twice the L2, after a flush.
            let l2 = self.gpu.info.l2_bytes.max(0) as f64;
            let launches = if plan.regime == Regime::Graph {
                used
            } else {
                1
            };
            let moved = case.bytes.unwrap_or(0.0).min(copies.bytes_each() as f64);
            let from_dram = bench.l2_flush && launches as f64 * moved >= 2.0 * l2;
            plausible(case.bytes, case.flops, median, &self.gpu.info, from_dram)
                .map_err(|m| Failure::Wrong(format!("kernel `{}`: {m}", suite.kernels[k].name)))?;
        }
        drop(copies);
        self.gpu.synchronize()?;
        Ok(TrialData {
            samples,
            footprint,
            base_footprint,
        })
    }

    /// The case's buffers, from the pool; running out of memory says how much was asked for.
    fn case_buffers(&self, suite: &Suite, case: usize) -> Result<Vec<DeviceBuffer>, Failure> {
        let lens = &suite.cases[case].lens;
        let needed: usize = suite
            .buffers
            .iter()
            .zip(lens)
            .map(|(b, len)| len * b.dtype.size())
            .sum();
        let mut out = Vec::new();
        for (b, len) in suite.buffers.iter().zip(lens) {
            match self.gpu.alloc(len * b.dtype.size()) {
                Ok(buf) => out.push(buf),
                Err(e) if e.kind() == ErrorKind::OutOfMemory => {
                    let (free, total) = self.gpu.memory_info().unwrap_or((0, 0));
                    return Err(Failure::Trial(TrialFailure::OutOfMemory(format!(
                        "out of memory: the case's buffers need {} in all (`{}` alone {}), the device has {} free of {}",
                        bytes(needed as u64),
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
}
