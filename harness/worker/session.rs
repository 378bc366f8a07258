//! `Session`: the worker's GPU, the modules it has loaded, and the execution of one trial —
//! compile (through the cache), check correctness, then time.

use super::protocol::{TrialRequest, TrialResult};
use crate::check::inputs::generate;
use crate::check::verify::{self, Failure};
use crate::device::compile::{self, CompileError, CompileRequest};
use crate::device::{DeviceBuffer, DeviceError, Function, Gpu, Module};
use crate::measure::{Timed, Timer};
use crate::suite::{Launch, Role, Suite};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

/// Where a trial's time went.
#[derive(Default)]
struct Phases {
    setup: f64,
    check: f64,
}

/// Modules and functions of one suite, in kernel order.
struct Loaded {
    functions: Vec<Function>,
    // Declared after `functions` so functions are dropped first; they must not outlive it.
    _modules: Vec<Module>,
}

/// A worker's state.
pub struct Session {
    gpu: Gpu,
    timer: Option<Timer>,
    loaded: HashMap<PathBuf, Loaded>,
    cache_dir: Option<PathBuf>,
}

/// Compiles every source of `suite` for `arch`; on failure, a message naming the suite, the
/// kernels from the failing source, and NVRTC's log.
pub fn compile_suite(
    suite: &Suite,
    arch: &str,
    cache_dir: Option<&std::path::Path>,
) -> Result<Vec<(usize, compile::Compiled)>, String> {
    let mut out = Vec::new();
    for (si, source) in suite.sources.iter().enumerate() {
        let kernels: Vec<&crate::suite::Kernel> =
            suite.kernels.iter().filter(|k| k.source == si).collect();
        let entries: Vec<String> = kernels.iter().map(|k| k.entry.clone()).collect();
        let req = CompileRequest {
            path: &source.path,
            text: &source.text,
            include_dirs: &suite.include_dirs,
            options: &suite.options,
            entries: &entries,
            arch,
        };
        match compile::compile(&req, cache_dir) {
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
                return Err(format!(
                    "suite `{}`, {names}: `{}` {what} for {arch}\n{e}",
                    suite.name,
                    source.path.display()
                ));
            }
        }
    }
    Ok(out)
}

/// A kernel launch as a timed operation over rotated input copies, restoring in-out buffers
/// of every copy before each sample.
struct Op<'a> {
    f: &'a Function,
    launch: &'a Launch,
    copies: &'a [Vec<DeviceBuffer>],
    pristine: &'a [(usize, DeviceBuffer)],
}

impl Timed for Op<'_> {
    fn prepare(&mut self, gpu: &Gpu) -> Result<(), DeviceError> {
        for copy in self.copies {
            for (i, pristine) in self.pristine {
                gpu.copy(&copy[*i], pristine)?;
            }
        }
        Ok(())
    }
    fn run(&mut self, gpu: &Gpu, copy: usize) -> Result<(), DeviceError> {
        verify::launch(
            gpu,
            self.f,
            self.launch,
            &self.copies[copy % self.copies.len()],
        )
    }
}

/// An empty kernel: its event-timed duration is the launch floor.
const EMPTY_KERNEL: &str = "extern \"C\" __global__ void kernelgate_empty() {}\n";

/// Compiles and loads the empty kernel.
fn empty_kernel(
    gpu: &Gpu,
    cache_dir: Option<&std::path::Path>,
) -> Result<(Function, Module), Failure> {
    let entries = ["kernelgate_empty".to_string()];
    let req = CompileRequest {
        path: std::path::Path::new("kernelgate_empty.cu"),
        text: EMPTY_KERNEL,
        include_dirs: &[],
        options: &[],
        entries: &entries,
        arch: &gpu.info.arch(),
    };
    let c = compile::compile(&req, cache_dir)
        .map_err(|e| Failure::Wrong(format!("the launch-floor kernel: {e}")))?;
    let module = gpu.load(&c.cubin)?;
    let f = module.function(&c.lowered[0])?;
    Ok((f, module))
}

