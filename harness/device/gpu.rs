//! `Gpu`: one device's primary context and a stream, with buffers, modules, launches and
//! timing events on it. Every `unsafe` block here is small and says why it holds.

use super::buffer::{DeviceBuffer, KernelArg};
use super::error::{error, DeviceError};
use super::info::{driver_release, DeviceInfo};
use super::module::{Function, Module};
use cudarc::driver::{result as cu, sys};
use std::ffi::c_void;

/// A device with its primary context current on this thread, and one stream.
pub struct Gpu {
    dev: sys::CUdevice,
    stream: sys::CUstream,
    /// The device's description.
    pub info: DeviceInfo,
}

/// What suite expressions may read of device `ordinal` (`sm_count`, ...), asked of the driver
/// without a context: its name and the attributes, as `Attributes` lists them.
pub fn attributes(ordinal: i32) -> Result<super::info::Attributes, DeviceError> {
    cu::init().map_err(error("cuInit"))?;
    let dev = cu::device::get(ordinal).map_err(error("cuDeviceGet"))?;
    let attr = |a| attribute(dev, a).map(i64::from);
    use sys::CUdevice_attribute as A;
    Ok(super::info::Attributes {
        name: cu::device::get_name(dev).map_err(error("cuDeviceGetName"))?,
        values: [
            attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            10 * attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?
                + attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ],
    })
}

