//! `Suite`: a validated suite file, expanded into cases — the types every later stage reads
//! (sources, buffers, kernels, cases with their launches resolved, check and bench settings).

use crate::dtype::DType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One suite file, validated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    /// The suite's name: the first part of every trial name.
    pub name: String,
    /// Line and column of the name's value in the suite file.
    #[serde(default)]
    pub name_pos: (usize, usize),
    /// What could not be checked at load time (e.g. a kernel source the signature reader
    /// cannot follow); `kernelgate lint` and the run print them.
    #[serde(skip)]
    pub warnings: Vec<crate::error::Diagnostic>,
    /// The suite file, as found.
    pub path: PathBuf,
    /// Line of each kernel's `[[kernel]]` header, for messages that point at it.
    pub kernel_lines: Vec<usize>,
    /// The CUDA sources the kernels come from.
    pub sources: Vec<Source>,
    /// `-I` directories for NVRTC (the suite's folder is always first).
    pub include_dirs: Vec<PathBuf>,
    /// Extra NVRTC options.
    pub options: Vec<String>,
    /// Buffers, in declaration order.
    pub buffers: Vec<Buffer>,
    /// Kernels, in declaration order.
    pub kernels: Vec<Kernel>,
    /// Index of the reference kernel in `kernels`.
    pub reference: usize,
    /// One case per size combination.
    pub cases: Vec<Case>,
    /// Correctness settings.
    pub check: Check,
    /// Timing settings.
    pub bench: Bench,
}

/// A CUDA source file and its text.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Source {
    /// Path of the `.cu` file (or `.ptx`, `.cubin`, `.fatbin`: see `kind`).
    pub path: PathBuf,
    /// Its contents, read at load time (so a run compiles what it validated); empty for a
    /// cubin or fatbin, which the compile step reads as bytes.
    pub text: String,
    /// Why this CUDA source is compiled with nvcc rather than NVRTC (`suite::compiler`).
    pub nvcc: Option<String>,
    /// `-D` options of a kernel's variants (`suite::axes`), after the suite's: the same file
    /// with other defines is another source.
    #[serde(default)]
    pub defines: Vec<String>,
    /// The library call this source stands for (`suite::library`): nothing is compiled; its
    /// text is the call's signature, for the argument checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<crate::gemm::Gemm>,
}

/// What a source file holds, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// CUDA C++, compiled with NVRTC.
    Cuda,
    /// CUDA C++ with host code, compiled with nvcc (`Source::nvcc` says why).
    Nvcc,
    /// PTX text (from nvcc, Triton, Numba...), JIT-compiled by the driver when loaded.
    Ptx,
    /// A CUBIN for one architecture.
    Cubin,
    /// A fat binary: CUBINs and PTX for several architectures; the driver picks.
    Fatbin,
    /// A library call (cuBLASLt's GEMM): the library's own code, nothing compiled.
    Library,
}

impl SourceKind {
    /// Whether kernelgate compiles it (NVRTC or nvcc), rather than loading it as built.
    pub fn is_compiled(self) -> bool {
        matches!(self, SourceKind::Cuda | SourceKind::Nvcc)
    }
}

impl Source {
    /// What the file holds: `.ptx`, `.cubin` and `.fatbin` are loaded without NVRTC.
    pub fn kind(&self) -> SourceKind {
        if self.library.is_some() {
            return SourceKind::Library;
        }
        match self.path.extension().and_then(|e| e.to_str()) {
            Some("ptx") => SourceKind::Ptx,
            Some("cubin") => SourceKind::Cubin,
            Some("fatbin") => SourceKind::Fatbin,
            _ if self.nvcc.is_some() => SourceKind::Nvcc,
            _ => SourceKind::Cuda,
        }
    }
}

/// What a kernel does with a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read only: checked unchanged after every run.
    Input,
    /// Written only: poisoned before every run, compared after.
    Output,
    /// Read and written: initialized before every run, compared after.
    Inout,
}

impl Role {
    /// Whether the kernel's result is read from this buffer.
    pub fn is_output(self) -> bool {
        matches!(self, Role::Output | Role::Inout)
    }
}

