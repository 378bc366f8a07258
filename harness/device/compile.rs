//! `compile`: NVRTC to a CUBIN for one architecture, through an on-disk cache keyed by the
//! source, every header in its include folders, the options, the entries, the architecture
//! and NVRTC's version — so a second run compiles nothing. CUDA's own headers (`headers`) are
//! on the include path and in the key by their versions; each entry's FP64 instructions are
//! counted from NVRTC's PTX (`ptx`) and cached with the CUBIN.

use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What to compile.
#[derive(Debug, Clone)]
pub struct CompileRequest<'a> {
    /// Source file, for NVRTC's messages and for relative includes.
    pub path: &'a Path,
    /// The source text.
    pub text: &'a str,
    /// `-I` folders.
    pub include_dirs: &'a [PathBuf],
    /// Extra NVRTC options.
    pub options: &'a [String],
    /// Entry points, as name expressions (`saxpy`, `scale<float>`).
    pub entries: &'a [String],
    /// Target, e.g. `sm_90`.
    pub arch: &'a str,
}

/// A compiled module.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Compiled {
    /// The CUBIN image.
    #[serde(skip)]
    pub cubin: Vec<u8>,
    /// The entries as requested (name expressions), in request order.
    #[serde(default)]
    pub entries: Vec<String>,
    /// The mangled (lowered) name of each entry, in request order.
    pub lowered: Vec<String>,
    /// Each entry's double-precision instructions, counted in NVRTC's PTX, in request order.
    #[serde(default)]
    pub fp64: Vec<super::ptx::Fp64Use>,
    /// NVRTC's log (warnings), empty when it said nothing.
    pub log: String,
    /// Whether this came from the cache.
    #[serde(skip)]
    pub cached: bool,
}

/// Why a compile failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CompileError {
    /// The compiler (NVRTC, or nvcc for a source with host code) rejected the source.
    #[error("{compiler} failed to compile `{path}`:\n{log}")]
    Source {
        /// `NVRTC`, `nvcc` or `ptxas`.
        compiler: &'static str,
        /// The source file.
        path: String,
        /// NVRTC's log.
        log: String,
    },
    /// NVRTC itself failed (not the user's code).
    #[error("NVRTC error in `{call}`: {code:?}")]
    Nvrtc {
        /// Which call.
        call: &'static str,
        /// The result code.
        code: nvrtc_sys::nvrtcResult,
    },
    /// An entry could not be found after compiling.
    #[error("`{entry}` is not a `__global__` function in `{path}` (declare it `extern \"C\" __global__`, or name a template instantiation such as `f<float>`)")]
    NoEntry {
        /// The name expression.
        entry: String,
        /// The source file.
        path: String,
    },
    /// A PTX, CUBIN or fatbin file that cannot be loaded (`binary`).
    #[error("`{path}`: {message}")]
    Binary {
        /// The file.
        path: String,
        /// What is wrong, and what to do.
        message: String,
    },
    /// Text with a NUL byte cannot be handed to NVRTC.
    #[error("{0} contains a NUL byte")]
    Nul(String),
}

impl CompileError {
    /// [`CompileError::Source`]: `compiler`'s `log` of `path`, with `hint` after it where there
    /// is one.
    pub(super) fn source(
        compiler: &'static str,
        path: &Path,
        log: String,
        hint: Option<String>,
    ) -> CompileError {
        let log = match hint {
            Some(hint) => format!("{log}\nhint: {hint}"),
            None => log,
        };
        let path = path.display().to_string();
        CompileError::Source {
            compiler,
            path,
            log,
        }
    }

    /// [`CompileError::NoEntry`]: `entry` is not a kernel of `path`.
    pub(super) fn no_entry(path: &Path, entry: &str) -> CompileError {
        let (entry, path) = (entry.to_string(), path.display().to_string());
        CompileError::NoEntry { entry, path }
    }

    /// [`CompileError::Binary`]: what is wrong around `path` (the file, a folder, a tool).
    pub(super) fn binary(path: &Path, message: String) -> CompileError {
        let path = path.display().to_string();
        CompileError::Binary { path, message }
    }
}

/// Counts of compiles and cache hits in this process.
static COMPILED: AtomicUsize = AtomicUsize::new(0);
static CACHED: AtomicUsize = AtomicUsize::new(0);

/// `(compiled, from cache)` in this process so far.
pub fn counts() -> (usize, usize) {
    (
        COMPILED.load(Ordering::Relaxed),
        CACHED.load(Ordering::Relaxed),
    )
}

/// NVRTC's version, `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32), CompileError> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both pointers are valid for writes for the call's duration.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(err("nvrtcVersion"))?;
    Ok((major, minor))
}

