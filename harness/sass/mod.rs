//! `KernelIdentity`: which machine code a kernel runs, per architecture, computed without a GPU
//! from the module kernelgate loads — NVRTC's cubin, a CUBIN, the cubin a fatbin holds for the
//! architecture, or a PTX entry's text — and the SASS itself: disassembled (`disasm`), diffed
//! (`diff`) and counted by instruction class (`mix`). `docs/sass.md` says what the hash covers.
//!
//! - `elf`: the cubin's sections, relocations, symbols and `.nv.info` records (`object`).
//! - `fatbin`: the cubin (or PTX) a fatbin holds for an architecture.
//! - `identity`: the hash; `info`: the `.nv.info` records in it, and the resources (registers,
//!   shared/local/stack bytes) read from them.
//! - `ptx`: the identity of a PTX entry when no GPU has compiled it.
//! - `disasm`, `diff`, `mix`: `nvdisasm`'s listing, normalised; a unified diff; the mix.

pub mod change;
pub mod diff;
pub mod disasm;
pub mod elf;
mod error;
pub mod fatbin;
pub mod identity;
mod image;
mod info;
pub mod listings;
pub mod mix;
pub mod ptx;
pub mod reach;
mod types;

use crate::device::compile::Compiled;
use crate::suite::{SourceKind, Suite};
use serde::{Deserialize, Serialize};

pub use error::SassError;
pub use identity::identify_cubin;
pub use image::Module;
pub(crate) use types::Fields;
pub use types::{CodeSource, KernelIdentity, Parts, Resources};

/// The toolchain a set of identities was made with, stored beside the hashes (not in them), so
/// that a later verdict can say "same code, new toolchain".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolchain {
    /// NVRTC's version (`13.0`), when NVRTC loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvrtc: Option<String>,
    /// The CUDA driver's version (`13.0`, from `cuDriverGetVersion`), when a driver loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// This kernelgate's version.
    pub kernelgate: String,
}

impl Toolchain {
    /// The toolchain of this process: NVRTC and the driver where they load.
    pub fn here() -> Toolchain {
        let nvrtc = crate::device::nvrtc_missing()
            .is_none()
            .then(crate::device::compile::nvrtc_version)
            .and_then(Result::ok)
            .map(|(major, minor)| format!("{major}.{minor}"));
        Toolchain {
            nvrtc,
            driver: crate::device::driver_version().map(driver_version),
            kernelgate: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// `13.0` for the driver's `13000`.
pub fn driver_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// The code of one suite kernel for one architecture: one identity per launch, in launch order
/// (an entry launched twice appears twice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelCode {
    /// The suite kernel's name (the `kernel` of `suite::kernel`).
    pub kernel: String,
    /// The identity of each launch's entry.
    pub entries: Vec<KernelIdentity>,
}

impl KernelCode {
    /// Whether the two run the same code: the same entries' identities, in the same order.
    pub fn same_code(&self, other: &KernelCode) -> bool {
        let hashes = other.entries.iter().map(|e| &e.hash);
        self.entries.iter().map(|e| &e.hash).eq(hashes)
    }
}

impl<'a> Module<'a> {
    /// The module `compiled` (from `compile_suite::compile_suite`) holds for `arch`, by the kind of
    /// its source: a fatbin gives the cubin (or PTX) the driver would pick.
    pub fn of(
        kind: SourceKind,
        compiled: &'a Compiled,
        arch: &str,
    ) -> Result<Module<'a>, SassError> {
        let image = &compiled.cubin;
        Ok(match kind {
            SourceKind::Cuda | SourceKind::Nvcc | SourceKind::Cubin => {
                Module::Cubin(image.as_slice().into())
            }
            SourceKind::Ptx => {
                let text = image.strip_suffix(&[0]).unwrap_or(image);
                Module::Ptx(String::from_utf8_lossy(text))
            }
            SourceKind::Fatbin => fatbin::pick(image, arch)?,
            SourceKind::Library => Module::Library(String::from_utf8_lossy(image)),
        })
    }

    /// The identity of entry `name` (its mangled name) in this module, for `arch`; `driver` is
    /// the CUDA driver's version where known (it compiles PTX, so a PTX identity includes it).
    pub fn identify(
        &self,
        name: &str,
        arch: &str,
        driver: Option<&str>,
    ) -> Result<KernelIdentity, SassError> {
        match self {
            Module::Cubin(bytes) => identify_cubin(bytes, name, arch),
            Module::Ptx(text) => ptx::identify_ptx(text, name, arch, driver),
            Module::Library(text) => {
                let mut h = types::Fields::default();
                h.field(b"library")
                    .field(text.as_bytes())
                    .field(name.as_bytes());
                Ok(KernelIdentity {
                    hash: types::hex(&h.finish()),
                    arch: arch.to_string(),
                    name: name.to_string(),
                    from: CodeSource::Library,
                    parts: None,
                    resources: None,
                })
            }
        }
    }
}

/// Every kernel's code in a compiled suite, for `arch`, in the suite's kernel order: the API
/// the paired mode, stored verdicts and reports call. `compiled` pairs a source index with its
/// module, as `compile_suite::compile_suite` returns them (so nothing is compiled again); `toolchain`
/// gives the driver version a PTX identity includes.
pub fn identities(
    suite: &Suite,
    compiled: &[(usize, Compiled)],
    arch: &str,
    toolchain: &Toolchain,
) -> Result<Vec<KernelCode>, SassError> {
    let mut out = Vec::with_capacity(suite.kernels.len());
    for kernel in &suite.kernels {
        let source = &suite.sources[kernel.source];
        let wrap = |e: SassError| SassError::Kernel {
            suite: suite.name.clone(),
            kernel: kernel.name.clone(),
            path: source.path.display().to_string(),
            source: Box::new(e),
        };
        let (_, c) = compiled
            .iter()
            .find(|(si, _)| *si == kernel.source)
            .ok_or_else(|| wrap(SassError::NotCompiled))?;
        let module = Module::of(source.kind(), c, arch).map_err(wrap)?;
        let mut entries = Vec::with_capacity(kernel.entries.len());
        for entry in &kernel.entries {
            let lowered = c
                .entries
                .iter()
                .position(|e| e == entry)
                .and_then(|at| c.lowered.get(at))
                .unwrap_or(entry);
            let identity = module.identify(lowered, arch, toolchain.driver.as_deref());
            entries.push(identity.map_err(wrap)?);
        }
        out.push(KernelCode {
            kernel: kernel.name.clone(),
            entries,
        });
    }
    Ok(out)
}

/// For a unit test that compiles with NVRTC (marked `#[ignore]` with that reason, so a run
/// without NVRTC lists it as ignored, never as passed): fails, saying why, where NVRTC does not
/// load.
#[cfg(test)]
pub(crate) fn require_nvrtc() {
    if let Some(why) = crate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
}

#[cfg(test)]
mod tests {
    use super::fatbin::{entries, Kind};
    use super::*;
    use std::path::Path;