/// How a buffer is filled before a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Init {
    /// Seeded uniform floats in `[min, max)` (`max` itself only through rounding).
    Uniform {
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// Seeded normal floats.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
    },
    /// Seeded integers in `[min, max]`.
    Integers {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// Every element the same.
    Constant(f64),
    /// `start, start + step, ...`
    Iota {
        /// First value.
        start: f64,
        /// Increment.
        step: f64,
    },
    /// Read from a `.npy` file (fixed: the same for every trial).
    Npy(PathBuf),
    /// Seeded normal floats, a fraction `outliers` of them multiplied by `scale`
    /// (`{ random = "normal", outliers = 0.01, scale = 1e4 }`).
    HeavyTailed {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
        /// Fraction of elements that are outliers.
        outliers: f64,
        /// What an outlier is multiplied by.
        scale: f64,
    },
    /// Seeded special values of the type — ±0, the smallest and largest denormals, ±the
    /// largest finite value, ±1 — and NaN and ±∞ where `nan` (`{ random = "special" }`).
    Special {
        /// Include NaN and ±∞ (for kernels checked with `allow_nan`).
        nan: bool,
    },
    /// One seeded normal value repeated (`{ random = "equal" }`): all-equal inputs that still
    /// differ between input sets.
    Equal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
    },
    /// Another seeded init, sorted ascending (`sorted = true`).
    Sorted(Box<Init>),
}

/// A device buffer of the suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Buffer {
    /// Name, as args refer to it.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Input, output or both.
    pub role: Role,
    /// How it is filled (`None` for outputs: they are poisoned).
    pub init: Option<Init>,
}

/// A kernel argument, resolved for one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ArgValue {
    /// A pointer to buffer `index`.
    Buffer(usize),
    /// A pointer to the kernel's scratch buffer `index`.
    Scratch(usize),
    /// A scalar, as the bytes the kernel receives.
    Scalar(Vec<u8>),
}

/// How to launch one kernel in one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// Arguments, in order.
    pub args: Vec<ArgValue>,
    /// Each scalar argument as `lint --launches` shows it (`4096 as i32`); `None` for a buffer.
    /// Not sent to a worker, not part of the trial identity.
    #[serde(skip)]
    pub shown: Vec<Option<String>>,
    /// Where the suite file writes this launch's `block` and `shared` (byte offsets), for
    /// lint's errors; `None` where not written. Not sent to a worker, not in the identity.
    #[serde(skip)]
    pub written: [Option<usize>; 2],
}

/// A kernel of the suite: one launch, or a sequence of launches timed and checked as one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kernel {
    /// Name: the second part of trial names.
    pub name: String,
    /// The `__global__` function of each launch (or a template instantiation such as
    /// `scale<float>`).
    pub entries: Vec<String>,
    /// Index into the suite's sources.
    pub source: usize,
    /// Whether this is the suite's reference.
    pub reference: bool,
    /// Scratch buffers, allocated on the stream before the launches and freed after them.
    pub scratch: Vec<Scratch>,
    /// Memory and resource limits.
    pub limits: Limits,
}

/// A scratch buffer of a kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scratch {
    /// Name, as the kernel's args refer to it.
    pub name: String,
    /// Element type.
    pub dtype: DType,
}

/// What a kernel may use; each breach fails its trials.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Limits {
    /// Peak device memory of a case (the pool's high-water mark), bytes.
    pub memory_budget: Option<u64>,
    /// Registers per thread, in any launch.
    pub max_registers: Option<u32>,
    /// Fail when any launch uses local memory (spills, run-time-indexed arrays).
    pub forbid_spills: bool,
    /// `fp64 = "forbid"`: fail when the kernel's code holds double-precision instructions.
    #[serde(default)]
    pub forbid_fp64: bool,
}

/// One size combination of a suite, with everything resolved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    /// `n=4096` or `m=64,n=128`; empty when the suite has no sizes.
    pub label: String,
    /// The size values.
    pub sizes: BTreeMap<String, i64>,
    /// Element count of each buffer, in buffer order.
    pub lens: Vec<usize>,
    /// Per kernel (in kernel order), its launches in order.
    pub launches: Vec<Vec<Launch>>,
    /// Per kernel, the element count of each scratch buffer.
    pub scratch_lens: Vec<Vec<usize>>,
    /// Bytes one run moves, if declared.
    pub bytes: Option<f64>,
    /// Floating-point operations one run does, if declared.
    pub flops: Option<f64>,
    /// Per buffer, the `min` and `max` of its `random` init for this case, where one of them is
    /// written over the sizes (`max = "nbins - 1"`); empty when none is.
    #[serde(default)]
    pub init_bounds: Vec<Option<[f64; 2]>>,
    /// The kernels (variants) a `skip` condition over the sizes removes from this case: they
    /// have no trial in it, and their launches here are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<usize>,
}

