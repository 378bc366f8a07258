//! `Session`: the range profiler enabled on the context, profiling operations — one user range
//! each, every replay pass replaying all of them — and evaluating every metric per range.

use super::base::{cupti, current_context, params, CounterError, MAX_OPS};
use super::profiler::Profiler;
use cudarc::cupti::sys as cp;
use std::ffi::c_char;
use std::time::Instant;

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

impl Profiler {
    /// Enables the range profiler on the current context until the returned [`Session`] (which
    /// owns the profiler) is dropped. Timed launches must never run while a session lives — nor
    /// afterwards in the same process: seen on an H200, a graph of two dependent launches
    /// (`reduce::two_pass`) ran up to 33% slower once CUPTI had profiled in the process. The
    /// first profile after enabling costs ~170 ms on an H100; later ones ~30 ms, so a session
    /// is kept for every read of a process.
    pub fn enable(self) -> Result<Session, CounterError> {
        let ctx = current_context()?;
        let mut en = params!(
            CUpti_RangeProfiler_Enable_Params,
            RangeProfiler_Enable_Params_STRUCT_SIZE
        );
        en.ctx = ctx;
        // SAFETY: `ctx` is the live current context.
        cupti!(cuptiRangeProfilerEnable, en)?;
        Ok(Session {
            range: Enabled(en.pRangeProfilerObject),
            profiler: self,
        })
    }
}

/// One operation to profile: `prepare` runs before its range (outside it: restore inputs,
/// flush and clean L2), `launch` inside it; both leave the stream synchronised.
pub trait Profiled {
    /// Puts the operation's buffers back into their starting state, outside the range.
    fn prepare(&mut self) -> Result<(), crate::device::DeviceError>;
    /// Runs the operation (every launch of it), inside the range.
    fn launch(&mut self) -> Result<(), crate::device::DeviceError>;
}

/// A [`Profiled`] operation from two closures.
pub struct Closures<P, L>(pub P, pub L);

impl<P, L> Profiled for Closures<P, L>
where
    P: FnMut() -> Result<(), crate::device::DeviceError>,
    L: FnMut() -> Result<(), crate::device::DeviceError>,
{
    fn prepare(&mut self) -> Result<(), crate::device::DeviceError> {
        (self.0)()
    }
    fn launch(&mut self) -> Result<(), crate::device::DeviceError> {
        (self.1)()
    }
}

/// The range profiler enabled on the context.
pub struct Session {
    // Declared first: disabled before the profiler's host object is freed.
    range: Enabled,
    profiler: Profiler,
}

/// The name of operation `i`'s range.
fn range_name(i: usize) -> std::ffi::CString {
    // A decimal number holds no NUL byte.
    std::ffi::CString::new(format!("kernelgate-{i}")).unwrap_or_default()
}

impl Session {
    /// Profiles one operation: each metric's value, in the order given to [`Profiler::new`].
    pub fn profile(
        &mut self,
        prepare: impl FnMut() -> Result<(), crate::device::DeviceError>,
        launch: impl FnMut() -> Result<(), crate::device::DeviceError>,
    ) -> Result<Vec<f64>, CounterError> {
        let mut op = Closures(prepare, launch);
        let mut values = self.profile_ops(&mut [&mut op])?;
        Ok(values.pop().unwrap_or_default())
    }

    /// Profiles up to [`MAX_OPS`] operations in one configuration, one range each, every pass
    /// replaying all of them in order (CUPTI's start and stop, ~24 ms on an H100, are paid
    /// once per configuration, not per operation): per operation, each metric's value.
    pub fn profile_ops(
        &mut self,
        ops: &mut [&mut dyn Profiled],
    ) -> Result<Vec<Vec<f64>>, CounterError> {
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        if ops.len() > MAX_OPS {
            return Err(CounterError::TooManyOps(ops.len()));
        }
        let names: Vec<std::ffi::CString> = (0..ops.len()).map(range_name).collect();
        let at = Instant::now();
        let mut data = self.configure(ops.len())?;
        crate::spent::since("counters.configure", at);
        crate::spent::add("counters.configurations", 1.0);
        let range = self.range.0;
        // At most a generous multiple of the passes CUPTI announced: never loop forever.
        let most = 4 * self.profiler.passes.max(1) + 4;
        for _ in 0..most {
            let mut start = params!(
                CUpti_RangeProfiler_Start_Params,
                RangeProfiler_Start_Params_STRUCT_SIZE
            );
            start.pRangeProfilerObject = range;
            let at = Instant::now();
            ops[0].prepare()?;
            crate::spent::since("counters.prepare", at);
            let at = Instant::now();
            // SAFETY: the range object is live and configured.
            cupti!(cuptiRangeProfilerStart, start)?;
            crate::spent::since("counters.start_stop", at);
            crate::spent::add("counters.passes", 1.0);
            let passed = ops.iter_mut().enumerate().try_for_each(|(i, op)| {
                if i > 0 {
                    let at = Instant::now();
                    op.prepare()?;
                    crate::spent::since("counters.prepare", at);
                }
                let at = Instant::now();
                let launched = in_range(range, &names[i], || op.launch());
                crate::spent::since("counters.launch", at);
                crate::spent::add("counters.ranges", 1.0);
                launched
            });
            let mut stop = params!(
                CUpti_RangeProfiler_Stop_Params,
                RangeProfiler_Stop_Params_STRUCT_SIZE
            );
            stop.pRangeProfilerObject = range;
            let at = Instant::now();
            // SAFETY: the profiler was started above.
            let stopped = cupti!(cuptiRangeProfilerStop, stop);
            crate::spent::since("counters.start_stop", at);
            passed?;
            stopped?;
            if stop.isAllPassSubmitted != 0 {
                let evaluate = || self.evaluate(&mut data, ops.len());
                return crate::spent::timed("counters.evaluate", evaluate);
            }
        }
        Err(CounterError::TooManyPasses(most))
    }

