//! `BaselineFile`: a suite's stored results on one device, at
//! `baselines/<device>/<suite>.json`. Versioned, keyed by the device fingerprint, written
//! atomically, pretty-printed with sorted keys and one trial per entry so reviews see small
//! diffs. Each entry keeps the runs it was blessed from, with their physical GPU and host
//! (`runs.rs`).

pub mod check;
mod json;
mod runs;
mod store;

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

/// Why a baseline file cannot be used: each names the file and says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineError {
    /// The file exists but cannot be read.
    #[error("cannot read baseline `{path}`: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS's reason.
        message: String,
    },
    /// Not JSON.
    #[error("baseline `{path}` is not valid JSON ({message}); restore it from version control, or delete it and re-bless")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's reason.
        message: String,
    },
    /// JSON without a `format`.
    #[error("`{path}` has no `format` number: it is not a kernelgate baseline")]
    NoFormat {
        /// The file.
        path: PathBuf,
    },
    /// Written by a newer kernelgate.
    #[error("baseline `{path}` has format {found}, newer than this kernelgate reads ({FORMAT}): upgrade kernelgate")]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its format.
        found: u64,
    },
    /// Written by an older kernelgate.
    #[error("baseline `{path}` has format {found}, older than this kernelgate reads ({OLDEST_FORMAT} to {FORMAT}): re-record it with KERNELGATE_BLESS=1")]
    Older {
        /// The file.
        path: PathBuf,
        /// Its format.
        found: u64,
    },
    /// The right format number, the wrong contents.
    #[error("baseline `{path}` does not match format {format}: {message}")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// Its format.
        format: u64,
        /// The parser's reason.
        message: String,
    },
}

/// Reads a baseline file: `Ok(None)` when there is none; an error, naming the file and saying
/// what to do, when it cannot be used.
pub fn load(path: &Path) -> Result<Option<BaselineFile>, BaselineError> {
    let path_buf = || path.to_path_buf();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(BaselineError::Read {
                path: path_buf(),
                message: e.to_string(),
            })
        }
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| BaselineError::NotJson {
            path: path_buf(),
            message: e.to_string(),
        })?;
    match value.get("format").and_then(|f| f.as_u64()) {
        None => Err(BaselineError::NoFormat { path: path_buf() }),
        Some(f) if f > FORMAT as u64 => Err(BaselineError::Newer {
            path: path_buf(),
            found: f,
        }),
        Some(f) if f < OLDEST_FORMAT as u64 => Err(BaselineError::Older {
            path: path_buf(),
            found: f,
        }),
        Some(f) => {
            let mut file: BaselineFile =
                serde_json::from_value(value).map_err(|e| BaselineError::Mismatch {
                    path: path_buf(),
                    format: f,
                    message: e.to_string(),
                })?;
            for entry in file.trials.values_mut() {
                entry.ensure_runs();
                entry.pool();
            }
            file.format = FORMAT;
            Ok(Some(file))
        }
    }
}

/// Writes `file` atomically (as `FORMAT`): a temporary file beside it, flushed to disk, then
/// renamed over it. An entry without runs is written as one run of unknown origin.
pub fn save(path: &Path, file: &BaselineFile) -> Result<(), String> {
    let mut file = file.clone();
    file.format = FORMAT;
    for entry in file.trials.values_mut() {
        entry.ensure_runs();
    }
    let value = serde_json::to_value(&file).map_err(|e| e.to_string())?;
    write_atomically(path, json::pretty(&value).as_bytes())
}

