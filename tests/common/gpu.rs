//! The guard of a test that needs a GPU (run with `--ignored` on a GPU machine).

/// Panics, saying why, where no CUDA driver or no NVRTC loads: an ignored GPU test run on a
/// machine without them fails rather than passing without having run.
pub fn require_gpu() {
    if let Some(why) =
        kernelgate::device::driver_missing().or_else(kernelgate::device::nvrtc_missing)
    {
        panic!("this test needs a GPU and NVRTC: {why}");
    }
}
