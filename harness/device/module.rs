//! `Module`: a loaded CUBIN, and `Function`: a kernel in it, with its attributes. A function
//! holds its module (as cudarc's `CudaFunction` holds its `CudaModule`), so the module is
//! unloaded only when the last of them is dropped: drop order is a type fact, not a field-order
//! convention.

use super::error::{error, DeviceError};
use cudarc::driver::{result as cu, sys};
use std::ffi::CString;
use std::rc::Rc;

/// A loaded module's handle, unloaded when the module and every function from it are gone.
struct Loaded(sys::CUmodule);

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: loaded by `Gpu::load` and unloaded only here, once nothing refers to it.
        let _ = unsafe { cu::module::unload(self.0) };
    }
}

/// A loaded module.
pub struct Module(Rc<Loaded>);

impl Module {
    /// Takes ownership of `handle`, a module `Gpu::load` just loaded.
    pub(super) fn new(handle: sys::CUmodule) -> Module {
        Module(Rc::new(Loaded(handle)))
    }
}

impl Module {
    /// Looks up a function by its lowered name, with its parameter sizes where the driver
    /// can tell them.
    pub fn function(&self, lowered: &str) -> Result<Function, DeviceError> {
        let name = CString::new(lowered).map_err(|_| {
            DeviceError::harness(
                "cuModuleGetFunction",
                "bad name",
                "the function name contains a NUL byte".into(),
            )
        })?;
        // SAFETY: the module is live (held by `self`); `name` is a valid C string.
        let handle = unsafe { cu::module::get_function(self.0 .0, name) }
            .map_err(error("cuModuleGetFunction"))?;
        let mut sizes = Vec::new();
        let param_sizes = loop {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `handle` is live; both pointers are valid for writes. The driver answers
            // CUDA_ERROR_INVALID_VALUE past the last parameter.
            let r = unsafe { sys::cuFuncGetParamInfo(handle, sizes.len(), &mut offset, &mut size) };
            match r {
                sys::cudaError_enum::CUDA_SUCCESS => sizes.push(size),
                sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE => break Some(sizes),
                _ => break None,
            }
            if sizes.len() > 4096 {
                break None;
            }
        };
        Ok(Function {
            handle,
            param_sizes,
            _module: Some(Rc::clone(&self.0)),
            library: None,
        })
    }
}

/// A kernel in a loaded module, which it keeps loaded while it exists — or a library call
/// (`suite::library`), launched by the library.
pub struct Function {
    pub(super) handle: sys::CUfunction,
    pub(super) param_sizes: Option<Vec<usize>>,
    /// The module `handle` lives in: unloaded only after this function is dropped.
    _module: Option<Rc<Loaded>>,
    /// The library call this stands for; `handle` is null.
    pub(super) library: Option<Rc<super::cublaslt::Gemm>>,
}

impl Function {
    /// A library call as a function: launching it queues the call.
    pub fn library(call: super::cublaslt::Gemm) -> Function {
        Function {
            handle: std::ptr::null_mut(),
            param_sizes: None,
            _module: None,
            library: Some(Rc::new(call)),
        }
    }

    /// Whether this is a library call, whose code and attributes are the library's.
    pub fn is_library(&self) -> bool {
        self.library.is_some()
    }

    /// The workspace a library call holds outside the pool, bytes (0 for a kernel).
    pub fn library_workspace(&self) -> u64 {
        self.library.as_ref().map_or(0, |g| g.workspace_bytes())
    }

    /// The algorithm a library call ran last, as the library configured it (`None` for a
    /// kernel, or before its first call).
    pub fn library_algorithm(&self) -> Option<String> {
        self.library.as_ref().and_then(|g| g.algorithm())
    }

    /// Blocks of `threads` threads with `dynamic_shared` bytes that fit on one SM at once.
    pub fn blocks_per_sm(&self, threads: u32, dynamic_shared: u32) -> Result<i32, DeviceError> {
        // SAFETY: `handle` is live.
        unsafe {
            cu::occupancy::max_active_block_per_multiprocessor(
                self.handle,
                threads as i32,
                dynamic_shared as usize,
            )
        }
        .map_err(error("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    }

    /// Registers per thread, static shared and local bytes per thread.
    pub fn attribute(&self, a: FunctionAttribute) -> Result<i32, DeviceError> {
        use sys::CUfunction_attribute as F;
        let attr = match a {
            FunctionAttribute::Registers => F::CU_FUNC_ATTRIBUTE_NUM_REGS,
            FunctionAttribute::StaticShared => F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            FunctionAttribute::LocalBytes => F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
            FunctionAttribute::MaxThreads => F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        };
        // SAFETY: `handle` is live.
        unsafe { cu::function::get_function_attribute(self.handle, attr) }
            .map_err(error("cuFuncGetAttribute"))
    }
}

/// A function attribute kernelgate reads.
#[derive(Debug, Clone, Copy)]
pub enum FunctionAttribute {
    /// Registers per thread.
    Registers,
    /// Static shared memory per block, bytes.
    StaticShared,
    /// Local memory per thread, bytes.
    LocalBytes,
    /// Largest block this function can be launched with.
    MaxThreads,
}
