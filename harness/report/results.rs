//! `Results`: the whole run as one JSON file (`KERNELGATE_RESULTS=path.json`): the device,
//! every trial with its samples and verdict. The input of `kernelgate compare` and of CI reports.

use crate::baseline::{Fingerprint, Stored};
use crate::device::DeviceInfo;
use crate::gate::TrialVerdict;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format of results files.
pub const FORMAT: u32 = 1;

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran and passed.
    Passed,
    /// Ran and failed (wrong output, fault, regression, ...).
    Failed,
    /// Not run, with a reason (no GPU, no NVRTC).
    Ignored,
}

/// What kind of failure a trial had; the run's exit code follows the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailKind {
    /// Slower than its baseline, or over a memory or resource limit (exit code 1).
    Performance,
    /// Wrong output, a fault, a time-out, a compile error (exit code 101).
    Correctness,
    /// The setup: no GPU or NVRTC where required, an unusable baseline, a worker that cannot
    /// start (exit code 2).
    Infrastructure,
}

impl FailKind {
    /// The process exit code for a run whose worst failure is this.
    pub fn exit_code(self) -> u8 {
        match self {
            FailKind::Performance => 1,
            FailKind::Correctness => 101,
            FailKind::Infrastructure => 2,
        }
    }
}

/// Measurements of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Timing regime (`cold`, or `batch` near the launch floor).
    pub regime: String,
    /// Launches per sample: kernel, reference.
    pub batch: [usize; 2],
    /// The device's launch floor (event-timed empty kernel), seconds.
    pub launch_floor: f64,
    /// Time per run.
    pub time: Stored,
    /// Every time sample, seconds.
    pub time_samples: Vec<f64>,
    /// Speedup over the reference, for other kernels.
    pub speedup: Option<Stored>,
    /// Per-round speedup samples.
    pub speedup_samples: Vec<f64>,
    /// The suite's `max_slowdown`.
    pub max_slowdown: f64,
    /// Whether sampling stopped at the time cap before the precision target.
    pub hit_time_cap: bool,
    /// Memory and resources of the kernel.
    pub footprint: crate::measure::Footprint,
    /// The SM clock while sampling.
    pub clocks: crate::measure::Clocks,
    /// Bytes one run moves (the suite's `bench.bytes` for this case), for achieved bandwidth.
    #[serde(default)]
    pub bytes: Option<f64>,
    /// Floating-point operations of one run (`bench.flops`), for the achieved FLOP rate.
    #[serde(default)]
    pub flops: Option<f64>,
    /// The time samples this trial was compared with (the stored baseline's, or the paired
    /// base's), seconds; empty when it was not compared.
    #[serde(default)]
    pub baseline_samples: Vec<f64>,
}

/// One trial of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// `suite::kernel::case`, or `suite::compile`.
    pub name: String,
    /// The suite.
    pub suite: String,
    /// The suite file and the line of the kernel's `[[kernel]]` (for annotations).
    pub file: String,
    /// Line in `file`.
    pub line: usize,
    /// How it ended.
    pub status: Status,
    /// For failures, what kind.
    pub failure: Option<FailKind>,
    /// The GPU it ran on, when it ran on one.
    pub device_ordinal: Option<i32>,
    /// Why it failed or was ignored; the gate's note otherwise.
    pub message: Option<String>,
    /// Measurements, when it was timed.
    pub measurement: Option<Measurement>,
    /// The gate's verdict, when a comparable baseline existed.
    pub verdict: Option<TrialVerdict>,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// `FORMAT`.
    pub format: u32,
    /// kernelgate's version.
    pub kernelgate: String,
    /// Date of the run (UTC).
    pub date: String,
    /// The device's fingerprint, when a GPU was used.
    pub device: Option<Fingerprint>,
    /// The device's full description.
    pub device_info: Option<DeviceInfo>,
    /// Every trial that was selected, in run order.
    pub trials: Vec<TrialRecord>,
}

impl Results {
    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let value = serde_json::to_value(self).map_err(|e| e.to_string())?;
        crate::baseline::write_atomically(path, crate::baseline::pretty_json(&value).as_bytes())
    }

    /// Reads a results file, checking its format.
    pub fn load(path: &Path) -> Result<Results, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("`{}` is not valid JSON: {e}", path.display()))?;
        match value.get("format").and_then(|f| f.as_u64()) {
            Some(f) if f == FORMAT as u64 => {
                serde_json::from_value(value).map_err(|e| format!("`{}` is not a kernelgate results file: {e}", path.display()))
            }
            Some(f) => Err(format!(
                "`{}` is results format {f}; this kernelgate reads format {FORMAT} (use the kernelgate that wrote it)",
                path.display()
            )),
            None => Err(format!("`{}` is not a kernelgate results file (no `format`)", path.display())),
        }
    }
}
