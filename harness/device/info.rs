//! `DeviceInfo`: what kernelgate needs to know about a device — name, compute capability,
//! SMs, clocks, memory, driver — and the peaks derived from it.

use serde::{Deserialize, Serialize};

/// What kernelgate needs to know about a device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Ordinal, as in `KERNELGATE_DEVICE`.
    pub ordinal: i32,
    /// Marketing name.
    pub name: String,
    /// Compute capability.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Peak SM clock, kHz.
    pub sm_clock_khz: i32,
    /// Peak memory clock, kHz.
    pub memory_clock_khz: i32,
    /// Memory bus width, bits.
    pub bus_width_bits: i32,
    /// L2 cache, bytes.
    pub l2_bytes: i32,
    /// Threads one SM can hold at once.
    pub max_threads_per_sm: i32,
    /// Device memory, bytes.
    pub total_memory: usize,
    /// Driver's CUDA version, e.g. 13000.
    pub driver_version: i32,
    /// The kernel driver's release, e.g. `580.159.04` (`unknown` where it cannot be read).
    pub driver_release: String,
    /// The physical GPU (`GPU-xxxxxxxx-…`, as nvidia-smi prints it), for the run history.
    pub uuid: Option<String>,
}

/// The NVIDIA kernel module's version, from `/proc/driver/nvidia/version` (Linux).
pub(super) fn driver_release() -> String {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("NVRM version"))
        .and_then(|l| {
            l.split_whitespace()
                .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))
        })
        .unwrap_or("unknown")
        .to_string()
}

/// A device as suite expressions see it: its name, and the values of [`Attributes::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    /// The device's name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// In the order of [`Attributes::NAMES`].
    pub values: [i64; 6],
}

impl Attributes {
    /// The names expressions read them by: SMs, threads an SM holds, shared memory a block may
    /// opt into (bytes), L2 bytes, threads per warp, and the compute capability (`90`).
    pub const NAMES: [&'static str; 6] = [
        "sm_count",
        "max_threads_per_sm",
        "max_shared_per_block",
        "l2_bytes",
        "warp_size",
        "cc",
    ];

    /// Each attribute by the name expressions read it by, as [`Attributes::NAMES`] orders them.
    pub fn named(&self) -> impl Iterator<Item = (String, i64)> + '_ {
        (Self::NAMES.iter().zip(self.values)).map(|(n, v)| (n.to_string(), v))
    }
}

#[cfg(test)]
impl DeviceInfo {
    /// An H100-class device (132 SMs at 1.98 GHz, a 5120-bit bus at 2.619 GHz: 3.352 TB/s)
    /// named `name`, for tests that need peaks and a fingerprint but no GPU.
    pub(crate) fn for_tests(name: &str, driver_release: &str) -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: name.into(),
            compute_capability: (9, 0),
            sm_count: 132,
            sm_clock_khz: 1_980_000,
            memory_clock_khz: 2_619_000,
            bus_width_bits: 5120,
            l2_bytes: 50 << 20,
            max_threads_per_sm: 2048,
            total_memory: 80 << 30,
            driver_version: 13000,
            driver_release: driver_release.into(),
            uuid: None,
        }
    }
}

impl DeviceInfo {
    /// NVRTC target for this device, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }

    /// Peak DRAM bandwidth in bytes/s: memory clock × 2 (double data rate) × bus width.
    pub fn peak_bandwidth(&self) -> f64 {
        self.memory_clock_khz as f64 * 1e3 * 2.0 * self.bus_width_bits as f64 / 8.0
    }

    /// Peak FP32 rate in FLOP/s: SMs × FP32 lanes per SM × 2 (an FMA is two) × SM clock.
    pub fn peak_fp32_flops(&self) -> f64 {
        self.peak_flops(crate::dtype::FlopKind::Fp32).unwrap_or(0.0)
    }

    /// Peak rate of arithmetic `kind` in operations per second: SMs × dense operations per SM
    /// per clock ([`flops_per_clock`]) × the highest SM clock (an upper bound: clocks fall under
    /// heavy tensor work). `None` where the architecture's rate for `kind` is not known here.
    pub fn peak_flops(&self, kind: crate::dtype::FlopKind) -> Option<f64> {
        let per_clock = flops_per_clock(self.compute_capability, kind)?;
        Some(self.sm_count as f64 * per_clock * self.sm_clock_khz as f64 * 1e3)
    }
}

/// Dense operations per SM per clock (an FMA counts two) of `kind` on compute capability `cc`.
/// From NVIDIA's architecture whitepapers: *NVIDIA A100 Tensor Core GPU Architecture* (2020,
/// table 3: per-SM FP32/FP64 lanes and third-generation tensor-core rates; 312 TFLOPS BF16 on
/// 108 SMs at 1410 MHz is 2048 per SM per clock) and *NVIDIA H100 Tensor Core GPU Architecture*
/// (2022, tables 2-3: 989.4 TFLOPS dense FP16/BF16 on 132 SMs at 1830 MHz is 4096, TF32 half of
/// it, FP8 and INT8 twice it; FP64 tensor 256; 128 FP32 and 64 FP64 lanes). CUDA-core FP32 of
/// every architecture from the CUDA C++ Programming Guide's throughput table (64 lanes on
/// sm_70/sm_80, 128 elsewhere). Other kinds of other architectures (consumer parts differ by
/// product) are not known.
pub fn flops_per_clock(cc: (i32, i32), kind: crate::dtype::FlopKind) -> Option<f64> {
    use crate::dtype::FlopKind::*;
    let rate = match (cc, kind) {
        ((7, _) | (8, 0), Fp32) => 128,
        (_, Fp32) => 256,
        ((8, 0), Fp64) => 64,
        ((8, 0), Fp16) => 512,
        ((8, 0), Bf16) => 256,
        ((8, 0), Tf32Tensor) => 1024,
        ((8, 0), Fp16Tensor | Bf16Tensor) => 2048,
        ((8, 0), Int8Tensor) => 4096,
        ((8, 0), Fp64Tensor) => 128,
        ((9, 0), Fp64) => 128,
        ((9, 0), Fp16 | Bf16) => 512,
        ((9, 0), Tf32Tensor) => 2048,
        ((9, 0), Fp16Tensor | Bf16Tensor) => 4096,
        ((9, 0), Fp8Tensor | Int8Tensor) => 8192,
        ((9, 0), Fp64Tensor) => 256,
        _ => return None,
    };
    Some(rate as f64)
}
