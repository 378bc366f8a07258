//! `Profiler`: hardware counters of one operation's launches, read through CUPTI's range
//! profiler with user replay, in the worker process (no `ncu` subprocess).
//!
//! One [`Profiler`] per worker: the metrics are configured once on the host (profiler host
//! API: chip name + counter availability → config image); each [`Profiler::profile`] enables
//! the range profiler on the context, runs as many passes as the metrics need — each pass is
//! `prepare` (outside the range: restore inputs, flush and clean L2) then `launch` inside one
//! user range — decodes, evaluates, and disables the profiler again, so that no timed launch
//! ever runs with it enabled.
//!
//! CUPTI comes from `libcupti` (CUDA's `extras/CUPTI/lib64` or `lib64`, or the PyPI wheel
//! `nvidia-cuda-cupti`); [`cupti_missing`] finds it (cudarc panics when it cannot load it)
//! and says why when it is absent.

use cudarc::cupti::sys as cp;
use cudarc::driver::sys as cu;
use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Why counters could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CounterError {
    /// `libcupti` is not there.
    #[error("{0}")]
    Missing(String),
    /// The driver refuses profiling to this user (`RmProfilingAdminOnly=1`).
    #[error("no permission to read GPU counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES in `{call}`): the driver allows profiling to administrators only; see https://developer.nvidia.com/ERR_NVGPUCTRPERM")]
    Permission {
        /// The CUPTI call that refused.
        call: &'static str,
    },
    /// CUPTI failed.
    #[error("CUPTI `{call}` failed: {code:?} ({description})")]
    Cupti {
        /// The call.
        call: &'static str,
        /// CUPTI's result code.
        code: cp::CUptiResult,
        /// CUPTI's own words for it.
        description: String,
    },
    /// A launch or copy inside a profiled pass failed.
    #[error("a profiled pass failed: {0}")]
    Pass(#[from] super::DeviceError),
    /// No context is current on this thread (open the `Gpu` first).
    #[error("no current CUDA context ({0})")]
    NoContext(String),
    /// A metric name with a NUL byte.
    #[error("metric name {0:?} contains a NUL byte")]
    BadMetric(String),
    /// CUPTI kept asking for passes.
    #[error("CUPTI asked for more than {0} passes")]
    TooManyPasses(usize),
    /// CUPTI returned no range: nothing was measured.
    #[error("CUPTI recorded no range (the launch was not seen)")]
    NoRange,
}

/// Folders where CUDA installs `libcupti`, most specific first.
fn cupti_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut dirs = Vec::new();
    for r in roots {
        dirs.push(r.join("extras/CUPTI/lib64"));
        dirs.push(r.join("lib64"));
        dirs.push(r.join("targets/x86_64-linux/lib"));
    }
    // The PyPI wheel `nvidia-cuda-cupti`, installed beside NVRTC by ci/test.sh.
    dirs.push(PathBuf::from("target/nvrtc/nvidia/cu13/lib"));
    dirs
}

/// Why CUPTI cannot be used here, or `None` when `libcupti` loads.
///
/// When it is not on the loader's path but in one of CUDA's folders, it is loaded from there
/// (and stays loaded), so that cudarc's later load by name finds it by its soname.
pub fn cupti_missing() -> Option<String> {
    static FOUND: OnceLock<Option<String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            // SAFETY: only tries to open the library; no CUPTI call is made.
            if unsafe { cp::is_culib_present() } {
                return None;
            }
            for dir in cupti_dirs() {
                let Some(path) = newest_cupti(&dir) else {
                    continue;
                };
                // SAFETY: loading libcupti runs its initialisers, which only set up the
                // library; it is kept loaded for the life of the process.
                if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                    std::mem::forget(lib);
                    // SAFETY: as above.
                    if unsafe { cp::is_culib_present() } {
                        return None;
                    }
                }
            }
            Some(
                "no CUPTI: libcupti could not be loaded (it ships with CUDA in extras/CUPTI/lib64 \
                 or lib64, or `pip install 'nvidia-cuda-cupti==13.0.*'`; put its folder on \
                 LD_LIBRARY_PATH or set CUDA_HOME)"
                    .to_string(),
            )
        })
        .clone()
}

