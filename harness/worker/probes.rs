//! `probes`: the harness's own kernels the timer needs — an empty kernel (the launch floor) and
//! a clock probe — compiled and loaded in the worker.

use crate::check::failure::Failure;
use crate::device::compile::{self, CompileRequest};
use crate::device::{Function, Gpu};
use crate::failure::TrialFailure;

/// The harness's own kernels: an empty one, whose event-timed duration is the launch floor,
/// and a clock probe that spins and reports the SM cycles and nanoseconds it took.
const PROBES: &str = r#"
extern "C" __global__ void kernelgate_empty() {}

extern "C" __global__ void kernelgate_clock(unsigned long long* out, int spins) {
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    float x = threadIdx.x;
    for (int i = 0; i < spins; ++i) x = x * 0.9999999f + 1e-7f;
    long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0) {
        out[0] = (unsigned long long)(c1 - c0);
        out[1] = t1 - t0;
        out[2] = (x == -1.0f);
    }
}
"#;

/// Compiles and loads the probe kernels: (empty, clock).
pub(super) fn probes(
    gpu: &Gpu,
    cache_dir: Option<&std::path::Path>,
) -> Result<(Function, Function), Failure> {
    let entries = [
        "kernelgate_empty".to_string(),
        "kernelgate_clock".to_string(),
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
    let empty = module.function(&c.lowered[0])?;
    let clock = module.function(&c.lowered[1])?;
    Ok((empty, clock))
}
