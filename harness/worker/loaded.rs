//! `Loaded`: a suite's kernels compiled and loaded in the worker — per kernel, one function
//! per launch (each holding its module loaded) — once per worker.

use crate::check::failure::Failure;
use crate::compile_suite::{compile_suite, source_entries};
use crate::device::{Function, Gpu};
use crate::failure::TrialFailure;
use crate::suite::Suite;
use std::path::Path;

/// Modules and functions of one suite: per kernel, one function per launch.
pub(super) struct Loaded {
    /// Per kernel, one function per launch.
    pub functions: Vec<Vec<Function>>,
    /// Per kernel, its FP64 instructions (`mix`), for the footprint.
    pub fp64: Vec<crate::device::ptx::Fp64Use>,
}

impl Loaded {
    /// Compiles every source of `suite` for this device (through the cache in `cache_dir`)
    /// and looks up each launch's function.
    pub fn load(gpu: &Gpu, suite: &Suite, cache_dir: Option<&Path>) -> Result<Loaded, Failure> {
        let arch = gpu.info.arch();
        let compiled = compile_suite(suite, &arch, cache_dir)
            .map_err(|e| Failure::Trial(TrialFailure::Compile(e.to_string())))?;
        let fp64 = crate::mix::kernel_fp64(suite, &compiled);
        let mut functions: Vec<Vec<Function>> = suite.kernels.iter().map(|_| Vec::new()).collect();
        for (si, c) in compiled {
            let kernels = suite
                .kernels
                .iter()
                .enumerate()
                .filter(|(_, k)| k.source == si);
            if let Some(decl) = &suite.sources[si].library {
                for (ki, _) in kernels {
                    let call = crate::device::cublaslt::Gemm::new(decl)
                        .map_err(|e| Failure::Trial(TrialFailure::Compile(e)))?;
                    functions[ki].push(Function::library(call));
                }
                continue;
            }
            let module = gpu.load(&c.cubin)?;
            let entries = source_entries(suite, si);
            for (ki, k) in kernels {
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
        }
        Ok(Loaded { functions, fp64 })
    }
}