/// Tolerance for one output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Whether NaN equals NaN for this output.
    pub allow_nan: bool,
}

/// Correctness settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    /// Sets of fresh seeded inputs per trial.
    pub trials: u32,
    /// Seed of the first set; set `t` uses `seed + t`.
    pub seed: u64,
    /// Tolerance per buffer index (outputs only).
    pub tolerances: BTreeMap<usize, Tolerance>,
    /// Golden output files per buffer index, compared with the reference kernel's output.
    pub golden: BTreeMap<usize, PathBuf>,
}

/// How the L2 cache is flushed before each sample (`[bench] l2_flush`) — which definition of a
/// kernel's time a number follows (`docs/measurement.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "FlushWord", try_from = "FlushWord")]
pub enum Flush {
    /// Write a buffer twice the L2's size (`true`, `"write"`; the default, as nvbench and
    /// Triton's `do_bench` flush): the kernel also pays the write-back of the dirty lines.
    Write,
    /// Write it, then read it back (`"clean"`, as Nsight Compute's `--cache-control all`):
    /// L2 holds clean lines of another buffer, nothing to write back.
    Clean,
    /// No flush (`false`): what earlier launches left in L2 stays.
    Off,
}

/// [`Flush`] as a suite file and the trial identity write it: `true` and `false` as before
/// `"clean"` existed (so the identity of a trial that does not use it is unchanged).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FlushWord {
    /// `true` (write) or `false` (off).
    On(bool),
    /// `"write"` or `"clean"`.
    Word(String),
}

impl From<Flush> for FlushWord {
    fn from(f: Flush) -> FlushWord {
        match f {
            Flush::Write => FlushWord::On(true),
            Flush::Off => FlushWord::On(false),
            Flush::Clean => FlushWord::Word("clean".into()),
        }
    }
}

/// An `l2_flush` word kernelgate does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown l2_flush `{word}` (write \"write\", \"clean\" or false)")]
pub struct UnknownFlush {
    word: String,
}

impl TryFrom<FlushWord> for Flush {
    type Error = UnknownFlush;
    fn try_from(w: FlushWord) -> Result<Flush, UnknownFlush> {
        match w {
            FlushWord::On(true) => Ok(Flush::Write),
            FlushWord::On(false) => Ok(Flush::Off),
            FlushWord::Word(w) if w == "write" => Ok(Flush::Write),
            FlushWord::Word(w) if w == "clean" => Ok(Flush::Clean),
            FlushWord::Word(word) => Err(UnknownFlush { word }),
        }
    }
}

/// Timing settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bench {
    /// How the L2 cache is flushed before each sample.
    pub l2_flush: Flush,
    /// Samples always taken per kernel.
    pub min_samples: usize,
    /// Samples never exceeded per kernel.
    pub max_samples: usize,
    /// Sampling lasts at least this long, milliseconds.
    pub min_time_ms: u64,
    /// Time cap for one trial's sampling, milliseconds.
    pub max_time_ms: u64,
    /// Stop once the median's 95% interval is this narrow (relative half-width).
    pub precision: f64,
    /// The smallest slowdown worth failing a merge for (0.03 = 3%).
    pub max_slowdown: f64,
    /// Peak memory growth over the baseline that fails (0: any growth fails).
    pub memory_growth: f64,
    /// Growth of the executed instruction count (warp level) over the baseline's or base's
    /// that fails, no statistics (`None`: no instruction gate). Applied only where the count
    /// was exact across the baseline's units.
    pub max_instruction_growth: Option<f64>,
    /// Growth of DRAM bytes read over the baseline's or base's that fails (`None`: no gate).
    /// Compared with the highest of the baseline's reads; a value below
    /// [`crate::measure::counters::DRAM_READ_TOLERANCE`] is raised to it.
    pub max_dram_read_growth: Option<f64>,
    /// What `flops` counts (`flops_type`): the peak that bounds it in the roofline; `None`:
    /// FP32 shown, and only the any-arithmetic bound applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops_type: Option<crate::dtype::FlopKind>,
}

