//! `probes`: the harness's own kernels — an empty kernel (the launch floor), a clock probe, and
//! a read pass that leaves L2 holding clean lines before a profiled launch — compiled and
//! loaded in the worker.

use crate::check::failure::Failure;
use crate::device::compile::{self, CompileRequest};
use crate::device::{Function, Gpu};
use crate::failure::TrialFailure;

/// The harness's own kernels: an empty one, whose event-timed duration is the launch floor,
/// and a clock probe that spins and reports the SM cycles and nanoseconds it took.
const PROBES: &str = include_str!("probes.cu");

/// The probe kernels of a worker.
pub(super) struct Probes {
    /// Does nothing: its event-timed duration is the launch floor.
    pub empty: Function,
    /// Spins and reports SM cycles and nanoseconds.
    pub clock: Function,
    /// Reads a buffer (the L2 flush buffer) so that L2 holds clean lines of it.
    pub read: Function,
}

/// Compiles and loads the probe kernels.
pub(super) fn probes(gpu: &Gpu, cache_dir: Option<&std::path::Path>) -> Result<Probes, Failure> {
    let entries = [
        "kernelgate_empty".to_string(),
        "kernelgate_clock".to_string(),
        "kernelgate_read".to_string(),
    ];
    let req = CompileRequest {
        path: std::path::Path::new("kernelgate_probes.cu"),
        text: PROBES,
        include_dirs: &[],
        options: &[],
        entries: &entries,
        arch: &gpu.info.arch(),
    };
    let c = compile::compile(&req, cache_dir).map_err(|e| {
        Failure::Trial(TrialFailure::Harness(format!(
            "the harness's probe kernels: {e}"
        )))
    })?;
    let module = gpu.load(&c.cubin)?;
    Ok(Probes {
        empty: module.function(&c.lowered[0])?,
        clock: module.function(&c.lowered[1])?,
        read: module.function(&c.lowered[2])?,
    })
}
