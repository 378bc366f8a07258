//! `Session`: the worker's GPU, the modules it has loaded, and the execution of one trial —
//! compile (through the cache), check correctness, then time.

use super::protocol::{BaseKernel, TrialData, TrialRequest, TrialResult};
use crate::check::copies::Copies;
use crate::check::input_set::InputSet;
use crate::check::kernels::Kernels;
use crate::check::plausible::plausible;
use crate::check::reference::References;
use crate::check::verify::{self, Failure};
use crate::device::compile::{self, CompileError, CompileRequest};
use crate::device::{
    DeviceBuffer, DeviceError, ErrorKind, Function, FunctionAttribute, Gpu, Module,
};
use crate::failure::TrialFailure;
use crate::measure::{Footprint, Regime, Resources, Timed, Timer, INPUT_SETS};
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

/// The distinct entries of the kernels compiled from source `si`, in first-use order.
fn source_entries(suite: &Suite, si: usize) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for k in suite.kernels.iter().filter(|k| k.source == si) {
        for e in &k.entries {
            if !entries.contains(e) {
                entries.push(e.clone());
            }
        }
    }
    entries
}

/// Compiles every source of `suite` for `arch`; on failure, a message naming the suite, the
/// kernels from the failing source, and NVRTC's log.
pub fn compile_suite(
    suite: &Suite,
    arch: &str,
    cache_dir: Option<&std::path::Path>,
) -> Result<Vec<(usize, compile::Compiled)>, (usize, String)> {
    let mut out = Vec::new();
    for (si, source) in suite.sources.iter().enumerate() {
        let kernels: Vec<&crate::suite::Kernel> =
            suite.kernels.iter().filter(|k| k.source == si).collect();
        let entries = source_entries(suite, si);
        let req = CompileRequest {
            path: &source.path,
            text: &source.text,
            include_dirs: &suite.include_dirs,
            options: &suite.options,
            entries: &entries,
            arch,
        };
        // PTX, CUBIN and fatbin files are loaded as they are, without NVRTC (`device::binary`).
        let result = match source.kind() {
            crate::suite::SourceKind::Cuda => compile::compile(&req, cache_dir),
            _ => crate::device::binary::load(&source.path, &source.text, &entries, arch),
        };
        match result {
            Ok(c) => out.push((si, c)),
            Err(e) => {
                let names = kernels
                    .iter()
                    .map(|k| format!("`{}`", k.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                let names = if kernels.len() == 1 {
                    format!("kernel {names}")
                } else {
                    format!("kernels {names}")
                };
                let what = match &e {
                    CompileError::Source { .. } => "does not compile",
                    _ => "could not be compiled",
                };
                return Err((
                    si,
                    format!(
                        "suite `{}`, {names}: `{}` {what} for {arch}\n{e}",
                        suite.name,
                        source.path.display()
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// A kernel (all its launches) as a timed operation over the timing copies, each sample
/// starting from the checked state (see `check::copies`).
struct Op<'a> {
    suite: &'a Suite,
    case: usize,
    kernel: usize,
    funcs: &'a [Function],
    copies: &'a Copies,
    kernels: Option<&'a Kernels>,
}

impl<'a> Op<'a> {
    /// Kernel `kernel` of `req`'s case over `copies`.
    fn new(
        suite: &'a Suite,
        case: usize,
        kernel: usize,
        funcs: &'a [Vec<Function>],
        copies: &'a Copies,
        kernels: Option<&'a Kernels>,
    ) -> Op<'a> {
        Op {
            suite,
            case,
            kernel,
            funcs: &funcs[kernel],
            copies,
            kernels,
        }
    }
}

/// A kernel, one of `functions`, on `case` of `suite`.
type Which<'a> = (&'a Suite, usize, usize, &'a [Vec<Function>]);

/// The kernel under test and what it is timed against (when anything), over `copies`.
fn timed_pair<'a>(
    kernel: Which<'a>,
    against: Option<Which<'a>>,
    copies: &'a Copies,
    kernels: Option<&'a Kernels>,
) -> (Op<'a>, Option<Op<'a>>) {
    let op = |(suite, case, k, funcs): Which<'a>| Op::new(suite, case, k, funcs, copies, kernels);
    (op(kernel), against.map(op))
}

impl Timed for Op<'_> {
    fn prepare(&mut self, gpu: &Gpu, copy: Option<usize>) -> Result<(), DeviceError> {
        self.copies.prepare(gpu, self.kernels, copy)
    }
    fn run(&mut self, gpu: &Gpu, copy: usize) -> Result<(), DeviceError> {
        let bufs = self.copies.copy(copy);
        verify::run_op(gpu, self.suite, self.case, self.kernel, self.funcs, bufs)
    }
}

/// The harness's own kernels: an empty one, whose event-timed duration is the launch floor,
/// and a clock probe that spins and reports the SM cycles and nanoseconds it took.
const PROBES: &str = r#"
extern "C" __global__ void kernelgate_empty() {}

extern "C" __global__ void kernelgate_clock(unsigned long long* out, int spins) {
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    float x = threadIdx.x;
    for (int i = 0; i < spins; ++i) x = x * 0.9999999f + 1e-7f;
    long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0) {
        out[0] = (unsigned long long)(c1 - c0);
        out[1] = t1 - t0;
        out[2] = (x == -1.0f);
    }
}
"#;

/// Compiles and loads the probe kernels: (empty, clock, their module).
fn probes(
    gpu: &Gpu,
    cache_dir: Option<&std::path::Path>,
) -> Result<(Function, Function, Module), Failure> {
    let entries = [
        "kernelgate_empty".to_string(),
        "kernelgate_clock".to_string(),
    ];
    let req = CompileRequest {
        path: std::path::Path::new("kernelgate_probes.cu"),
        text: PROBES,
        include_dirs: &[],
        options: &[],
        entries: &entries,
        arch: &gpu.info.arch(),
    };
    let c = compile::compile(&req, cache_dir).map_err(|e| {
        Failure::Trial(TrialFailure::Harness(format!(
            "the harness's probe kernels: {e}"
        )))
    })?;
    let module = gpu.load(&c.cubin)?;
    let empty = module.function(&c.lowered[0])?;
    let clock = module.function(&c.lowered[1])?;
    Ok((empty, clock, module))
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
            .map_err(|(_, m)| Failure::Trial(TrialFailure::Compile(m)))?;
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

/// One run of kernel `k` alone, to see what it occupies: the pool's high-water mark (reset
/// first, so it counts this case's buffers and the kernel's scratch), the driver's free-memory
/// drop across the launches (local memory it reserves for spills and stack frames), and each
/// launch's resources.
fn footprint_of(
    gpu: &Gpu,
    suite: &Suite,
    case: usize,
    k: usize,
    funcs: &[Function],
    bufs: &[DeviceBuffer],
) -> Result<Footprint, Failure> {
    gpu.synchronize()?;
    gpu.reset_pool_high()?;
    let (free_before, _) = gpu.memory_info()?;
    verify::run_op(gpu, suite, case, k, funcs, bufs)?;
    let (free_launched, _) = gpu.memory_info()?;
    gpu.synchronize()?;
    let (free_after, _) = gpu.memory_info()?;
    let pool_peak = gpu.pool_high()?;
    let mut launches = Vec::new();
    for ((f, l), entry) in funcs
        .iter()
        .zip(&suite.cases[case].launches[k])
        .zip(&suite.kernels[k].entries)
    {
        let threads = l.block.iter().product::<u32>();
        launches.push(Resources {
            entry: entry.clone(),
            registers: f.attribute(FunctionAttribute::Registers)?,
            static_shared: f.attribute(FunctionAttribute::StaticShared)?,
            dynamic_shared: l.shared,
            local_bytes: f.attribute(FunctionAttribute::LocalBytes)?,
            max_threads: f.attribute(FunctionAttribute::MaxThreads)?,
            block_threads: threads,
            blocks_per_sm: f.blocks_per_sm(threads, l.shared)?,
        });
    }
    let resident = gpu.info.max_threads_per_sm.max(0) as u64 * gpu.info.sm_count.max(0) as u64;
    let local = launches
        .iter()
        .map(|l| l.local_bytes.max(0) as u64)
        .max()
        .unwrap_or(0);
    Ok(Footprint {
        pool_peak,
        local_reservation: local * resident,
        free_drop: free_before.saturating_sub(free_launched.min(free_after)) as u64,
        launches,
        fp64: None,
    })
}