impl Session {
    /// Opens the device.
    pub fn open(ordinal: i32, cache_dir: Option<PathBuf>) -> Result<Session, DeviceError> {
        let gpu = Gpu::open(ordinal)?;
        Ok(Session {
            gpu,
            timer: None,
            loaded: HashMap::new(),
            cache_dir,
        })
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Runs one trial: never panics on the user's input; a sticky device error sets `fatal`.
    pub fn run_trial(&mut self, req: &TrialRequest) -> TrialResult {
        let before = compile::counts();
        let mut phases = Phases::default();
        let outcome = self.trial(req, &mut phases);
        let after = compile::counts();
        let (outcome, fatal) = match outcome {
            Ok(samples) => (Ok(samples), false),
            Err(Failure::Wrong(m)) => (Err(m), false),
            Err(Failure::Device(e)) => {
                let hint = if e.sticky {
                    " (a fault in a kernel poisons its CUDA context: the worker restarts; run `compute-sanitizer` on this trial to find the access)"
                } else {
                    ""
                };
                (Err(format!("{e}{hint}")), e.sticky)
            }
        };
        TrialResult {
            outcome,
            fatal,
            compiled: after.0 - before.0,
            cached: after.1 - before.1,
            setup_seconds: phases.setup,
            check_seconds: phases.check,
        }
    }

    fn trial(
        &mut self,
        req: &TrialRequest,
        phases: &mut Phases,
    ) -> Result<crate::measure::Samples, Failure> {
        let clock = Instant::now();
        let suite = &req.suite;
        if !self.loaded.contains_key(&suite.path) {
            let arch = self.gpu.info.arch();
            let compiled =
                compile_suite(suite, &arch, self.cache_dir.as_deref()).map_err(Failure::Wrong)?;
            let mut modules = Vec::new();
            let mut functions: Vec<Option<Function>> = suite.kernels.iter().map(|_| None).collect();
            for (si, c) in compiled {
                let module = self.gpu.load(&c.cubin)?;
                let mut lowered = c.lowered.iter();
                for (ki, k) in suite
                    .kernels
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| k.source == si)
                {
                    let name = lowered.next().expect("one lowered name per entry");
                    functions[ki] = Some(module.function(name).map_err(|e| {
                        Failure::Wrong(format!(
                            "kernel `{}`: entry `{}` not found in the module: {e}",
                            k.name, k.entry
                        ))
                    })?);
                }
                modules.push(module);
            }
            let functions = functions
                .into_iter()
                .map(|f| f.expect("every kernel has a source"))
                .collect();
            self.loaded.insert(
                suite.path.clone(),
                Loaded {
                    functions,
                    _modules: modules,
                },
            );
        }
        if self.timer.is_none() {
            let (empty, _module) = empty_kernel(&self.gpu, self.cache_dir.as_deref())?;
            self.timer = Some(Timer::new(&self.gpu, &empty)?);
        }
        let loaded = &self.loaded[&suite.path];
        let case = &suite.cases[req.case];
        let bufs: Vec<DeviceBuffer> = suite
            .buffers
            .iter()
            .zip(&case.lens)
            .map(|(b, len)| self.gpu.alloc(len * b.dtype.size()))
            .collect::<Result<_, _>>()?;
        let (k, r) = (req.kernel, suite.reference);
        let launch_limit = self.gpu.max_shared_optin()? as u32;
        for (ki, l) in case
            .launches
            .iter()
            .enumerate()
            .filter(|(ki, _)| *ki == k || *ki == r)
        {
            if l.shared > launch_limit {
                return Err(Failure::Wrong(format!(
                    "kernel `{}` asks for {} bytes of dynamic shared memory; this device allows {launch_limit}",
                    suite.kernels[ki].name, l.shared
                )));
            }
        }
        phases.setup = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        if req.check {
            verify::verify(
                &self.gpu,
                suite,
                req.case,
                k,
                &loaded.functions,
                &bufs,
                req.seed,
            )?;
        }
        phases.check = clock.elapsed().as_secs_f64();

        // Time on the first input set, in-out buffers restored from a pristine copy each sample.
        let host = generate(suite, req.case, req.seed).map_err(Failure::Wrong)?;
        verify::upload(&self.gpu, &bufs, &host)?;
        let mut pristine = Vec::new();
        for (i, _) in suite
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.role == Role::Inout)
        {
            let copy = self.gpu.alloc(bufs[i].bytes)?;
            self.gpu.copy(&copy, &bufs[i])?;
            pristine.push((i, copy));
        }
        let timer = self.timer.as_mut().expect("created above");
        let bench = suite.bench.with_effort(req.effort);
        let mut copies = vec![bufs];
        let plan = {
            let mut kernel = Op {
                f: &loaded.functions[k],
                launch: &case.launches[k],
                copies: &copies,
                pristine: &pristine,
            };
            let mut reference = Op {
                f: &loaded.functions[r],
                launch: &case.launches[r],
                copies: &copies,
                pristine: &pristine,
            };
            let reference: Option<&mut dyn Timed> =
                if k == r { None } else { Some(&mut reference) };
            timer.plan(&self.gpu, &bench, &mut kernel, reference)?
        };
        let footprint: usize = copies[0].iter().map(|b| b.bytes).sum();
        let wanted = plan.copies(
            footprint,
            self.gpu.info.l2_bytes.max(0) as usize,
            bench.l2_flush,
        );
        while copies.len() < wanted {
            let mut copy = Vec::new();
            for b in &copies[0] {
                let c = self.gpu.alloc(b.bytes)?;
                self.gpu.copy(&c, b)?;
                copy.push(c);
            }
            copies.push(copy);
        }
        let mut kernel = Op {
            f: &loaded.functions[k],
            launch: &case.launches[k],
            copies: &copies,
            pristine: &pristine,
        };
        let mut reference = Op {
            f: &loaded.functions[r],
            launch: &case.launches[r],
            copies: &copies,
            pristine: &pristine,
        };
        let reference: Option<&mut dyn Timed> = if k == r { None } else { Some(&mut reference) };
        let samples = timer.sample(
            &self.gpu,
            &bench,
            plan,
            copies.len(),
            &mut kernel,
            reference,
        )?;
        drop(pristine);
        drop(copies);
        self.gpu.synchronize()?;
        Ok(samples)
    }
}
