//! `cupti_missing`: whether `libcupti` loads, loading it from CUDA's folders when it is not on
//! the loader's path (cudarc panics when it cannot load it).

use cudarc::cupti::sys as cp;
use std::sync::OnceLock;

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
            super::activity::register().err().map(held)
        })
        .clone()
}
