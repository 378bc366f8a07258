//! `SuiteCode`: one suite compiled for one architecture (through the compile cache) with every
//! kernel's code identity and the digests of the files its trials read (`.npy` inputs, golden
//! outputs) — everything [`super::trial_code`] needs, computed once per suite and side. No GPU.

use crate::compile_suite::SuiteCompileError;
use crate::device::compile::Compiled;
use crate::sass::{KernelCode, SassError, Toolchain};
use crate::suite::{Init, SourceKind, Suite};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A suite compiled and identified for one architecture.
#[derive(Debug, Clone)]
pub struct SuiteCode {
    /// The architecture.
    pub arch: String,
    /// What compiled and identified it.
    pub toolchain: Toolchain,
    /// Every kernel's code, in the suite's kernel order.
    pub kernels: Vec<KernelCode>,
    /// The SHA-256 of every file the suite's trials read as data (`.npy` inputs, golden
    /// outputs), by path; a file that cannot be read is absent.
    pub files: BTreeMap<PathBuf, String>,
    /// The compiled modules, by source index (for SASS listings).
    pub compiled: Vec<(usize, Compiled)>,
    /// Seconds spent computing the identities (the compile is not counted).
    pub identify_seconds: f64,
}

/// Why a suite's code cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    /// A source does not compile (or cannot be loaded).
    #[error(transparent)]
    Compile(#[from] SuiteCompileError),
    /// A module cannot be read.
    #[error(transparent)]
    Identity(#[from] SassError),
    /// A CUDA source needs NVRTC, and it does not load.
    #[error("suite `{suite}`: {reason}")]
    NoNvrtc {
        /// The suite.
        suite: String,
        /// Why NVRTC does not load.
        reason: String,
    },
}

/// The SHA-256 of a file's bytes, as 64 hex digits; `None` when it cannot be read.
pub fn file_digest(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::sass::identity::hex(&Sha256::digest(&bytes)))
}

/// The data files `suite`'s trials read: `.npy` inputs and golden outputs.
fn data_files(suite: &Suite) -> Vec<&Path> {
    let npy = suite.buffers.iter().filter_map(|b| {
        let mut init = b.init.as_ref()?;
        while let Init::Sorted(inner) = init {
            init = inner;
        }
        match init {
            Init::Npy(path) => Some(path.as_path()),
            _ => None,
        }
    });
    npy.chain(suite.check.golden.values().map(PathBuf::as_path))
        .collect()
}

impl SuiteCode {
    /// Compiles `suite` for `arch` (through `cache`), identifies every kernel with `toolchain`,
    /// and digests its data files.
    pub fn build(
        suite: &Suite,
        arch: &str,
        cache: Option<&Path>,
        toolchain: &Toolchain,
    ) -> Result<SuiteCode, CodeError> {
        let cuda = suite.sources.iter().any(|s| s.kind() == SourceKind::Cuda);
        if let (true, Some(reason)) = (cuda, crate::device::nvrtc_missing()) {
            return Err(CodeError::NoNvrtc {
                suite: suite.name.clone(),
                reason,
            });
        }
        let compiled = crate::compile_suite::compile_suite(suite, arch, cache)?;
        let start = Instant::now();
        let kernels = crate::sass::identities(suite, &compiled, arch, toolchain)?;
        let identify_seconds = start.elapsed().as_secs_f64();
        let files = data_files(suite)
            .into_iter()
            .filter_map(|p| Some((p.to_path_buf(), file_digest(p)?)))
            .collect();
        Ok(SuiteCode {
            arch: arch.to_string(),
            toolchain: toolchain.clone(),
            kernels,
            files,
            compiled,
            identify_seconds,
        })
    }
}

/// The normalised SASS of entry `id` of `suite`'s kernel `kernel`, from the suite's modules
/// `compiled` for `arch`: `None` for PTX (the driver compiles it) or without a disassembler.
pub fn entry_sass(
    (suite, kernel): (&Suite, usize),
    compiled: &[(usize, Compiled)],
    arch: &str,
    id: &crate::sass::KernelIdentity,
    listings: &mut crate::sass::listings::Listings,
) -> Result<Option<Vec<String>>, SassError> {
    let source = suite.kernels[kernel].source;
    let Some(module) = module_of(compiled, source) else {
        return Err(SassError::NotCompiled);
    };
    listings.entry(suite.sources[source].kind(), module, arch, id)
}

/// The cubin `suite`'s kernel `kernel` runs, from the suite's modules `compiled` for `arch`,
/// for [`crate::sass::listings::Listings::prefetch`]: `None` for PTX, or where it cannot be had
/// ([`entry_sass`] then says why).
pub fn kernel_cubin<'c>(
    (suite, kernel): (&Suite, usize),
    compiled: &'c [(usize, Compiled)],
    arch: &str,
) -> Option<std::borrow::Cow<'c, [u8]>> {
    let source = suite.kernels[kernel].source;
    let module = module_of(compiled, source)?;
    match crate::sass::Module::of(suite.sources[source].kind(), module, arch).ok()? {
        crate::sass::Module::Cubin(cubin) => Some(cubin),
        crate::sass::Module::Ptx(_) | crate::sass::Module::Library(_) => None,
    }
}

/// The module of source `source` among `compiled`.
fn module_of(compiled: &[(usize, Compiled)], source: usize) -> Option<&Compiled> {
    compiled
        .iter()
        .find(|(si, _)| *si == source)
        .map(|(_, module)| module)
}