    /// A counter data image for `ranges` ranges, set as the profiler's configuration.
    fn configure(&mut self, ranges: usize) -> Result<Vec<u8>, CounterError> {
        let mut ptrs: Vec<*const c_char> = self.profiler.names.iter().map(|n| n.as_ptr()).collect();
        let mut size = params!(
            CUpti_RangeProfiler_GetCounterDataSize_Params,
            RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE
        );
        size.pRangeProfilerObject = self.range.0;
        size.pMetricNames = ptrs.as_mut_ptr();
        size.numMetrics = ptrs.len();
        // One range more than pushed, in the image and per pass: seen on an H200 (CUPTI 13.0),
        // three ranges in an image sized for exactly three recorded only two, none dropped.
        let room = ranges + 1;
        size.maxNumOfRanges = room;
        size.maxNumRangeTreeNodes = room as u32;
        // SAFETY: the names outlive the call; the range object is live.
        cupti!(cuptiRangeProfilerGetCounterDataSize, size)?;
        let mut data = vec![0u8; size.counterDataSize];
        let mut init = params!(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
            RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE
        );
        init.pRangeProfilerObject = self.range.0;
        init.pCounterData = data.as_mut_ptr();
        init.counterDataSize = data.len();
        // SAFETY: `data` has the size CUPTI asked for.
        cupti!(cuptiRangeProfilerCounterDataImageInitialize, init)?;
        let mut set = params!(
            CUpti_RangeProfiler_SetConfig_Params,
            RangeProfiler_SetConfig_Params_STRUCT_SIZE
        );
        set.pRangeProfilerObject = self.range.0;
        set.pConfig = self.profiler.config.as_ptr();
        set.configSize = self.profiler.config.len();
        set.pCounterDataImage = data.as_mut_ptr();
        set.counterDataImageSize = data.len();
        set.range = cp::CUpti_ProfilerRange::CUPTI_UserRange;
        set.replayMode = cp::CUpti_ProfilerReplayMode::CUPTI_UserReplay;
        set.maxRangesPerPass = room;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        // SAFETY: the config and `data` outlive the profiler's use of them: `data` is returned
        // to the caller, which decodes into it before dropping it.
        cupti!(cuptiRangeProfilerSetConfig, set)?;
        Ok(data)
    }

    /// Decodes the passes into `data` and evaluates every metric of each of `ranges` ranges.
    fn evaluate(&self, data: &mut [u8], ranges: usize) -> Result<Vec<Vec<f64>>, CounterError> {
        let mut decode = params!(
            CUpti_RangeProfiler_DecodeData_Params,
            RangeProfiler_DecodeData_Params_STRUCT_SIZE
        );
        decode.pRangeProfilerObject = self.range.0;
        // SAFETY: every pass was submitted; the counter data image is alive.
        cupti!(cuptiRangeProfilerDecodeData, decode)?;

        let mut info = params!(
            CUpti_RangeProfiler_GetCounterDataInfo_Params,
            RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE
        );
        info.pCounterDataImage = data.as_ptr();
        info.counterDataImageSize = data.len();
        // SAFETY: `data` is the decoded image.
        cupti!(cuptiRangeProfilerGetCounterDataInfo, info)?;
        if info.numTotalRanges < ranges {
            return Err(CounterError::NoRange {
                expected: ranges,
                got: info.numTotalRanges,
            });
        }
        let mut out = Vec::with_capacity(ranges);
        for index in 0..ranges {
            let mut ptrs: Vec<*const c_char> =
                self.profiler.names.iter().map(|n| n.as_ptr()).collect();
            let mut values = vec![f64::NAN; ptrs.len()];
            let mut eval = params!(
                CUpti_Profiler_Host_EvaluateToGpuValues_Params,
                Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE
            );
            eval.pHostObject = self.profiler.host.0;
            eval.pCounterDataImage = data.as_ptr();
            eval.counterDataImageSize = data.len();
            eval.rangeIndex = index;
            eval.ppMetricNames = ptrs.as_mut_ptr();
            eval.numMetrics = ptrs.len();
            eval.pMetricValues = values.as_mut_ptr();
            // SAFETY: `values` holds one f64 per metric name; all pointers outlive the call.
            cupti!(cuptiProfilerHostEvaluateToGpuValues, eval)?;
            out.push(values);
        }
        Ok(out)
    }
}

/// Runs `launch` inside one user range named `name`.
fn in_range(
    range: *mut cp::CUpti_RangeProfiler_Object,
    name: &std::ffi::CStr,
    launch: impl FnOnce() -> Result<(), crate::device::DeviceError>,
) -> Result<(), CounterError> {
    let mut push = params!(
        CUpti_RangeProfiler_PushRange_Params,
        RangeProfiler_PushRange_Params_STRUCT_SIZE
    );
    push.pRangeProfilerObject = range;
    push.pRangeName = name.as_ptr();
    // SAFETY: the name is a static C string; the profiler is started.
    cupti!(cuptiRangeProfilerPushRange, push)?;
    let launched = launch();
    let mut pop = params!(
        CUpti_RangeProfiler_PopRange_Params,
        RangeProfiler_PopRange_Params_STRUCT_SIZE
    );
    pop.pRangeProfilerObject = range;
    // SAFETY: a range was pushed above.
    let popped = cupti!(cuptiRangeProfilerPopRange, pop);
    launched?;
    popped
}