impl Bench {
    /// These settings for one of `units` allocations a trial's samples are split over: the
    /// sample counts and times divided among them (at least 3 samples and 1 ms each), the
    /// precision target unchanged.
    pub fn per_unit(&self, units: u32) -> Bench {
        let u = units.max(1) as usize;
        let min_samples = self.min_samples.div_ceil(u).max(3);
        Bench {
            min_samples,
            max_samples: self.max_samples.div_ceil(u).max(min_samples),
            min_time_ms: self.min_time_ms / u as u64,
            max_time_ms: (self.max_time_ms / u as u64).max(1),
            ..self.clone()
        }
    }

    /// Whether the suite gates on hardware counters (`max_instruction_growth`,
    /// `max_dram_read_growth`): its trials read counters in every run.
    pub fn has_counter_gate(&self) -> bool {
        self.max_instruction_growth.is_some() || self.max_dram_read_growth.is_some()
    }

    /// These settings with `effort` times the samples and time, and a precision target
    /// `effort` times finer (for re-measuring an inconclusive trial).
    pub fn with_effort(&self, effort: u32) -> Bench {
        let e = effort.max(1);
        Bench {
            min_samples: self.min_samples * e as usize,
            max_samples: self.max_samples * e as usize,
            min_time_ms: self.min_time_ms * e as u64,
            max_time_ms: self.max_time_ms * e as u64,
            precision: self.precision / e as f64,
            ..self.clone()
        }
    }
}

impl Init {
    /// Whether it draws from the seed: another seed gives other contents (every `random` form);
    /// `constant`, `iota` and `npy` are the same for every seed.
    pub fn is_seeded(&self) -> bool {
        !matches!(self, Init::Constant(_) | Init::Iota { .. } | Init::Npy(_))
    }
}

impl Suite {
    /// Bytes of `case`'s buffers, all of them (saturating).
    pub fn buffer_bytes(&self, case: usize) -> u64 {
        let lens = self.cases.get(case).map_or(&[][..], |c| &c.lens[..]);
        self.buffers
            .iter()
            .zip(lens)
            .map(|(b, len)| (*len as u64).saturating_mul(b.dtype.size() as u64))
            .fold(0, u64::saturating_add)
    }

    /// Buffer `i`'s init in `case`: as declared, with the bounds the case resolved where they
    /// are written over the sizes.
    pub fn init(&self, case: usize, i: usize) -> Option<std::borrow::Cow<'_, Init>> {
        use std::borrow::Cow;
        let init = self.buffers.get(i)?.init.as_ref()?;
        let bounds = self.cases.get(case)?.init_bounds.get(i).copied().flatten();
        let resolved = |init: &Init| match (init, bounds) {
            (Init::Uniform { .. }, Some([min, max])) => Some(Init::Uniform { min, max }),
            (Init::Integers { .. }, Some([min, max])) => Some(Init::Integers {
                min: min as i64,
                max: max as i64,
            }),
            _ => None,
        };
        let resolved = match init {
            Init::Sorted(inner) => resolved(inner).map(|r| Init::Sorted(Box::new(r))),
            _ => resolved(init),
        };
        Some(resolved.map_or(Cow::Borrowed(init), Cow::Owned))
    }

    /// Whether kernel `kernel` has a trial in case `case` (a variant's `skip` condition over
    /// the sizes may remove it).
    pub fn has_trial(&self, case: usize, kernel: usize) -> bool {
        !self.cases[case].skipped.contains(&kernel)
    }

    /// The trial name for a case and kernel: `suite::kernel::case`.
    pub fn trial_name(&self, case: usize, kernel: usize) -> String {
        let label = &self.cases[case].label;
        let kernel = &self.kernels[kernel].name;
        if label.is_empty() {
            format!("{}::{}", self.name, kernel)
        } else {
            format!("{}::{}::{}", self.name, kernel, label)
        }
    }
}
