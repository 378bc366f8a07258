//! `Gpu` and `compile`: the only module that names cudarc. Everything above it is testable
//! without a GPU.

pub mod binary;
mod buffer;
pub mod compile;
pub mod counters;
pub mod cublaslt;
mod error;
mod gpu;
pub mod headers;
mod info;
pub mod libraries;
mod module;
pub mod nvcc;
pub mod param_types;
pub mod ptx;
pub mod thermal;

pub use buffer::{DeviceBuffer, KernelArg};
pub use error::{DeviceError, ErrorKind};
pub use gpu::{attributes, elapsed_ms, elapsed_seconds, Event, Gpu, Graph, LaunchDims};
pub use info::{Attributes, DeviceInfo};
pub use module::{Function, FunctionAttribute, Module};

/// Why GPU trials cannot run here, or `None` when the CUDA driver library loads.
///
/// cudarc panics when a library is missing, so this must be asked before any other call.
pub fn driver_missing() -> Option<String> {
    // SAFETY: only tries to open the library; no CUDA call is made.
    let present = unsafe { cudarc::driver::sys::is_culib_present() };
    (!present).then(|| "no CUDA driver: libcuda could not be loaded".to_string())
}

/// Why kernels cannot be compiled here, or `None` when NVRTC loads.
pub fn nvrtc_missing() -> Option<String> {
    // SAFETY: only tries to open the library; no NVRTC call is made.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    (!present).then(|| "no NVRTC: libnvrtc could not be loaded (pip install 'nvidia-cuda-nvrtc==13.0.*' and put its nvidia/cu13/lib on LD_LIBRARY_PATH)".to_string())
}

/// The CUDA driver's version (`13000` for 13.0), or `None` where no driver loads. Asks no GPU:
/// `cuDriverGetVersion` needs no `cuInit`.
pub fn driver_version() -> Option<i32> {
    if driver_missing().is_some() {
        return None;
    }
    let mut version = 0;
    // SAFETY: the library is present (checked above); `version` is valid for writes.
    let result = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    (result == cudarc::driver::sys::CUresult::CUDA_SUCCESS).then_some(version)
}