/// `libcupti.so.N` in `dir`, the highest N first.
fn newest_cupti(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libcupti.so"))
        })
        .collect();
    found.sort();
    found.pop()
}

fn check(call: &'static str, r: cp::CUptiResult) -> Result<(), CounterError> {
    match r {
        cp::CUptiResult::CUPTI_SUCCESS => Ok(()),
        cp::CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES => {
            Err(CounterError::Permission { call })
        }
        code => {
            let mut text: *const c_char = std::ptr::null();
            // SAFETY: `text` is valid for writes; CUPTI returns a static string or nothing.
            let description = unsafe {
                if cp::cuptiGetResultString(code, &mut text) == cp::CUptiResult::CUPTI_SUCCESS
                    && !text.is_null()
                {
                    CStr::from_ptr(text).to_string_lossy().into_owned()
                } else {
                    String::new()
                }
            };
            Err(CounterError::Cupti {
                call,
                code,
                description,
            })
        }
    }
}

/// A CUPTI parameter struct, zeroed, with its `structSize` set.
macro_rules! params {
    ($ty:ident, $size:ident) => {{
        // SAFETY: CUPTI's parameter structs are plain C data (integers and pointers), for
        // which all-zero is the documented initial state.
        let mut p: cp::$ty = unsafe { std::mem::zeroed() };
        p.structSize = cp::$size as usize;
        p
    }};
}

/// The host side of the profiler: the metrics, configured for this chip.
struct Host(*mut cp::CUpti_Profiler_Host_Object);

impl Drop for Host {
    fn drop(&mut self) {
        let mut p = params!(
            CUpti_Profiler_Host_Deinitialize_Params,
            Profiler_Host_Deinitialize_Params_STRUCT_SIZE
        );
        p.pHostObject = self.0;
        // SAFETY: the object came from cuptiProfilerHostInitialize and is freed only here.
        let _ = unsafe { cp::cuptiProfilerHostDeinitialize(&mut p) };
    }
}

/// The range profiler, enabled on the current context while this lives.
struct Enabled(*mut cp::CUpti_RangeProfiler_Object);

impl Drop for Enabled {
    fn drop(&mut self) {
        let mut p = params!(
            CUpti_RangeProfiler_Disable_Params,
            RangeProfiler_Disable_Params_STRUCT_SIZE
        );
        p.pRangeProfilerObject = self.0;
        // SAFETY: the object came from cuptiRangeProfilerEnable and is disabled only here.
        let _ = unsafe { cp::cuptiRangeProfilerDisable(&mut p) };
    }
}

/// Reads a fixed set of metrics over one user range per call.
pub struct Profiler {
    host: Host,
    config: Vec<u8>,
    names: Vec<CString>,
    /// The number of replay passes the metrics need (CUPTI's count).
    passes: usize,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("metrics", &self.names)
            .field("passes", &self.passes)
            .finish()
    }
}

/// The current context, which the `Gpu` of this thread made current.
fn current_context() -> Result<cu::CUcontext, CounterError> {
    let mut ctx: cu::CUcontext = std::ptr::null_mut();
    // SAFETY: `ctx` is valid for writes.
    let r = unsafe { cu::cuCtxGetCurrent(&mut ctx) };
    if r != cu::CUresult::CUDA_SUCCESS || ctx.is_null() {
        return Err(CounterError::NoContext(format!("{r:?}")));
    }
    Ok(ctx)
}

