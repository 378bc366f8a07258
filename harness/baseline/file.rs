//! `load`, `save`: reading and writing baseline files — the format check on read (with
//! advice), the migration of formats 1 (entries without runs) and 2 (entries without code) to
//! format 3, and atomic writes.

use super::entry::{BaselineFile, FORMAT, OLDEST_FORMAT};
use super::fingerprint::Fingerprint;
use super::json;
use std::path::{Path, PathBuf};

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
    /// Parsed, but a value the gate cannot use: the place, and what to write.
    #[error("baseline `{}`: {problem}; restore the file from version control, or delete it and bless again (KERNELGATE_BLESS=1)", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The place and what is wrong there.
        problem: String,
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

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The OS refused: the folder, the temporary file, or the rename.
    #[error("cannot write `{}`: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// The value could not be encoded as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
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
            }
            super::valid::validate(path, &file).map_err(|problem| BaselineError::Invalid {
                path: path_buf(),
                problem: problem.to_string(),
            })?;
            for entry in file.trials.values_mut() {
                entry.pool();
            }
            file.format = FORMAT;
            Ok(Some(file))
        }
    }
}

/// Writes `file` atomically (as `FORMAT`): a temporary file beside it, flushed to disk, then
/// renamed over it. An entry without runs is written as one run of unknown origin.
pub fn save(path: &Path, file: &BaselineFile) -> Result<(), WriteError> {
    let mut file = file.clone();
    file.format = FORMAT;
    for entry in file.trials.values_mut() {
        entry.ensure_runs();
    }
    let value = serde_json::to_value(&file)?;
    write_atomically(path, json::pretty(&value).as_bytes())
}

/// Writes `bytes` to `path` through a temporary file and a rename: readers see the old file
/// or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    use std::io::Write;
    let fail = |source: std::io::Error| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Unique per process and per write, so two writers (threads too) never share one.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{name}.tmp{}-{n}", std::process::id()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::entry::tests::entry_at as entry;
    use crate::baseline::fingerprint::tests::device;
    use crate::baseline::runs::Origin;
    use std::collections::BTreeMap;

    /// A format-1 file as kernelgate 0.1.0 wrote it (shortened).
    const V1: &str = r#"{
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
        assert!(text.contains("\"format\": 3,"), "{text}");
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
    fn format_1_is_read_as_one_run_and_written_as_format_3() {
        let dir = std::env::temp_dir().join(format!("kg-format1-{}", std::process::id()));
        // In its device's folder, where a baseline lives.
        let p = dir
            .join("nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0")
            .join("saxpy.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, V1).unwrap();
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
        // Written back (as a bless would) it is format 3, and reads back the same.
        save(&p, &file).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"format\": 3,"), "{text}");
        assert!(text.contains("\"gpu\": null,"), "{text}");
        assert!(
            text.contains("\"time_samples\": [4.4e-6, 4.5e-6, 4.6e-6]"),
            "{text}"
        );
        assert_eq!(load(&p).unwrap(), Some(file));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn format_2_reads_without_code_and_format_3_keeps_code_and_room_for_counters() {
        let dir = std::env::temp_dir().join(format!("kg-format3-{}", std::process::id()));
        // In its device's folder, where a baseline lives.
        let p = dir
            .join("nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0")
            .join("saxpy.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // A format-2 entry: runs with GPU and host, no code.
        let v2 = V1.replace("\"format\": 1", "\"format\": 2").replace(
            "\"speedup_samples\": [1.2, 1.19, 1.21],\n      \"time\": {\"high\": 4.6e-6, \"low\": 4.4e-6, \"median\": 4.5e-6},\n      \"time_samples\": [4.4e-6, 4.5e-6, 4.6e-6]",
            "\"time\": {\"high\": 4.6e-6, \"low\": 4.4e-6, \"median\": 4.5e-6},\n      \"runs\": [{\"gpu\": \"GPU-8c1f3f2e\", \"host\": \"h200-07\", \"date\": \"2026-11-21\", \"kernelgate\": \"0.1.0\", \"median\": 4.5e-6, \"speedup\": 1.2, \"time_samples\": [4.4e-6, 4.5e-6, 4.6e-6], \"speedup_samples\": [1.2, 1.19, 1.21]}]",
        );
        assert!(
            v2.contains("\"runs\"") && !v2.contains("\"format\": 1"),
            "{v2}"
        );
        std::fs::write(&p, v2).unwrap();
        let mut file = load(&p).unwrap().unwrap();
        let e = &file.trials["saxpy::vec4::n=4096"];
        assert_eq!((&e.code, e.trial_seconds), (&None, None));
        assert_eq!(e.time_samples, [4.4e-6, 4.5e-6, 4.6e-6]);
        // Blessed again with code, it is format 3 and the code reads back.
        let code: crate::code::TrialCode = serde_json::from_str(
            r#"{"identity": "ab12000000000000000000000000000000000000000000000000000000000000",
                "arch": "sm_90", "toolchain": {"kernelgate": "0.1.0"},
                "kernels": [{"role": "kernel", "kernel": "vec4", "entries": []}],
                "parts": {"launches": "0000000000000001", "inputs": "0000000000000002",
                          "check": "0000000000000003", "bench": "0000000000000004"}}"#,
        )
        .unwrap();
        let entry = file.trials.get_mut("saxpy::vec4::n=4096").unwrap();
        entry.code = Some(code.clone());
        entry.trial_seconds = Some(0.42);
        save(&p, &file).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("\"format\": 3,"), "{text}");
        assert!(text.contains("\"identity\": \"ab1200"), "{text}");
        // Issue 18 adds `counters` to each run: a file that has them still reads.
        let with_counters = text.replace(
            "\"date\": \"2026-11-21\",\n          \"gpu\"",
            "\"counters\": {\"dram_bytes\": 4096},\n          \"date\": \"2026-11-21\",\n          \"gpu\"",
        );
        assert_ne!(with_counters, text, "{text}");
        std::fs::write(&p, with_counters).unwrap();
        let again = load(&p).unwrap().unwrap();
        assert_eq!(again.trials["saxpy::vec4::n=4096"].code, Some(code));
        assert_eq!(
            again.trials["saxpy::vec4::n=4096"].trial_seconds,
            Some(0.42)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
