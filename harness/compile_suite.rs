//! `compile_suite`: every source of a suite compiled for one architecture — CUDA through NVRTC
//! and the cache, PTX, CUBIN and fatbin loaded as built — or a [`SuiteCompileError`] naming the
//! suite, the kernels of the failing source and the compiler's log. `kernelgate lint`, the compile
//! trials and the GPU worker all compile through here.

use crate::device::compile::{self, CompileError, CompileRequest};
use crate::suite::{Kernel, SourceKind, Suite};
use std::path::{Path, PathBuf};

/// A source of a suite that does not compile (or cannot be loaded), with what to tell the user.
#[derive(Debug, thiserror::Error)]
#[error("suite `{suite}`, {kernels}: `{}` {} for {arch}\n{error}", path.display(), if matches!(error.as_ref(), CompileError::Source { .. }) { "does not compile" } else { "could not be compiled" })]
pub struct SuiteCompileError {
    /// The index of the failing source in the suite's sources.
    pub source_index: usize,
    /// The suite's name.
    suite: String,
    /// `kernel `a`` or `kernels `a`, `b``: the kernels compiled from that source.
    kernels: String,
    /// The source file.
    path: PathBuf,
    /// The target architecture.
    arch: String,
    /// What the compiler (or the binary loader) said.
    error: Box<CompileError>,
}

/// The distinct entries of the kernels compiled from source `si`, in first-use order.
pub fn source_entries(suite: &Suite, si: usize) -> Vec<String> {
    let kernels = suite.kernels.iter().filter(|k| k.source == si);
    crate::order::first_seen(kernels.flat_map(|k| k.entries.iter().cloned()))
}

/// Compiles every source of `suite` for `arch`; on failure, a message naming the suite, the
/// kernels from the failing source, and NVRTC's log.
pub fn compile_suite(
    suite: &Suite,
    arch: &str,
    cache_dir: Option<&Path>,
) -> Result<Vec<(usize, compile::Compiled)>, SuiteCompileError> {
    let mut out = Vec::new();
    for (si, source) in suite.sources.iter().enumerate() {
        let kernels: Vec<&Kernel> = suite.kernels.iter().filter(|k| k.source == si).collect();
        let entries = source_entries(suite, si);
        let options = [&suite.options[..], &source.defines].concat();
        let req = CompileRequest {
            path: &source.path,
            text: &source.text,
            include_dirs: &suite.include_dirs,
            options: &options,
            entries: &entries,
            arch,
        };
        // PTX, CUBIN and fatbin files are loaded as they are, without NVRTC (`device::binary`).
        let result = match source.kind() {
            SourceKind::Cuda => compile::compile(&req, cache_dir),
            SourceKind::Nvcc => crate::device::nvcc::compile(&req, cache_dir),
            SourceKind::Library => Ok(crate::device::cublaslt::compiled(
                source.library.as_ref(),
                &entries,
            )),
            _ => crate::device::binary::load(&source.path, &source.text, &entries, arch),
        };
        match result {
            Ok(c) => out.push((si, c)),
            Err(error) => {
                // A kernel's variants are named once, with their count.
                let seen = crate::order::grouped(
                    kernels
                        .iter()
                        .map(|k| (k.name.split('[').next().unwrap_or(&k.name), &k.name)),
                );
                let names = (seen.iter())
                    .map(|(base, names)| match names.len() {
                        1 => format!("`{}`", names[0]),
                        n => format!("`{base}` ({n} variants)"),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let s = if seen.len() == 1 { "" } else { "s" };
                let kernels = format!("kernel{s} {names}");
                return Err(SuiteCompileError {
                    source_index: si,
                    suite: suite.name.clone(),
                    kernels,
                    path: source.path.clone(),
                    arch: arch.to_string(),
                    error: Box::new(error),
                });
            }
        }
    }
    Ok(out)
}