impl Profiler {
    /// Initialises CUPTI's profiler for the current context's device (`ordinal`) and
    /// configures `metrics` (CUPTI/ncu names such as `smsp__inst_executed.sum`).
    pub fn new(ordinal: i32, metrics: &[&str]) -> Result<Profiler, CounterError> {
        if let Some(why) = cupti_missing() {
            return Err(CounterError::Missing(why));
        }
        let ctx = current_context()?;
        let mut init = params!(
            CUpti_Profiler_Initialize_Params,
            Profiler_Initialize_Params_STRUCT_SIZE
        );
        // SAFETY: `init` is a valid parameter struct.
        check("cuptiProfilerInitialize", unsafe {
            cp::cuptiProfilerInitialize(&mut init)
        })?;
        let mut chip = params!(
            CUpti_Device_GetChipName_Params,
            Device_GetChipName_Params_STRUCT_SIZE
        );
        chip.deviceIndex = ordinal.max(0) as usize;
        // SAFETY: `chip` is valid; CUPTI writes a pointer to a string it owns.
        check("cuptiDeviceGetChipName", unsafe {
            cp::cuptiDeviceGetChipName(&mut chip)
        })?;
        // SAFETY: CUPTI returned a NUL-terminated string that lives as long as the library.
        let chip_name = unsafe { CStr::from_ptr(chip.pChipName) }.to_owned();
        let availability = counter_availability(ctx)?;
        let mut hp = params!(
            CUpti_Profiler_Host_Initialize_Params,
            Profiler_Host_Initialize_Params_STRUCT_SIZE
        );
        hp.profilerType = cp::CUpti_ProfilerType::CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        hp.pChipName = chip_name.as_ptr();
        hp.pCounterAvailabilityImage = availability.as_ptr();
        // SAFETY: the chip name and image outlive the call; CUPTI writes the object pointer.
        check("cuptiProfilerHostInitialize", unsafe {
            cp::cuptiProfilerHostInitialize(&mut hp)
        })?;
        let host = Host(hp.pHostObject);
        let names: Vec<CString> = metrics
            .iter()
            .map(|m| CString::new(*m).map_err(|_| CounterError::BadMetric(m.to_string())))
            .collect::<Result<_, _>>()?;
        let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut add = params!(
            CUpti_Profiler_Host_ConfigAddMetrics_Params,
            Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE
        );
        add.pHostObject = host.0;
        add.ppMetricNames = ptrs.as_mut_ptr();
        add.numMetrics = ptrs.len();
        // SAFETY: the names outlive the call; the host object is live.
        check("cuptiProfilerHostConfigAddMetrics", unsafe {
            cp::cuptiProfilerHostConfigAddMetrics(&mut add)
        })?;
        let mut size = params!(
            CUpti_Profiler_Host_GetConfigImageSize_Params,
            Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE
        );
        size.pHostObject = host.0;
        // SAFETY: the host object is live.
        check("cuptiProfilerHostGetConfigImageSize", unsafe {
            cp::cuptiProfilerHostGetConfigImageSize(&mut size)
        })?;
        let mut config = vec![0u8; size.configImageSize];
        let mut image = params!(
            CUpti_Profiler_Host_GetConfigImage_Params,
            Profiler_Host_GetConfigImage_Params_STRUCT_SIZE
        );
        image.pHostObject = host.0;
        image.pConfigImage = config.as_mut_ptr();
        image.configImageSize = config.len();
        // SAFETY: `config` has the size CUPTI asked for.
        check("cuptiProfilerHostGetConfigImage", unsafe {
            cp::cuptiProfilerHostGetConfigImage(&mut image)
        })?;
        let mut passes = params!(
            CUpti_Profiler_Host_GetNumOfPasses_Params,
            Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE
        );
        passes.pConfigImage = config.as_mut_ptr();
        passes.configImageSize = config.len();
        // SAFETY: `config` is the image CUPTI wrote.
        check("cuptiProfilerHostGetNumOfPasses", unsafe {
            cp::cuptiProfilerHostGetNumOfPasses(&mut passes)
        })?;
        Ok(Profiler {
            host,
            config,
            names,
            passes: passes.numOfPasses,
        })
    }

    /// The replay passes one [`Profiler::profile`] runs.
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// Enables the range profiler on the current context until the returned [`Session`] is
    /// dropped. Timed launches must never run while a session lives.
    pub fn enable(&self) -> Result<Session<'_>, CounterError> {
        let ctx = current_context()?;
        let mut en = params!(
            CUpti_RangeProfiler_Enable_Params,
            RangeProfiler_Enable_Params_STRUCT_SIZE
        );
        en.ctx = ctx;
        // SAFETY: `ctx` is the live current context.
        check("cuptiRangeProfilerEnable", unsafe {
            cp::cuptiRangeProfilerEnable(&mut en)
        })?;
        Ok(Session {
            profiler: self,
            range: Enabled(en.pRangeProfilerObject),
        })
    }
}