    /// `relu.toml`'s kernel, from `fatbin` (a file of `tests/fixtures/sass/`), for `arch`.
    fn relu(fatbin: &str, arch: &str) -> KernelIdentity {
        let path = Path::new("tests/fixtures/sass/relu.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let suite = crate::suite::load_text(path, &text.replace("relu.fatbin", fatbin)).unwrap();
        let compiled = crate::compile_suite::compile_suite(&suite, arch, None).unwrap();
        let toolchain = Toolchain {
            nvrtc: None,
            driver: Some("13.0".into()),
            kernelgate: "test".into(),
        };
        let code = identities(&suite, &compiled, arch, &toolchain).unwrap();
        assert_eq!(code.len(), 1);
        assert_eq!(code[0].kernel, "fatbin");
        code[0].entries[0].clone()
    }

    #[test]
    fn a_fatbin_kernel_is_the_entry_the_driver_would_load_compressed_or_not() {
        let bytes = std::fs::read("tests/fixtures/sass/relu.fatbin").unwrap();
        let cubin = |arch: u32| {
            let all = entries(&bytes).unwrap();
            let e = all
                .iter()
                .find(|e| e.kind == Kind::Cubin && e.arch == arch)
                .unwrap();
            e.bytes().unwrap()
        };
        let sm90 = identify_cubin(&cubin(90), "relu", "sm_90").unwrap();
        let sm80 = identify_cubin(&cubin(80), "relu", "sm_89").unwrap();
        assert_ne!(sm90.hash, sm80.hash);
        for fatbin in ["relu.fatbin", "relu-lz4.fatbin", "relu-zstd.fatbin"] {
            assert_eq!(relu(fatbin, "sm_90"), sm90, "{fatbin}");
            assert_eq!(relu(fatbin, "sm_89"), sm80, "{fatbin}: the sm_80 cubin");
            let ptx = relu(fatbin, "sm_100");
            assert_eq!(ptx.from, CodeSource::Ptx, "{fatbin}: no sm_10x cubin");
            assert_eq!(ptx.resources, None);
        }
        let e = identities(
            &crate::suite::load_file(Path::new("tests/fixtures/sass/relu.toml")).unwrap(),
            &[],
            "sm_90",
            &Toolchain::here(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "suite `relu`, kernel `fatbin` (`tests/fixtures/sass/relu.fatbin`): its source was not compiled (compile the suite first, with `compile_suite::compile_suite`)"
        );
    }
}
