//! `DeviceBuffer`: device memory, freed when dropped, and `KernelArg`, what a launch passes —
//! below `gpu` (which allocates and launches) and `cublaslt` (which passes them to the library).

use super::error::{error, DeviceError};
use cudarc::driver::{result as cu, sys};

/// One kernel argument.
pub enum KernelArg<'a> {
    /// A device pointer.
    Buffer(&'a DeviceBuffer),
    /// A scalar's bytes.
    Scalar(&'a [u8]),
}

/// Device memory, freed when dropped: on its stream when it came from the pool.
pub struct DeviceBuffer {
    pub(super) ptr: sys::CUdeviceptr,
    /// Size in bytes.
    pub bytes: usize,
    pub(super) stream: Option<sys::CUstream>,
    /// Whether dropping it frees the memory (`false` for a `part` of another buffer).
    pub(super) owned: bool,
}

impl DeviceBuffer {
    /// `bytes` allocated outside the pool (`cuMemAlloc`): never in a case's pool peak.
    pub(super) fn plain(bytes: usize) -> Result<DeviceBuffer, DeviceError> {
        // SAFETY: a plain allocation, freed by `DeviceBuffer::drop`.
        let ptr = unsafe { cu::malloc_sync(bytes.max(1)) }.map_err(error("cuMemAlloc"))?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            stream: None,
            owned: true,
        })
    }

    /// `len` bytes of this buffer from byte `offset`, as a buffer of its own that is never
    /// freed: many small buffers carved from one allocation (the timing copies: one
    /// `cuMemAlloc` instead of one per buffer per copy, and one `cuMemFree`, which waits for
    /// the device, instead of hundreds). The owner must keep `self` alive while it is used.
    pub fn part(&self, offset: usize, len: usize) -> DeviceBuffer {
        assert!(offset + len <= self.bytes, "part outside the buffer");
        DeviceBuffer {
            ptr: self.ptr + offset as u64,
            bytes: len,
            stream: None,
            owned: false,
        }
    }

    /// The device address, for tables of pointers that harness kernels read.
    pub fn address(&self) -> u64 {
        self.ptr
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // SAFETY: allocated by `Gpu::alloc` (on `stream`) or `Gpu::alloc_plain`, freed only here.
        let _ = unsafe {
            match self.stream {
                Some(stream) => cu::free_async(self.ptr, stream),
                None => cu::free_sync(self.ptr),
            }
        };
    }
}
