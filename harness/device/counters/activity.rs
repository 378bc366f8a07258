//! `Activity`: CUPTI's kernel records (`CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL`) — each launch's
//! start and end on the GPU's own clock, its name and resources — for the timing regime that
//! reads a kernel's time as Nsight Compute's `gpu__time_duration` does (`Regime::Cupti`), and
//! for the kernels a library call launched; and [`cupti_missing`], whether CUPTI can be used here.
//!
//! CUPTI asks for buffers and hands them back full through two C callbacks; the completed
//! buffers are decoded into [`KernelRecord`]s in a process-wide list, which
//! [`Activity::take`] drains after forcing every buffer out (`cuptiActivityFlushAll`).

use super::base::{check, CounterError};
use cudarc::cupti::sys as cp;
use std::ffi::CStr;
use std::sync::{Mutex, OnceLock};

/// Bytes of each buffer handed to CUPTI (a kernel record is ~250 bytes).
const BUFFER_BYTES: usize = 1 << 20;
/// CUPTI requires buffers aligned to 8 bytes.
const ALIGN: usize = 8;

/// One kernel launch as CUPTI recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRecord {
    /// The kernel's name as the module holds it (mangled for C++ names).
    pub name: String,
    /// GPU timestamps, nanoseconds.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    /// The launch's grid and block.
    pub grid: [i32; 3],
    /// See `grid`.
    pub block: [i32; 3],
    /// Registers per thread.
    pub registers: u16,
    /// Static and dynamic shared memory per block, bytes.
    pub shared: [i32; 2],
    /// Local memory per thread, bytes.
    pub local: u32,
}

impl KernelRecord {
    /// Whether it is one of kernelgate's own kernels (all named `kernelgate_…`: the flush's
    /// read pass, the preparation, the clock probe), not the measured code's.
    pub fn is_kernelgates(&self) -> bool {
        self.name.starts_with("kernelgate_")
    }

    /// The launch's time on the GPU, seconds.
    pub fn seconds(&self) -> f64 {
        self.end.saturating_sub(self.start) as f64 * 1e-9
    }
}

/// Why CUPTI cannot be used here, or `None` when `libcupti` loads.
///
/// When it is not on the loader's path but in one of CUDA's folders, it is loaded from there
/// (and stays loaded), so that cudarc's later load by name finds it by its soname. Then the
/// kernel records' callbacks are registered: under a profiler that holds CUPTI (Nsight Compute
/// running a trial's printed `profile` command) that fails, and kernelgate's records and
/// counters stand aside — such a run times by events.
pub fn cupti_missing() -> Option<String> {
    static FOUND: OnceLock<Option<String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            // SAFETY: only tries to open the library; no CUPTI call is made.
            let present = || unsafe { cp::is_culib_present() };
            if !crate::device::libraries::load_from_cuda("libcupti.so", present) {
                return Some(
                    "no CUPTI: libcupti could not be loaded (it ships with CUDA in \
                     extras/CUPTI/lib64 or lib64, or `pip install 'nvidia-cuda-cupti==13.0.*'`; \
                     put its folder on LD_LIBRARY_PATH or set CUDA_HOME)"
                        .to_string(),
                );
            }
            let held = |e| format!("CUPTI is held by another tool (a profiler such as `ncu`): {e}");
            register().err().map(held)
        })
        .clone()
}

/// Registers the buffer callbacks, once per process (`cupti_missing` does, on its first call):
/// an error where another tool holds CUPTI.
fn register() -> Result<(), CounterError> {
    // SAFETY: both callbacks have the signatures CUPTI calls them with and live for the whole
    // process.
    check("cuptiActivityRegisterCallbacks", unsafe {
        cp::cuptiActivityRegisterCallbacks(Some(requested), Some(completed))
    })
}

/// Records decoded from completed buffers, not yet taken.
static RECORDS: Mutex<Vec<KernelRecord>> = Mutex::new(Vec::new());

/// Kernel records enabled on this process until dropped.
pub struct Activity(());

impl Activity {
    /// Enables kernel records (the buffer callbacks were registered when CUPTI was found),
    /// dropping any left from before.
    pub fn start() -> Result<Activity, CounterError> {
        if let Some(why) = cupti_missing() {
            return Err(CounterError::Missing(why));
        }
        let kind = cp::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        // SAFETY: plain call; the callbacks are registered.
        check("cuptiActivityEnable", unsafe {
            cp::cuptiActivityEnable(kind)
        })?;
        let activity = Activity(());
        activity.take()?;
        Ok(activity)
    }

