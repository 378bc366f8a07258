//! The safe types over the CUDA driver, where only a GPU can show them: each test is
//! `#[ignore]`d with that reason and its name starts `needs_gpu_` (ci/test.sh skips those when
//! it runs the ignored tests that need only NVRTC); on a GPU machine, `cargo test --test device
//! -- --ignored`.

#[path = "common/gpu.rs"]
mod gpu;
use kernelgate::device::compile::{compile, CompileRequest};
use kernelgate::device::{Gpu, LaunchDims};
use std::path::Path;

/// On a GPU: a function launched after its `Module` value is dropped still finds its code
/// (the module stays loaded while a function holds it). Without a GPU there is nothing to
/// load: the test is ignored, with that reason.
#[test]
#[ignore = "needs a GPU and NVRTC: cargo test --test device -- --ignored on a GPU machine"]
fn needs_gpu_a_function_keeps_its_module_loaded() {
    gpu::require_gpu();
    let gpu = Gpu::open(0).expect("a usable GPU");
    let entries = ["kg_nothing".to_string()];
    let req = CompileRequest {
        path: Path::new("kg_nothing.cu"),
        text: "extern \"C\" __global__ void kg_nothing() {}",
        include_dirs: &[],
        options: &[],
        entries: &entries,
        arch: &gpu.info.arch(),
    };
    let compiled = compile(&req, None).expect("compiles");
    let module = gpu.load(&compiled.cubin).expect("loads");
    let f = module.function(&compiled.lowered[0]).expect("found");
    drop(module);
    let dims = LaunchDims {
        grid: [1; 3],
        block: [1; 3],
        shared: 0,
    };
    gpu.launch(&f, dims, &[])
        .expect("launches after the module value is gone");
    gpu.synchronize().expect("runs");
}
