//! `BaselineFile`: a suite's stored results on one device, at
//! `baselines/<device>/<suite>.json`. Versioned, keyed by the device fingerprint, written
//! atomically, pretty-printed with sorted keys and one trial per entry so reviews see small
//! diffs. Each entry keeps the runs it was blessed from, with their physical GPU and host
//! (`runs.rs`).

pub mod check;
mod file;
mod json;
mod runs;
mod store;

pub use file::{load, save, write_atomically, BaselineError};
pub use runs::{host_name, spread, Origin, Run, MAX_RUNS};
pub use store::{BaselineStore, SuiteBaseline};

pub use json::pretty as pretty_json;

use crate::device::DeviceInfo;
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The format this kernelgate writes (2: entries keep their runs, with GPU and host).
pub const FORMAT: u32 = 2;

/// The oldest format this kernelgate reads. Format 1 (no runs: one set of samples per entry)
/// is read as one run of unknown GPU and host, and written back as format 2 when blessed.
pub const OLDEST_FORMAT: u32 = 1;

/// Samples kept per trial in a baseline (evenly thinned beyond this).
pub const MAX_STORED_SAMPLES: usize = 256;

/// What identifies a device for comparing timings: two devices with the same fingerprint
/// share baselines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// GPU name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Compute capability, e.g. `9.0`.
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// Device memory, GiB (rounded).
    pub memory_gib: u64,
    /// Kernel driver release, e.g. `580.159.04`.
    pub driver: String,
    /// CUDA version the driver supports, e.g. `13.0`.
    pub cuda: String,
}

impl Fingerprint {
    /// The fingerprint of a device.
    pub fn of(info: &DeviceInfo) -> Fingerprint {
        Fingerprint {
            name: info.name.clone(),
            compute_capability: format!(
                "{}.{}",
                info.compute_capability.0, info.compute_capability.1
            ),
            sm_count: info.sm_count,
            memory_gib: ((info.total_memory as f64) / (1u64 << 30) as f64).round() as u64,
            driver: info.driver_release.clone(),
            cuda: format!(
                "{}.{}",
                info.driver_version / 1000,
                (info.driver_version % 1000) / 10
            ),
        }
    }

    /// A readable folder name: `nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0`.
    pub fn slug(&self) -> String {
        let mut name = String::new();
        for c in self.name.chars() {
            if c.is_ascii_alphanumeric() {
                name.push(c.to_ascii_lowercase());
            } else if !name.ends_with('-') {
                name.push('-');
            }
        }
        let clean = |s: &str| {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect::<String>()
        };
        format!(
            "{}-sm{}-{}sm-{}gib-drv{}-cuda{}",
            name.trim_matches('-'),
            clean(&self.compute_capability).replace('.', ""),
            self.sm_count,
            self.memory_gib,
            clean(&self.driver),
            clean(&self.cuda)
        )
    }

    /// One line for messages.
    pub fn describe(&self) -> String {
        format!(
            "{} (sm_{}, {} SMs, {} GiB, driver {}, CUDA {})",
            self.name,
            self.compute_capability.replace('.', ""),
            self.sm_count,
            self.memory_gib,
            self.driver,
            self.cuda
        )
    }
}

/// A median with its interval, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    /// Median.
    pub median: f64,
    /// Lower end of its 95% interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl From<Summary> for Stored {
    fn from(s: Summary) -> Stored {
        Stored {
            median: s.median,
            low: s.low,
            high: s.high,
        }
    }
}

/// One trial's stored result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Kernel name.
    pub kernel: String,
    /// Case label.
    pub case: String,
    /// How it was timed (`cold`); entries of another regime are not compared.
    pub regime: crate::measure::Regime,
    /// Time per run, seconds: the summary of the pooled samples.
    pub time: Stored,
    /// The pooled time samples of every run, seconds (at most `MAX_STORED_SAMPLES`): what the
    /// gate compares with. Not written (the runs hold them); read from format-1 files.
    #[serde(default, skip_serializing)]
    pub time_samples: Vec<f64>,
    /// Speedup over the reference (absent for the reference itself), pooled.
    pub speedup: Option<Stored>,
    /// The pooled per-round speedup samples. Not written; read from format-1 files.
    #[serde(default, skip_serializing)]
    pub speedup_samples: Vec<f64>,
    /// Memory and resources of the kernel (deterministic: compared exactly).
    pub footprint: Option<crate::measure::Footprint>,
    /// The reference kernel it was compared with.
    pub reference: String,
    /// kernelgate's version that recorded it.
    pub kernelgate: String,
    /// Date recorded, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The runs pooled into it, oldest first (at most `MAX_RUNS`; empty only in memory,
    /// before [`Entry::ensure_runs`]).
    #[serde(default)]
    pub runs: Vec<Run>,
}