/// The range profiler enabled on the context: profiles one operation per call.
pub struct Session<'p> {
    profiler: &'p Profiler,
    range: Enabled,
}

impl Session<'_> {
    /// Runs `prepare` then `launch` once per pass (`launch` inside the profiled range;
    /// both must leave the stream synchronised) and returns each metric's value, in the
    /// order given to [`Profiler::new`].
    pub fn profile(
        &mut self,
        mut prepare: impl FnMut() -> Result<(), super::DeviceError>,
        mut launch: impl FnMut() -> Result<(), super::DeviceError>,
    ) -> Result<Vec<f64>, CounterError> {
        let range = &self.range;
        let passes = self.profiler.passes;
        let mut ptrs: Vec<*const c_char> = self.profiler.names.iter().map(|n| n.as_ptr()).collect();
        let mut size = params!(
            CUpti_RangeProfiler_GetCounterDataSize_Params,
            RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE
        );
        size.pRangeProfilerObject = range.0;
        size.pMetricNames = ptrs.as_mut_ptr();
        size.numMetrics = ptrs.len();
        size.maxNumOfRanges = 1;
        size.maxNumRangeTreeNodes = 1;
        // SAFETY: the names outlive the call; the range object is live.
        check("cuptiRangeProfilerGetCounterDataSize", unsafe {
            cp::cuptiRangeProfilerGetCounterDataSize(&mut size)
        })?;
        let mut data = vec![0u8; size.counterDataSize];
        let mut init = params!(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
            RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE
        );
        init.pRangeProfilerObject = range.0;
        init.pCounterData = data.as_mut_ptr();
        init.counterDataSize = data.len();
        // SAFETY: `data` has the size CUPTI asked for.
        check("cuptiRangeProfilerCounterDataImageInitialize", unsafe {
            cp::cuptiRangeProfilerCounterDataImageInitialize(&mut init)
        })?;
        let mut set = params!(
            CUpti_RangeProfiler_SetConfig_Params,
            RangeProfiler_SetConfig_Params_STRUCT_SIZE
        );
        set.pRangeProfilerObject = range.0;
        set.pConfig = self.profiler.config.as_ptr();
        set.configSize = self.profiler.config.len();
        set.pCounterDataImage = data.as_mut_ptr();
        set.counterDataImageSize = data.len();
        set.range = cp::CUpti_ProfilerRange::CUPTI_UserRange;
        set.replayMode = cp::CUpti_ProfilerReplayMode::CUPTI_UserReplay;
        set.maxRangesPerPass = 1;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        // SAFETY: config and counter data outlive the profiler's use of them (until decode).
        check("cuptiRangeProfilerSetConfig", unsafe {
            cp::cuptiRangeProfilerSetConfig(&mut set)
        })?;
        let name = c"kernelgate";
        // At most a generous multiple of the passes CUPTI announced: never loop forever.
        let most = 4 * passes.max(1) + 4;
        for _ in 0..most {
            prepare()?;
            let mut start = params!(
                CUpti_RangeProfiler_Start_Params,
                RangeProfiler_Start_Params_STRUCT_SIZE
            );
            start.pRangeProfilerObject = range.0;
            // SAFETY: the range object is live and configured.
            check("cuptiRangeProfilerStart", unsafe {
                cp::cuptiRangeProfilerStart(&mut start)
            })?;
            let mut push = params!(
                CUpti_RangeProfiler_PushRange_Params,
                RangeProfiler_PushRange_Params_STRUCT_SIZE
            );
            push.pRangeProfilerObject = range.0;
            push.pRangeName = name.as_ptr();
            // SAFETY: the name is a static C string.
            check("cuptiRangeProfilerPushRange", unsafe {
                cp::cuptiRangeProfilerPushRange(&mut push)
            })?;
            let launched = launch();
            let mut pop = params!(
                CUpti_RangeProfiler_PopRange_Params,
                RangeProfiler_PopRange_Params_STRUCT_SIZE
            );
            pop.pRangeProfilerObject = range.0;
            // SAFETY: a range was pushed above.
            let popped = check("cuptiRangeProfilerPopRange", unsafe {
                cp::cuptiRangeProfilerPopRange(&mut pop)
            });
            let mut stop = params!(
                CUpti_RangeProfiler_Stop_Params,
                RangeProfiler_Stop_Params_STRUCT_SIZE
            );
            stop.pRangeProfilerObject = range.0;
            // SAFETY: the profiler was started above.
            let stopped = check("cuptiRangeProfilerStop", unsafe {
                cp::cuptiRangeProfilerStop(&mut stop)
            });
            launched?;
            popped?;
            stopped?;
            if stop.isAllPassSubmitted != 0 {
                return self.evaluate(&data);
            }
        }
        Err(CounterError::TooManyPasses(most))
    }

    fn evaluate(&self, data: &[u8]) -> Result<Vec<f64>, CounterError> {
        let range = &self.range;
        let mut decode = params!(
            CUpti_RangeProfiler_DecodeData_Params,
            RangeProfiler_DecodeData_Params_STRUCT_SIZE
        );
        decode.pRangeProfilerObject = range.0;
        // SAFETY: every pass was submitted; the counter data image is still alive.
        check("cuptiRangeProfilerDecodeData", unsafe {
            cp::cuptiRangeProfilerDecodeData(&mut decode)
        })?;
        let mut info = params!(
            CUpti_RangeProfiler_GetCounterDataInfo_Params,
            RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE
        );
        info.pCounterDataImage = data.as_ptr();
        info.counterDataImageSize = data.len();
        // SAFETY: `data` is the decoded image.
        check("cuptiRangeProfilerGetCounterDataInfo", unsafe {
            cp::cuptiRangeProfilerGetCounterDataInfo(&mut info)
        })?;
        if info.numTotalRanges == 0 {
            return Err(CounterError::NoRange);
        }
        let mut ptrs: Vec<*const c_char> = self.profiler.names.iter().map(|n| n.as_ptr()).collect();
        let mut values = vec![f64::NAN; ptrs.len()];
        let mut eval = params!(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params,
            Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE
        );
        eval.pHostObject = self.profiler.host.0;
        eval.pCounterDataImage = data.as_ptr();
        eval.counterDataImageSize = data.len();
        eval.rangeIndex = 0;
        eval.ppMetricNames = ptrs.as_mut_ptr();
        eval.numMetrics = ptrs.len();
        eval.pMetricValues = values.as_mut_ptr();
        // SAFETY: `values` holds one f64 per metric name; all pointers outlive the call.
        check("cuptiProfilerHostEvaluateToGpuValues", unsafe {
            cp::cuptiProfilerHostEvaluateToGpuValues(&mut eval)
        })?;
        Ok(values)
    }
}