/// Attribute `a` of device `dev`, a valid handle from cuDeviceGet.
fn attribute(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32, DeviceError> {
    // SAFETY: `dev` is valid; attributes are plain integers.
    unsafe { cu::device::get_attribute(dev, a) }.map_err(error("cuDeviceGetAttribute"))
}

// The context is made current on whichever thread uses the `Gpu`; it is not shared.
impl Gpu {
    /// Initializes the driver and opens device `ordinal`.
    pub fn open(ordinal: i32) -> Result<Gpu, DeviceError> {
        cu::init().map_err(error("cuInit"))?;
        let count = cu::device::get_count().map_err(error("cuDeviceGetCount"))?;
        if ordinal < 0 || ordinal >= count {
            return Err(DeviceError::harness(
                "cuDeviceGet",
                "CUDA_ERROR_INVALID_DEVICE",
                format!("device {ordinal} requested, {count} present (set KERNELGATE_DEVICE)"),
            ));
        }
        let dev = cu::device::get(ordinal).map_err(error("cuDeviceGet"))?;
        // SAFETY: `dev` is a valid device handle from cuDeviceGet.
        let ctx =
            unsafe { cu::primary_ctx::retain(dev) }.map_err(error("cuDevicePrimaryCtxRetain"))?;
        // SAFETY: `ctx` was just retained and stays alive for the process.
        unsafe { cu::ctx::set_current(ctx) }.map_err(error("cuCtxSetCurrent"))?;
        let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking)
            .map_err(error("cuStreamCreate"))?;
        let attr = |a| attribute(dev, a);
        use sys::CUdevice_attribute as A;
        let mut driver_version = 0;
        // SAFETY: the pointer is valid for writes.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(error("cuDriverGetVersion"))?;
        let info = DeviceInfo {
            ordinal,
            name: cu::device::get_name(dev).map_err(error("cuDeviceGetName"))?,
            compute_capability: (
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            sm_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
            memory_clock_khz: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
            bus_width_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
            l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            // SAFETY: `dev` is valid.
            total_memory: unsafe { cu::device::total_mem(dev) }
                .map_err(error("cuDeviceTotalMem"))?,
            driver_version,
            driver_release: driver_release(),
            uuid: None,
        };
        let mut gpu = Gpu { dev, stream, info };
        gpu.info.uuid = gpu.uuid();
        Ok(gpu)
    }

    /// The device's UUID as NVML and nvidia-smi print it (`GPU-xxxxxxxx-xxxx-…`).
    pub fn uuid(&self) -> Option<String> {
        let u = cu::device::get_uuid(self.dev).ok()?;
        let b: Vec<u8> = u.bytes.iter().map(|c| *c as u8).collect();
        let hex =
            |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
        let groups = [0..4, 4..6, 6..8, 8..10, 10..16].map(hex);
        Some(format!("GPU-{}", groups.join("-")))
    }

    /// The largest dynamic shared memory a block may opt into.
    pub fn max_shared_optin(&self) -> Result<i32, DeviceError> {
        use sys::CUdevice_attribute as A;
        attribute(
            self.dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )
    }

    /// Allocates `bytes` on the stream from the device's stream-ordered memory pool: what a
    /// case allocates, counted by `pool_high`.
    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer, DeviceError> {
        // SAFETY: the stream is live; the allocation is freed by `DeviceBuffer::drop`.
        let ptr = unsafe { cu::malloc_async(self.stream, bytes.max(1)) }
            .map_err(error("cuMemAllocAsync"))?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            stream: Some(self.stream),
            owned: true,
        })
    }

    /// Allocates `bytes` outside the pool, for the harness's own buffers (L2 flush, input
    /// copies), so that they never count in a case's peak.
    pub fn alloc_plain(&self, bytes: usize) -> Result<DeviceBuffer, DeviceError> {
        DeviceBuffer::plain(bytes)
    }

    fn pool(&self) -> Result<sys::CUmemoryPool, DeviceError> {
        // SAFETY: `dev` is valid; the default pool lives as long as the device.
        unsafe { cu::device::get_default_mem_pool(self.dev) }
            .map_err(error("cuDeviceGetDefaultMemPool"))
    }

    /// The pool's high-water mark of memory in use, bytes, since the last `reset_pool_high`.
    pub fn pool_high(&self) -> Result<u64, DeviceError> {
        let mut value: u64 = 0;
        // SAFETY: USED_MEM_HIGH is a 64-bit value; `value` is valid for writes.
        unsafe {
            cu::mem_pool::get_attribute(
                self.pool()?,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                &mut value as *mut u64 as *mut c_void,
            )
        }
        .map_err(error("cuMemPoolGetAttribute"))?;
        Ok(value)
    }

    /// Resets the pool's high-water mark to what is in use now.
    pub fn reset_pool_high(&self) -> Result<(), DeviceError> {
        let mut zero: u64 = 0;
        // SAFETY: USED_MEM_HIGH may only be set to zero, which resets it; `zero` is a u64.
        unsafe {
            cu::mem_pool::set_attribute(
                self.pool()?,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                &mut zero as *mut u64 as *mut c_void,
            )
        }
        .map_err(error("cuMemPoolSetAttribute"))
    }

    /// Copies `data` into `buf` (which must be at least as large) and waits.
    pub fn upload(&self, buf: &DeviceBuffer, data: &[u8]) -> Result<(), DeviceError> {
        assert!(data.len() <= buf.bytes, "upload larger than the buffer");
        // SAFETY: `buf` holds at least `data.len()` bytes; the copy finishes before return.
        unsafe {
            cu::memcpy_htod_async(buf.ptr, data, self.stream)
                .map_err(error("cuMemcpyHtoDAsync"))?;
        }
        self.synchronize()
    }

    /// Copies `buf` to the host.
    pub fn download(&self, buf: &DeviceBuffer) -> Result<Vec<u8>, DeviceError> {
        let mut out = vec![0u8; buf.bytes];
        self.download_into(buf, &mut out)?;
        Ok(out)
    }

    /// Sets every byte of `buf` to `value`, queued on the stream.
    pub fn fill(&self, buf: &DeviceBuffer, value: u8) -> Result<(), DeviceError> {
        // SAFETY: writes exactly `buf.bytes` bytes inside the allocation.
        unsafe { cu::memset_d8_async(buf.ptr, value, buf.bytes, self.stream) }
            .map_err(error("cuMemsetD8Async"))
    }

    /// Copies `src` into `dst` on the stream.
    pub fn copy(&self, dst: &DeviceBuffer, src: &DeviceBuffer) -> Result<(), DeviceError> {
        assert!(src.bytes <= dst.bytes, "copy larger than the destination");
        // SAFETY: both allocations are live and hold at least `src.bytes` bytes.
        unsafe { cu::memcpy_dtod_async(dst.ptr, src.ptr, src.bytes, self.stream) }
            .map_err(error("cuMemcpyDtoDAsync"))
    }

    /// Returns every persisting L2 line to normal, so that no carve-out set up earlier in the
    /// process survives into a sample (an L2 flush by writes does not evict persisting lines).
    pub fn reset_persisting_l2(&self) -> Result<(), DeviceError> {
        // SAFETY: takes no arguments; the context is current on this thread.
        match unsafe { sys::cuCtxResetPersistingL2Cache() }.result() {
            // A device (or MIG slice) without persisting L2 has nothing to reset.
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_SUPPORTED => Ok(()),
            r => r.map_err(error("cuCtxResetPersistingL2Cache")),
        }
    }

    /// Sets the context's persisting-L2 carve-out to 0, so that no line a kernel marks
    /// persisting (`evict_last` hints) survives an L2 flush between samples, and no reset is
    /// needed while timing. Seen on an H200: the limit is 11,796,480 bytes by default, and
    /// resetting persisting lines before each group of rounds made every launch of a CUDA
    /// graph ~0.35 µs slower (saxpy n=4096: 1.49 → 1.86 µs); with the carve-out at 0 and no
    /// reset, 1.49 µs again.
    pub fn disable_persisting_l2(&self) -> Result<(), DeviceError> {
        // SAFETY: a plain limit set on the current context.
        let r = unsafe { sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0) };
        match r.result() {
            // A device (or MIG slice) without persisting L2 has no carve-out to remove.
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_SUPPORTED => Ok(()),
            other => other.map_err(error("cuCtxSetLimit")),
        }
    }

    /// The context's persisting-L2 limit, bytes: 0 once `disable_persisting_l2` has run (no
    /// line can be persisting, and a reset has nothing to do), and 0 on a device without
    /// persisting L2 (the driver refuses the limit there).
    pub fn persisting_l2_limit(&self) -> usize {
        let mut value: usize = 0;
        // SAFETY: `value` is valid for writes; the context is current on this thread.
        let r = unsafe {
            sys::cuCtxGetLimit(&mut value, sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
        };
        match r {
            sys::CUresult::CUDA_SUCCESS => value,
            _ => 0,
        }
    }

    /// Copies the first `out.len()` bytes of `buf` into `out`, a host buffer the caller
    /// reuses (no allocation per transfer), and waits.
    pub fn download_into(&self, buf: &DeviceBuffer, out: &mut [u8]) -> Result<(), DeviceError> {
        assert!(out.len() <= buf.bytes, "range outside the buffer");
        // SAFETY: the range lies inside the allocation; the copy finishes before return.
        unsafe {
            cu::memcpy_dtoh_async(out, buf.ptr, self.stream).map_err(error("cuMemcpyDtoHAsync"))?;
        }
        self.synchronize()
    }

    /// Waits for everything queued on the stream.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        // SAFETY: the stream is live.
        unsafe { cu::stream::synchronize(self.stream) }.map_err(error("cuStreamSynchronize"))
    }

    /// Loads a CUBIN image.
    pub fn load(&self, cubin: &[u8]) -> Result<Module, DeviceError> {
        // SAFETY: `cubin` is a complete image produced by NVRTC; the driver copies it.
        let module = unsafe { cu::module::load_data(cubin.as_ptr() as *const c_void) }
            .map_err(error("cuModuleLoadData"))?;
        Ok(Module::new(module))
    }

    /// Queues a launch of `f`. Arguments are pointers to buffers or scalar bytes; their sizes
    /// are checked against the function's parameters first, so a mismatch is an error rather
    /// than garbage read by the kernel.
    pub fn launch(
        &self,
        f: &Function,
        dims: LaunchDims,
        args: &[KernelArg],
    ) -> Result<(), DeviceError> {
        if let Some(call) = &f.library {
            return call.run(self.stream, args);
        }
        let mut storage: Vec<Vec<u8>> = args
            .iter()
            .map(|a| match a {
                KernelArg::Buffer(b) => b.ptr.to_le_bytes().to_vec(),
                KernelArg::Scalar(bytes) => bytes.to_vec(),
            })
            .collect();
        if let Some(sizes) = &f.param_sizes {
            let given: Vec<usize> = storage.iter().map(Vec::len).collect();
            if &given != sizes {
                return Err(DeviceError::harness(
                    "cuLaunchKernel",
                    "argument mismatch",
                    format!(
                        "the kernel's parameters take {sizes:?} bytes, the suite passes {given:?} (check the args' count and types)"
                    ),
                ));
            }
        }
        if dims.shared > 48 * 1024 {
            // SAFETY: `f` belongs to a live module; the attribute is a plain integer.
            unsafe {
                cu::function::set_function_attribute(
                    f.handle,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dims.shared as i32,
                )
            }
            .map_err(error("cuFuncSetAttribute"))?;
        }
        let mut params: Vec<*mut c_void> = storage
            .iter_mut()
            .map(|s| s.as_mut_ptr() as *mut c_void)
            .collect();
        // SAFETY: `f` is a live function; `params` points at one value per parameter, sized as
        // the function expects (checked above where the driver could say); the driver copies
        // the values before returning, while `storage` is still alive.
        unsafe {
            cu::launch_kernel(
                f.handle,
                (dims.grid[0], dims.grid[1], dims.grid[2]),
                (dims.block[0], dims.block[1], dims.block[2]),
                dims.shared,
                self.stream,
                &mut params,
            )
        }
        .map_err(error("cuLaunchKernel"))
    }

    /// Records what `body` queues on the stream into a graph instead of running it, and
    /// instantiates the graph for replay.
    pub fn capture(
        &self,
        body: impl FnOnce(&Gpu) -> Result<(), DeviceError>,
    ) -> Result<Graph, DeviceError> {
        // SAFETY: the stream is live and not already capturing (captures do not nest here).
        unsafe {
            cu::stream::begin_capture(
                self.stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .map_err(error("cuStreamBeginCapture"))?;
        let queued = body(self);
        // SAFETY: ends the capture begun above, whether or not `body` succeeded.
        let graph =
            unsafe { cu::stream::end_capture(self.stream) }.map_err(error("cuStreamEndCapture"));
        queued?;
        let graph = graph?;
        // SAFETY: `graph` was just captured; flags 0 is the default instantiation.
        let exec = match unsafe { cu::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) }
        {
            Ok(exec) => exec,
            Err(e) => {
                // SAFETY: `graph` is live and owned here.
                let _ = unsafe { cu::graph::destroy(graph) };
                return Err(error("cuGraphInstantiate")(e));
            }
        };
        let g = Graph { graph, exec };
        // SAFETY: `exec` is live; uploading ahead keeps the first replay from paying for it.
        unsafe { cu::graph::upload(g.exec, self.stream) }.map_err(error("cuGraphUpload"))?;
        Ok(g)
    }

    /// Queues one replay of `g` on the stream.
    pub fn replay(&self, g: &Graph) -> Result<(), DeviceError> {
        // SAFETY: `g` is a live, instantiated graph; the stream is live.
        unsafe { cu::graph::launch(g.exec, self.stream) }.map_err(error("cuGraphLaunch"))
    }

    /// A new event with timing enabled.
    pub fn event(&self) -> Result<Event, DeviceError> {
        let e = cu::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map_err(error("cuEventCreate"))?;
        Ok(Event(e))
    }

    /// Records `e` on the stream.
    pub fn record(&self, e: &Event) -> Result<(), DeviceError> {
        // SAFETY: both the event and the stream are live.
        unsafe { cu::event::record(e.0, self.stream) }.map_err(error("cuEventRecord"))
    }

    /// Free and total device memory, bytes.
    pub fn memory_info(&self) -> Result<(usize, usize), DeviceError> {
        cu::mem_get_info().map_err(error("cuMemGetInfo"))
    }
}

/// Milliseconds between two recorded, completed events.
pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32, DeviceError> {
    // SAFETY: both events are live and were recorded with timing enabled.
    unsafe { cu::event::elapsed(start.0, end.0) }.map_err(error("cuEventElapsedTime"))
}

/// Seconds between two recorded, completed events.
pub fn elapsed_seconds(start: &Event, end: &Event) -> Result<f64, DeviceError> {
    Ok(elapsed_ms(start, end)? as f64 / 1e3)
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
}

impl LaunchDims {
    /// `blocks` blocks of `threads` threads, both along x, without dynamic shared memory.
    pub const fn line(blocks: u32, threads: u32) -> LaunchDims {
        LaunchDims {
            grid: [blocks, 1, 1],
            block: [threads, 1, 1],
            shared: 0,
        }
    }
}

/// An instantiated CUDA graph.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: both were created by `Gpu::capture` and are destroyed only here.
        unsafe {
            let _ = cu::graph::exec_destroy(self.exec);
            let _ = cu::graph::destroy(self.graph);
        }
    }
}

/// A CUDA event with timing enabled.
pub struct Event(sys::CUevent);

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by `Gpu::event` and destroyed only here.
        let _ = unsafe { cu::event::destroy(self.0) };
    }
}
