//! `for_expressions`: the device that launch expressions read (`sm_count`,
//! `max_threads_per_sm`, `max_shared_per_block`, `l2_bytes`, `warp_size`, `cc`): the run's first
//! GPU, set before its suites load (`set`); without one, the first device of the target
//! architecture that kernelgate knows (`KNOWN`), and `known`, every such device, which `lint`
//! evaluates a suite for.

use crate::device::Attributes;
use std::sync::OnceLock;

/// The run's GPU, as its suites' expressions see it.
static RUN: OnceLock<Attributes> = OnceLock::new();

/// Devices known without a GPU, in [`Attributes::NAMES`]' order. Read from the devices
/// themselves (`cuDeviceGetAttribute`, as `kernelgate run` records them in `device_info`) where
/// kernelgate ran on them, otherwise from NVIDIA's data sheets (H100 PCIe: 114 SMs, A100: 108
/// SMs and 40 MB of L2); shared memory per block from the CUDA C++ Programming Guide's table.
const KNOWN: [(&str, [i64; 6]); 4] = [
    (
        "NVIDIA H100 80GB HBM3",
        [132, 2048, 232_448, 52_428_800, 32, 90],
    ),
    ("NVIDIA H100 PCIe", [114, 2048, 232_448, 52_428_800, 32, 90]),
    ("NVIDIA H200", [132, 2048, 232_448, 62_914_560, 32, 90]),
    (
        "NVIDIA A100-SXM4-80GB",
        [108, 2048, 166_912, 41_943_040, 32, 80],
    ),
];

/// Sets this process's device to GPU `ordinal`'s where a driver and that GPU are here: suites
/// loaded from now on read it.
pub fn set_from_gpu(ordinal: i32) {
    if crate::device::driver_missing().is_none() {
        if let Ok(device) = crate::device::attributes(ordinal) {
            let _ = RUN.set(device);
        }
    }
}

/// Whether a suite file under `dir` names a device attribute (a name in a comment counts too):
/// only then does a run ask its GPU before loading, which costs a driver start per process.
pub fn named_in(dir: &std::path::Path) -> bool {
    // A folder with a link loop does not load: nothing to ask the GPU for.
    let found = super::discover::discover_all(dir).ok();
    let files = found.filter(|f| f.loops.is_empty()).map(|f| f.files);
    let named = |p: &std::path::PathBuf| std::fs::read_to_string(p).is_ok_and(|t| names(&t));
    files.is_some_and(|files| files.iter().any(named))
}

/// Whether `text` holds an attribute's name as a word of its own (`cc`, not `accumulate`).
pub fn names(text: &str) -> bool {
    let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    words.into_iter().any(|w| Attributes::NAMES.contains(&w))
}

/// The known devices of `arch` (`sm_90`, `sm_90a`: compute capability 90).
pub fn known(arch: &str) -> Vec<Attributes> {
    let cc: Option<i64> = crate::device::binary::arch_number(arch).map(i64::from);
    KNOWN
        .iter()
        .filter(|(_, v)| Some(v[5]) == cc)
        .map(|(name, values)| Attributes {
            name: name.to_string(),
            values: *values,
        })
        .collect()
}

/// The target without a GPU: `KERNELGATE_ARCH`'s first architecture, `sm_90` by default.
pub fn target() -> String {
    let arch = crate::project::var("KERNELGATE_ARCH").unwrap_or_default();
    let first = arch.split(',').next().unwrap_or_default().trim();
    if first.is_empty() { "sm_90" } else { first }.to_string()
}

/// The device expressions read: the run's, or the first known one of `KERNELGATE_ARCH`'s
/// first architecture (`sm_90` by default: an H100 SXM).
pub fn for_expressions() -> Attributes {
    if let Some(d) = RUN.get() {
        return d.clone();
    }
    known(&target())
        .into_iter()
        .next()
        .unwrap_or_else(|| known("sm_90").remove(0))
}