/// A suite's baselines on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineFile {
    /// `FORMAT` when written.
    pub format: u32,
    /// The suite's name.
    pub suite: String,
    /// The device they were measured on.
    pub device: Fingerprint,
    /// One entry per trial, by trial name.
    pub trials: BTreeMap<String, Entry>,
}

/// Where a suite's baseline for a device lives.
pub fn path(dir: &Path, device: &Fingerprint, suite: &str) -> PathBuf {
    dir.join(device.slug()).join(format!("{suite}.json"))
}

/// Devices other than `slug` that have a baseline of `suite`, for "recorded on" messages.
pub fn recorded_elsewhere(dir: &Path, suite: &str, slug: &str) -> Vec<Fingerprint> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Fingerprint> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy() != slug)
        .filter_map(|e| load(&e.path().join(format!("{suite}.json"))).ok().flatten())
        .map(|b| b.device)
        .collect();
    out.sort_by_key(Fingerprint::slug);
    out
}

/// At most `cap` samples, evenly spaced through `samples` (keeping the measured order).
pub fn thin(samples: &[f64], cap: usize) -> Vec<f64> {
    if samples.len() <= cap {
        return samples.to_vec();
    }
    (0..cap).map(|i| samples[i * samples.len() / cap]).collect()
}

/// Seconds since 1970-01-01 UTC, now.
fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    civil_date((now_seconds() / 86_400) as i64)
}

/// Now (UTC) in RFC 3339 to the second: `2026-11-22T14:03:07Z`.
pub fn now_rfc3339() -> String {
    rfc3339(now_seconds())
}

/// A time (seconds since 1970-01-01 UTC) in RFC 3339 to the second, UTC: `2026-11-22T14:03:07Z`.
pub fn rfc3339(secs: u64) -> String {
    let s = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        civil_date((secs / 86_400) as i64),
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn device() -> Fingerprint {
        Fingerprint {
            name: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: 132,
            memory_gib: 140,
            driver: "580.159.04".into(),
            cuda: "13.0".into(),
        }
    }

    pub(super) fn entry(median: f64) -> Entry {
        Entry {
            kernel: "vec4".into(),
            case: "n=4096".into(),
            regime: crate::measure::Regime::Cold,
            time: Stored {
                median,
                low: median * 0.99,
                high: median * 1.01,
            },
            time_samples: vec![median; 3],
            speedup: Some(Stored {
                median: 1.2,
                low: 1.19,
                high: 1.21,
            }),
            speedup_samples: vec![1.2, 1.19, 1.21],
            footprint: None,
            reference: "naive".into(),
            kernelgate: "0.1.0".into(),
            date: "2026-11-21".into(),
            runs: Vec::new(),
        }
    }

    #[test]
    fn slug_is_readable() {
        assert_eq!(
            device().slug(),
            "nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0"
        );
        let odd = Fingerprint {
            name: "NVIDIA H100 80GB HBM3".into(),
            driver: "../../x".into(),
            ..device()
        };
        assert_eq!(
            odd.slug(),
            "nvidia-h100-80gb-hbm3-sm90-132sm-140gib-drv....x-cuda13.0"
        );
        assert!(!odd.slug().contains('/'));
    }

    #[test]
    fn thinning_and_dates() {
        let s: Vec<f64> = (0..1000).map(f64::from).collect();
        let t = thin(&s, 256);
        assert_eq!(t.len(), 256);
        assert_eq!((t[0], t[255]), (0.0, 996.0));
        assert_eq!(thin(&s[..10], 256).len(), 10);
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(20_413), "2025-11-21");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(20_413 * 86_400 + 3_600 * 14 + 187),
            "2025-11-21T14:03:07Z"
        );
    }
}