/// Writes `bytes` to `path` through a temporary file and a rename: readers see the old file
/// or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let fail = |e: std::io::Error| format!("cannot write `{}`: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
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

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil_date((secs / 86_400) as i64)
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

    fn device() -> Fingerprint {
        Fingerprint {
            name: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: 132,
            memory_gib: 140,
            driver: "580.159.04".into(),
            cuda: "13.0".into(),
        }
    }

    fn entry(median: f64) -> Entry {
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
    fn save_load_round_trip_and_diff_friendly_text() {
        let dir = std::env::temp_dir().join(format!("kg-baseline-{}", std::process::id()));
        let p = path(&dir, &device(), "saxpy");
        let mut file = BaselineFile {
            format: FORMAT,
            suite: "saxpy".into(),
            device: device(),
            trials: BTreeMap::new(),
        };
        file.trials
            .insert("saxpy::vec4::n=4096".into(), entry(4.5e-6));
        file.trials
            .insert("saxpy::naive::n=4096".into(), entry(5.0e-6));
        save(&p, &file).unwrap();
        let mut expected = file.clone();
        for e in expected.trials.values_mut() {
            e.ensure_runs();
        }
        assert_eq!(load(&p).unwrap(), Some(expected));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"format\": 2,"), "{text}");
        assert_eq!(
            text.matches("\"time_samples\"").count(),
            2,
            "samples only in the runs, one run per entry:\n{text}"
        );
        assert!(
            text.find("saxpy::naive").unwrap() < text.find("saxpy::vec4").unwrap(),
            "sorted keys"
        );
        assert!(
            text.contains("\"time_samples\": [4.5e-6, 4.5e-6, 4.5e-6]"),
            "samples on one line:\n{text}"
        );
        assert!(text.ends_with("}\n"));
        // Nothing is left behind but the file itself.
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["saxpy.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn format_versions_are_checked_with_advice() {
        let dir = std::env::temp_dir().join(format!("kg-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.json");
        assert_eq!(load(&p), Ok(None), "missing is not an error");
        std::fs::write(&p, r#"{"format": 99, "suite": "s"}"#).unwrap();
        assert!(load(&p)
            .unwrap_err()
            .to_string()
            .contains("upgrade kernelgate"));
        std::fs::write(&p, r#"{"format": 0, "suite": "s"}"#).unwrap();
        assert!(load(&p)
            .unwrap_err()
            .to_string()
            .contains("KERNELGATE_BLESS=1"));
        std::fs::write(&p, r#"{"suite": "s"}"#).unwrap();
        assert!(load(&p)
            .unwrap_err()
            .to_string()
            .contains("not a kernelgate baseline"));
        std::fs::write(&p, "{ not json").unwrap();
        assert!(load(&p).unwrap_err().to_string().contains("not valid JSON"));
        std::fs::write(&p, r#"{"format": 1, "suite": 3}"#).unwrap();
        assert!(load(&p)
            .unwrap_err()
            .to_string()
            .contains("does not match format 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn format_1_is_read_as_one_run_and_written_as_format_2() {
        let dir = std::env::temp_dir().join(format!("kg-format1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("saxpy.json");
        // A format-1 file as kernelgate 0.1.0 wrote it (shortened).
        let v1 = r#"{
  "device": {"compute_capability": "9.0", "cuda": "13.0", "driver": "580.159.04", "memory_gib": 140, "name": "NVIDIA H200", "sm_count": 132},
  "format": 1,
  "suite": "saxpy",
  "trials": {
    "saxpy::vec4::n=4096": {
      "case": "n=4096", "date": "2026-11-21", "footprint": null, "kernel": "vec4",
      "kernelgate": "0.1.0", "reference": "naive", "regime": "cold",
      "speedup": {"high": 1.21, "low": 1.19, "median": 1.2},
      "speedup_samples": [1.2, 1.19, 1.21],
      "time": {"high": 4.6e-6, "low": 4.4e-6, "median": 4.5e-6},
      "time_samples": [4.4e-6, 4.5e-6, 4.6e-6]
    }
  }
}"#;
        std::fs::write(&p, v1).unwrap();
        let file = load(&p).unwrap().unwrap();
        let e = &file.trials["saxpy::vec4::n=4096"];
        assert_eq!(
            e.time_samples,
            [4.4e-6, 4.5e-6, 4.6e-6],
            "the gate's samples"
        );
        assert_eq!(e.speedup_samples, [1.2, 1.19, 1.21]);
        assert_eq!(e.time.median, 4.5e-6, "the stored summary is kept");
        assert_eq!(e.runs.len(), 1);
        let run = &e.runs[0];
        assert_eq!(run.origin, Origin::default(), "GPU and host unknown");
        assert_eq!((run.median, run.speedup), (4.5e-6, Some(1.2)));
        assert_eq!(run.date, "2026-11-21");
        assert_eq!(e.spread(), 1.0);
        // Written back (as a bless would) it is format 2, and reads back the same.
        save(&p, &file).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"format\": 2,"), "{text}");
        assert!(text.contains("\"gpu\": null,"), "{text}");
        assert!(
            text.contains("\"time_samples\": [4.4e-6, 4.5e-6, 4.6e-6]"),
            "{text}"
        );
        assert_eq!(load(&p).unwrap(), Some(file));
        std::fs::remove_dir_all(&dir).unwrap();
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
    }
}
