//! `Profiler`: the metrics configured for this chip on the host (profiler host API: chip name
//! and the context's counter availability → a config image), and how many replay passes they
//! need.

use super::activity::cupti_missing;
use super::base::{cupti, current_context, params, CounterError};
use cudarc::cupti::sys as cp;
use cudarc::driver::sys as cu;
use std::ffi::{c_char, CStr, CString};

/// The host side of the profiler: the metrics, configured for this chip.
pub(super) struct Host(pub(super) *mut cp::CUpti_Profiler_Host_Object);

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

/// Reads a fixed set of metrics over one user range per call.
pub struct Profiler {
    pub(super) host: Host,
    pub(super) config: Vec<u8>,
    pub(super) names: Vec<CString>,
    /// The number of replay passes the metrics need (CUPTI's count).
    pub(super) passes: usize,
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
        cupti!(cuptiProfilerInitialize, init)?;
        let mut chip = params!(
            CUpti_Device_GetChipName_Params,
            Device_GetChipName_Params_STRUCT_SIZE
        );
        chip.deviceIndex = ordinal.max(0) as usize;
        // SAFETY: `chip` is valid; CUPTI writes a pointer to a string it owns.
        cupti!(cuptiDeviceGetChipName, chip)?;
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
        cupti!(cuptiProfilerHostInitialize, hp)?;
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
        cupti!(cuptiProfilerHostConfigAddMetrics, add)?;
        let mut size = params!(
            CUpti_Profiler_Host_GetConfigImageSize_Params,
            Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE
        );
        size.pHostObject = host.0;
        // SAFETY: the host object is live.
        cupti!(cuptiProfilerHostGetConfigImageSize, size)?;
        let mut config = vec![0u8; size.configImageSize];
        let mut image = params!(
            CUpti_Profiler_Host_GetConfigImage_Params,
            Profiler_Host_GetConfigImage_Params_STRUCT_SIZE
        );
        image.pHostObject = host.0;
        image.pConfigImage = config.as_mut_ptr();
        image.configImageSize = config.len();
        // SAFETY: `config` has the size CUPTI asked for.
        cupti!(cuptiProfilerHostGetConfigImage, image)?;
        let mut passes = params!(
            CUpti_Profiler_Host_GetNumOfPasses_Params,
            Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE
        );
        passes.pConfigImage = config.as_mut_ptr();
        passes.configImageSize = config.len();
        // SAFETY: `config` is the image CUPTI wrote.
        cupti!(cuptiProfilerHostGetNumOfPasses, passes)?;
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
}

/// The context's counter availability image (two calls: size, then data).
fn counter_availability(ctx: cu::CUcontext) -> Result<Vec<u8>, CounterError> {
    let mut p = params!(
        CUpti_Profiler_GetCounterAvailability_Params,
        Profiler_GetCounterAvailability_Params_STRUCT_SIZE
    );
    p.ctx = ctx;
    // SAFETY: a null image pointer asks for the size only.
    cupti!(cuptiProfilerGetCounterAvailability, p)?;
    let mut image = vec![0u8; p.counterAvailabilityImageSize];
    p.pCounterAvailabilityImage = image.as_mut_ptr();
    // SAFETY: `image` has the size CUPTI asked for.
    cupti!(cuptiProfilerGetCounterAvailability, p)?;
    Ok(image)
}