/// The real architectures this NVRTC compiles for, as numbers (`90` for `sm_90`).
pub fn supported_archs() -> Result<Vec<i32>, CompileError> {
    let err = err("nvrtcGetSupportedArchs");
    let mut n = 0;
    // SAFETY: `n` is valid for writes for the call's duration.
    unsafe { nvrtc_sys::nvrtcGetNumSupportedArchs(&mut n) }
        .result()
        .map_err(&err)?;
    let mut archs = vec![0; n.max(0) as usize];
    // SAFETY: `archs` holds the `n` entries NVRTC said it will write.
    unsafe { nvrtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
        .result()
        .map_err(err)?;
    Ok(archs)
}

/// The cache key of a request: a hex SHA-256.
pub fn cache_key(req: &CompileRequest, compiler: &str) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"kernelgate-cubin-v3");
    field(super::headers::cuda_headers().fingerprint.as_bytes());
    field(req.text.as_bytes());
    for dir in req.include_dirs {
        for (path, bytes) in headers(dir) {
            field(path.to_string_lossy().as_bytes());
            field(&bytes);
        }
    }
    for s in req.options.iter().chain(req.entries) {
        field(s.as_bytes());
    }
    field(req.arch.as_bytes());
    field(compiler.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Header files under `dir` (recursively, sorted), with their contents.
fn headers(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    const EXTS: [&str; 6] = ["h", "hpp", "cuh", "hh", "inc", "inl"];
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTS.contains(&e))
            {
                if let Ok(bytes) = std::fs::read(&p) {
                    out.push((p.strip_prefix(dir).unwrap_or(&p).to_path_buf(), bytes));
                }
            }
        }
    }
    out.sort();
    out
}

/// Compiles `req`, or loads it from `cache_dir` when an identical compile is there.
pub fn compile(req: &CompileRequest, cache_dir: Option<&Path>) -> Result<Compiled, CompileError> {
    let version = nvrtc_version()?;
    let key = cache_key(req, &format!("{}.{}", version.0, version.1));
    through_cache(cache_dir, &key, || compile_uncached(req))
}

/// The compile cached in `cache_dir` under `key`, or `make`'s, then written there.
pub(super) fn through_cache(
    cache_dir: Option<&Path>,
    key: &str,
    make: impl FnOnce() -> Result<Compiled, CompileError>,
) -> Result<Compiled, CompileError> {
    if let Some(hit) = cache_dir.and_then(|d| read_cache(d, key)) {
        count(true);
        return Ok(hit);
    }
    let compiled = make()?;
    count(false);
    if let Some(dir) = cache_dir {
        // A cache that cannot be written costs time, not correctness: carry on.
        let _ = write_cache(dir, key, &compiled);
    }
    Ok(compiled)
}

/// Counts one compile, or one cache hit.
fn count(cached: bool) {
    if cached { &CACHED } else { &COMPILED }.fetch_add(1, Ordering::Relaxed);
}

fn read_cache(dir: &Path, key: &str) -> Option<Compiled> {
    let cubin = std::fs::read(dir.join(format!("{key}.cubin"))).ok()?;
    let meta = std::fs::read(dir.join(format!("{key}.json"))).ok()?;
    let mut c: Compiled = serde_json::from_slice(&meta).ok()?;
    c.cubin = cubin;
    c.cached = true;
    Some(c)
}

/// Writes both files through temporaries and renames, metadata last: a reader finds both or
/// misses.
fn write_cache(dir: &Path, key: &str, c: &Compiled) -> std::io::Result<()> {
    put(dir, &format!("{key}.cubin"), &c.cubin)?;
    let json = serde_json::to_vec(c).map_err(std::io::Error::other)?;
    put(dir, &format!("{key}.json"), &json)
}

