//! `SassError`: why a kernel's identity or SASS cannot be had.

/// Why a kernel's identity or SASS cannot be had: each says what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SassError {
    /// The bytes are not a CUDA ELF image kernelgate can read.
    #[error("not a usable cubin: {0} (rebuild it with `nvcc -cubin -arch=sm_XX`)")]
    BadCubin(String),
    /// The module has no code for this entry.
    #[error("the module has no kernel `{name}` (no `.text.{name}` section): name the entry as the module exports it")]
    NoKernel {
        /// The (mangled) entry name.
        name: String,
    },
    /// The fatbin cannot be read.
    #[error("not a usable fatbin: {0} (rebuild it with `nvcc -fatbin`)")]
    BadFatbin(String),
    /// The fatbin holds nothing the architecture can run.
    #[error("the fatbin holds no cubin or PTX that {arch} can load (it holds {held}): rebuild it with `-gencode arch=compute_XX,code=sm_XX` for {arch}")]
    NoArch {
        /// The target, e.g. `sm_90`.
        arch: String,
        /// What it holds, e.g. `sm_80 cubin, sm_75 PTX`.
        held: String,
    },
    /// The PTX has no such entry.
    #[error("the PTX has no `.entry {name}`")]
    NoPtxEntry {
        /// The entry.
        name: String,
    },
    /// No disassembler was found.
    #[error("no `nvdisasm` found (looked in {looked}): install it with `python3 -m pip install --target target/cuda-tools 'nvidia-cuda-nvdisasm==13.2.*'` (ci/test.sh does), or the CUDA toolkit, or put its bin folder on PATH")]
    NoDisassembler {
        /// Where it looked.
        looked: String,
    },
    /// The disassembler failed.
    #[error("`{tool}` failed on `{file}`: {message}")]
    Disassembler {
        /// The program run.
        tool: String,
        /// The cubin it was given.
        file: String,
        /// Its message, or why it could not run.
        message: String,
    },
    /// The kernel's source is not among the compiled modules given.
    #[error("its source was not compiled (compile the suite first, with `compile_suite::compile_suite`)")]
    NotCompiled,
    /// One kernel of a suite: the error with where it comes from.
    #[error("suite `{suite}`, kernel `{kernel}` (`{path}`): {source}")]
    Kernel {
        /// The suite.
        suite: String,
        /// The suite's kernel.
        kernel: String,
        /// The module's file.
        path: String,
        /// What is wrong.
        source: Box<SassError>,
    },
}
