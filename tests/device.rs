//! The safe types over the CUDA driver, where only a GPU can show them (each test skips, saying
//! why, without one).

use kernelgate::device::compile::{compile, CompileRequest};
use kernelgate::device::{Gpu, LaunchDims};
use std::path::Path;

/// On a GPU: a function launched after its `Module` value is dropped still finds its code
/// (the module stays loaded while a function holds it). Without a GPU there is nothing to
/// load, and the test says so.
#[test]
fn a_function_keeps_its_module_loaded() {
    if let Some(why) =
        kernelgate::device::driver_missing().or_else(kernelgate::device::nvrtc_missing)
    {
        eprintln!("skipped: {why}");
        return;
    }
    let Ok(gpu) = Gpu::open(0) else {
        eprintln!("skipped: no usable GPU");
        return;
    };
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