/// The context's counter availability image (two calls: size, then data).
fn counter_availability(ctx: cu::CUcontext) -> Result<Vec<u8>, CounterError> {
    let mut p = params!(
        CUpti_Profiler_GetCounterAvailability_Params,
        Profiler_GetCounterAvailability_Params_STRUCT_SIZE
    );
    p.ctx = ctx;
    // SAFETY: a null image pointer asks for the size only.
    check("cuptiProfilerGetCounterAvailability", unsafe {
        cp::cuptiProfilerGetCounterAvailability(&mut p)
    })?;
    let mut image = vec![0u8; p.counterAvailabilityImageSize];
    p.pCounterAvailabilityImage = image.as_mut_ptr();
    // SAFETY: `image` has the size CUPTI asked for.
    check("cuptiProfilerGetCounterAvailability", unsafe {
        cp::cuptiProfilerGetCounterAvailability(&mut p)
    })?;
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_library_in_a_folder_is_chosen() {
        let dir = std::env::temp_dir().join(format!("kg-cupti-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in [
            "libcupti.so.12",
            "libcupti.so.13",
            "libnvperf_host.so",
            "libcupti.so",
        ] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        assert_eq!(newest_cupti(&dir), Some(dir.join("libcupti.so.13")));
        assert_eq!(newest_cupti(&dir.join("absent")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_error_says_which_call_and_why() {
        let e = check(
            "cuptiRangeProfilerEnable",
            cp::CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no permission"), "{e}");
        assert!(e.to_string().contains("cuptiRangeProfilerEnable"), "{e}");
    }
}
