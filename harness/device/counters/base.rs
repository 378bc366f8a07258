//! `CounterError` and what every CUPTI call needs: its result checked into an error, its
//! parameter struct made ([`params!`]), the current context.

use cudarc::cupti::sys as cp;
use cudarc::driver::sys as cu;
use std::ffi::{c_char, CStr};

/// The most operations one call profiles (`Session::profile_ops`).
pub const MAX_OPS: usize = 256;

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
    Pass(#[from] crate::device::DeviceError),
    /// No context is current on this thread (open the `Gpu` first).
    #[error("no current CUDA context ({0})")]
    NoContext(String),
    /// A metric name with a NUL byte.
    #[error("metric name {0:?} contains a NUL byte")]
    BadMetric(String),
    /// CUPTI kept asking for passes.
    #[error("CUPTI asked for more than {0} passes")]
    TooManyPasses(usize),
    /// CUPTI recorded fewer ranges than operations profiled.
    #[error("CUPTI recorded {got} of {expected} ranges (a launch was not seen)")]
    NoRange {
        /// Ranges profiled.
        expected: usize,
        /// Ranges recorded.
        got: usize,
    },
    /// More operations than one call profiles.
    #[error("{0} operations in one profile (at most {max})", max = MAX_OPS)]
    TooManyOps(usize),
}

pub(super) fn check(call: &'static str, r: cp::CUptiResult) -> Result<(), CounterError> {
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
pub(super) use params;

/// Calls CUPTI's `$call` with its parameter struct `$params` (by `&mut`), the result checked
/// into an error named by the call. The caller says why the call is sound, as for any unsafe
/// call.
macro_rules! cupti {
    ($call:ident, $params:ident) => {{
        let params = &mut $params;
        // SAFETY: the caller's comment states why `params` is valid for `$call`.
        super::base::check(stringify!($call), unsafe { cp::$call(params) })
    }};
}
pub(super) use cupti;

/// The current context, which the `Gpu` of this thread made current.
pub(super) fn current_context() -> Result<cu::CUcontext, CounterError> {
    let mut ctx: cu::CUcontext = std::ptr::null_mut();
    // SAFETY: `ctx` is valid for writes.
    let r = unsafe { cu::cuCtxGetCurrent(&mut ctx) };
    if r != cu::CUresult::CUDA_SUCCESS || ctx.is_null() {
        return Err(CounterError::NoContext(format!("{r:?}")));
    }
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

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