/// Writes the cache file `name` in `dir` through a temporary and a rename, so a reader in
/// another process finds it whole or not at all.
pub(super) fn put(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!("{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name))
}

fn cstring(text: &str, what: &str) -> Result<CString, CompileError> {
    CString::new(text).map_err(|_| CompileError::Nul(what.to_string()))
}

/// `req`'s source compiled by NVRTC with its entries as name expressions: the program, NVRTC's
/// log and the entries; the log with a hint where the source does not compile.
pub(super) fn program(
    req: &CompileRequest,
) -> Result<(Program, String, Vec<CString>), CompileError> {
    let src = cstring(req.text, &format!("`{}`", req.path.display()))?;
    let name = cstring(&req.path.to_string_lossy(), "the source path")?;
    let prog = nvrtc::create_program(&src, Some(&name)).map_err(err("nvrtcCreateProgram"))?;
    let guard = Program(prog);
    let entries: Vec<CString> = req
        .entries
        .iter()
        .map(|e| cstring(e, &format!("entry `{e}`")))
        .collect::<Result<_, _>>()?;
    for e in &entries {
        // SAFETY: `prog` is live (owned by `guard`); `e` is a valid C string that outlives it.
        unsafe { nvrtc_sys::nvrtcAddNameExpression(guard.0, e.as_ptr()) }
            .result()
            .map_err(err("nvrtcAddNameExpression"))?;
    }
    let mut options = vec![
        format!("--gpu-architecture={}", req.arch),
        "--std=c++17".to_string(),
    ];
    // The suite's folders first, then CUDA's own (`headers`), so a suite can override either.
    let cuda = super::headers::cuda_headers();
    options.extend(
        req.include_dirs
            .iter()
            .chain(&cuda.dirs)
            .map(|d| format!("--include-path={}", d.display())),
    );
    options.extend(req.options.iter().cloned());
    for o in &options {
        cstring(o, &format!("option `{o}`"))?;
    }
    // SAFETY: `prog` is live; options hold no NUL (checked above, so cudarc's unwrap holds).
    let status = unsafe { nvrtc::compile_program(guard.0, &options) };
    // SAFETY: `prog` is live.
    let log = unsafe { nvrtc::get_program_log(guard.0) }
        .map(|l| c_chars_to_string(&l))
        .unwrap_or_default();
    if status.is_err() {
        let hint = super::headers::host_only_hint(&log)
            .or_else(|| super::headers::missing_header_hint(&log, cuda));
        return Err(CompileError::source("NVRTC", req.path, log, hint));
    }
    Ok((guard, log, entries))
}

fn compile_uncached(req: &CompileRequest) -> Result<Compiled, CompileError> {
    let (guard, log, entries) = program(req)?;
    let mut lowered = Vec::new();
    for (e, text) in entries.iter().zip(req.entries) {
        let mut out: *const c_char = std::ptr::null();
        // SAFETY: `prog` is live and compiled; `e` was added as a name expression.
        let r = unsafe { nvrtc_sys::nvrtcGetLoweredName(guard.0, e.as_ptr(), &mut out) };
        if r.result().is_err() || out.is_null() {
            return Err(CompileError::no_entry(req.path, text));
        }
        // SAFETY: NVRTC returns a NUL-terminated string owned by `prog`, live here.
        let name = unsafe { CStr::from_ptr(out) };
        lowered.push(name.to_string_lossy().into_owned());
    }
    let cubin = output(&guard, Output::Cubin)?;
    Ok(Compiled::new(cubin, req, lowered, &ptx(&guard)?, log))
}

impl Compiled {
    /// A fresh compile of `req`: its CUBIN, lowered names and log, each entry's FP64
    /// instructions counted in `ptx`.
    pub(super) fn new(
        cubin: Vec<u8>,
        req: &CompileRequest,
        lowered: Vec<String>,
        ptx: &str,
        log: String,
    ) -> Compiled {
        let functions = super::ptx::parse(ptx);
        let fp64 = lowered
            .iter()
            .map(|name| super::ptx::fp64_use(&functions, name).unwrap_or_default())
            .collect();
        Compiled {
            cubin,
            entries: req.entries.to_vec(),
            lowered,
            fp64,
            log,
            cached: false,
        }
    }
}

/// An NVRTC call's failure as a [`CompileError`] naming the call.
fn err(call: &'static str) -> impl Fn(nvrtc::NvrtcError) -> CompileError {
    move |e| CompileError::Nvrtc { call, code: e.0 }
}

fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// The PTX of a compiled program.
pub(super) fn ptx(guard: &Program) -> Result<String, CompileError> {
    let ptx = output(guard, Output::Ptx)?;
    Ok(String::from_utf8_lossy(&ptx)
        .trim_end_matches('\0')
        .to_string())
}

/// What a compiled program is asked for.
enum Output {
    Cubin,
    Ptx,
}

/// The bytes of a compiled program's CUBIN or PTX: its size asked first, then the bytes.
fn output(guard: &Program, what: Output) -> Result<Vec<u8>, CompileError> {
    type Size = unsafe fn(nvrtc_sys::nvrtcProgram, *mut usize) -> nvrtc_sys::nvrtcResult;
    type Get = unsafe fn(nvrtc_sys::nvrtcProgram, *mut c_char) -> nvrtc_sys::nvrtcResult;
    let (size_of, get, calls): (Size, Get, _) = match what {
        Output::Cubin => (
            nvrtc_sys::nvrtcGetCUBINSize,
            nvrtc_sys::nvrtcGetCUBIN,
            ["nvrtcGetCUBINSize", "nvrtcGetCUBIN"],
        ),
        Output::Ptx => (
            nvrtc_sys::nvrtcGetPTXSize,
            nvrtc_sys::nvrtcGetPTX,
            ["nvrtcGetPTXSize", "nvrtcGetPTX"],
        ),
    };
    let mut size = 0usize;
    // SAFETY: `prog` is live and compiled; `size` is valid for writes.
    unsafe { size_of(guard.0, &mut size) }
        .result()
        .map_err(err(calls[0]))?;
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` has exactly the `size` bytes NVRTC asked for.
    unsafe { get(guard.0, bytes.as_mut_ptr() as *mut c_char) }
        .result()
        .map_err(err(calls[1]))?;
    Ok(bytes)
}

/// Destroys the program when dropped, on every path.
pub(super) struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}