    /// Every kernel record completed so far, in launch order (the caller synchronised the
    /// stream first, so that every launch it queued has ended).
    pub fn take(&self) -> Result<Vec<KernelRecord>, CounterError> {
        // SAFETY: plain call; 1 = CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, which also hands back
        // buffers that are not full; `completed` runs on this thread before it returns.
        check("cuptiActivityFlushAll", unsafe {
            cp::cuptiActivityFlushAll(1)
        })?;
        let mut all = std::mem::take(&mut *RECORDS.lock().unwrap_or_else(|p| p.into_inner()));
        all.sort_by_key(|r| r.start);
        Ok(all)
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        let kind = cp::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        // SAFETY: plain calls; the records of the last launches are dropped with the buffers.
        unsafe {
            cp::cuptiActivityDisable(kind);
            cp::cuptiActivityFlushAll(1);
        }
        RECORDS.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

fn layout() -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(BUFFER_BYTES, ALIGN).expect("a valid layout")
}

extern "C" fn requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    // SAFETY: CUPTI passes valid out-pointers; the buffer is freed in `completed` with the same
    // layout. A null buffer (allocation failed) tells CUPTI to drop records.
    unsafe {
        *buffer = std::alloc::alloc(layout());
        *size = if (*buffer).is_null() { 0 } else { BUFFER_BYTES };
        *max_records = 0;
    }
}

extern "C" fn completed(
    _ctx: cudarc::driver::sys::CUcontext,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut found = Vec::new();
    let mut record: *mut cp::CUpti_Activity = std::ptr::null_mut();
    // SAFETY: `buffer` is one of ours holding `valid` bytes of records; CUPTI walks them.
    while unsafe { cp::cuptiActivityGetNextRecord(buffer, valid, &mut record) }
        == cp::CUptiResult::CUPTI_SUCCESS
    {
        // SAFETY: `record` points at a record in the buffer; its kind says its layout, whose
        // leading fields (up to `name`) every version of the kernel record shares.
        unsafe {
            if (*record).kind == cp::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL {
                found.push(decode(&*(record as *const cp::CUpti_ActivityKernel10)));
            }
        }
    }
    // SAFETY: allocated by `requested` with this layout.
    unsafe { std::alloc::dealloc(buffer, layout()) };
    RECORDS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend(found);
}

fn decode(k: &cp::CUpti_ActivityKernel10) -> KernelRecord {
    let name = match k.name.is_null() {
        true => String::new(),
        // SAFETY: CUPTI's name is a NUL-terminated string it owns.
        false => unsafe { CStr::from_ptr(k.name) }
            .to_string_lossy()
            .into_owned(),
    };
    KernelRecord {
        name,
        start: k.start,
        end: k.end,
        grid: [k.gridX, k.gridY, k.gridZ],
        block: [k.blockX, k.blockY, k.blockZ],
        registers: k.registersPerThread,
        shared: [k.staticSharedMemory, k.dynamicSharedMemory],
        local: k.localMemoryPerThread,
    }
}

/// Each sample's kernel records, out of the records of a stretch of queued samples: a sample
/// starts at the read pass that ends its L2 flush (`kernelgate_read`, the last thing queued
/// before its launches) and holds every launch after it up to the next of kernelgate's own
/// kernels (all named `kernelgate_…`: the next sample's preparation, the clock probe).
pub fn per_sample(records: Vec<KernelRecord>) -> Vec<Vec<KernelRecord>> {
    let mut samples: Vec<Vec<KernelRecord>> = Vec::new();
    let mut open = false;
    for r in records {
        if r.name == "kernelgate_read" {
            samples.push(Vec::new());
            open = true;
        } else if r.is_kernelgates() {
            open = false;
        } else if let (true, Some(last)) = (open, samples.last_mut()) {
            last.push(r);
        }
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(name: &str, start: u64, end: u64) -> KernelRecord {
        KernelRecord {
            name: name.into(),
            start,
            end,
            grid: [1; 3],
            block: [1; 3],
            registers: 0,
            shared: [0; 2],
            local: 0,
        }
    }

    #[test]
    fn a_sample_is_what_runs_between_its_read_pass_and_kernelgates_next_kernel() {
        let records = vec![
            at("kernelgate_prepare", 0, 1),
            at("kernelgate_read", 2, 3),
            at("gemm_main", 4, 14),
            at("splitk_reduce", 15, 17),
            at("kernelgate_prepare", 18, 19),
            at("kernelgate_read", 20, 21),
            at("_Z6kernelPf", 22, 30),
            at("kernelgate_clock", 31, 40),
            at("kernelgate_empty", 41, 42),
            at("stray", 43, 44),
        ];
        let samples = per_sample(records);
        let names = |s: &[KernelRecord]| s.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
        assert_eq!(samples.len(), 2);
        assert_eq!(names(&samples[0]), ["gemm_main", "splitk_reduce"]);
        assert_eq!(names(&samples[1]), ["_Z6kernelPf"]);
        let total: f64 = samples[0].iter().map(KernelRecord::seconds).sum();
        assert!((total - 12e-9).abs() < 1e-15, "{total}");
    }

    #[test]
    fn a_read_pass_with_no_launch_after_it_is_an_empty_sample() {
        let samples = per_sample(vec![
            at("kernelgate_read", 0, 1),
            at("kernelgate_clock", 2, 3),
        ]);
        assert_eq!(samples, vec![Vec::<KernelRecord>::new()]);
    }
}
