//! `check_dir`: every stored baseline file parsed and validated, for `kernelgate lint` — so a
//! corrupted or hand-edited baseline fails GPU-less CI, not the first run on a GPU.

use super::entry::BaselineFile;
use super::file::load;
use std::path::{Path, PathBuf};

/// What `check_dir` found: the files that are usable, and a message per file that is not.
#[derive(Debug, Default)]
pub struct Checked {
    /// Usable files.
    pub files: Vec<(PathBuf, BaselineFile)>,
    /// One message per unusable file, naming it and saying what to do.
    pub errors: Vec<String>,
}

/// Reads every `<device>/<suite>.json` under `dir` (a missing folder holds none) through
/// [`load`], which validates what it reads ([`super::validate`]): a file fails when it is not a
/// kernelgate baseline of a format this kernelgate reads, when its `suite` differs from its
/// file name, or when a value the gate computes with is unusable — exactly what a run refuses.
/// With `suites`, only those suites' files (on every device) are read: what a run of them reads.
pub fn check_dir(dir: &Path, suites: Option<&[&str]>) -> Checked {
    let mut out = Checked::default();
    let Ok(devices) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut paths: Vec<PathBuf> = devices
        .flatten()
        .map(|d| d.path())
        .filter(|p| p.is_dir())
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|files| files.flatten().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            suites.is_none_or(|names| names.contains(&stem))
        })
        .collect();
    paths.sort();
    for path in paths {
        match load(&path) {
            Ok(Some(file)) => out.files.push((path, file)),
            Ok(None) => {}
            Err(e) => out.errors.push(e.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_baselines_are_valid_and_a_broken_one_is_named() {
        let checked = check_dir(Path::new("baselines"), None);
        assert!(checked.errors.is_empty(), "{:?}", checked.errors);
        assert!(checked.files.len() >= 7, "{}", checked.files.len());

        let tmp = std::env::temp_dir().join(format!("kg-baseline-check-{}", std::process::id()));
        let (good, file) = &checked.files[0];
        let device = tmp.join(file.device.slug());
        std::fs::create_dir_all(&device).unwrap();
        let mut text = std::fs::read_to_string(good).unwrap();
        std::fs::write(device.join(format!("{}.json", file.suite)), &text).unwrap();
        std::fs::write(device.join("renamed.json"), &text).unwrap();
        text.truncate(text.len() / 2);
        std::fs::write(device.join("torn.json"), &text).unwrap();
        let only = check_dir(&tmp, Some(&["renamed"]));
        assert_eq!(
            (only.files.len(), only.errors.len()),
            (0, 1),
            "{:?}",
            only.errors
        );
        let checked = check_dir(&tmp, None);
        assert_eq!(checked.files.len(), 1);
        assert_eq!(checked.errors.len(), 2, "{:?}", checked.errors);
        assert!(
            checked.errors[0].contains("a suite's baseline is named after it"),
            "{:?}",
            checked.errors
        );
        assert!(checked.errors[1].contains("torn.json` is not valid JSON"));
        // Another device's baseline in this device's folder: named, never read as this one's.
        let other = tmp.join("nvidia-h100-80gb-hbm3-sm90-132sm-80gib-drv580.159.04-cuda13.0");
        std::fs::create_dir_all(&other).unwrap();
        let text = std::fs::read_to_string(good).unwrap();
        std::fs::write(other.join(format!("{}.json", file.suite)), &text).unwrap();
        let checked = check_dir(&tmp, None);
        assert!(
            checked.errors.iter().any(|e| e.contains(&format!(
                "`device` is {}, but the file is in folder `nvidia-h100-80gb-hbm3-sm90-132sm-80gib-drv580.159.04-cuda13.0`: a baseline lives in its device's folder (`{}/{}.json`",
                file.device.describe(),
                file.device.slug(),
                file.suite
            ))),
            "{:?}",
            checked.errors
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_run_with_a_broken_sample_is_named() {
        let tmp = std::env::temp_dir().join(format!("kg-baseline-runs-{}", std::process::id()));
        let (good, _) = &check_dir(Path::new("baselines"), None).files[0];
        let mut file = super::super::file::load(good).unwrap().unwrap();
        let (name, entry) = file.trials.iter_mut().next().unwrap();
        let name = name.clone();
        let mut run = entry.runs[0].clone();
        run.time_samples[0] = -1.0;
        entry.add_run(run);
        let path = tmp
            .join(file.device.slug())
            .join(format!("{}.json", file.suite));
        super::super::file::save(&path, &file).unwrap();
        let checked = check_dir(&tmp, None);
        assert_eq!(checked.errors.len(), 1, "{:?}", checked.errors);
        let runs = file.trials[&name].runs.len();
        assert_eq!(
            checked.errors[0],
            format!(
                "baseline `{}`: `trials.{name:?}.runs[{}].time_samples[0]` is -1; a sample is a positive number of seconds, at most 8.64e4; restore the file from version control, or delete it and bless again (KERNELGATE_BLESS=1)",
                path.display(),
                runs - 1
            )
        );
        // An entry whose runs are gone, and a run without samples, are named the same way.
        let trial = |v: &mut serde_json::Value| v["trials"][&name].clone();
        for (field, place) in [
            ("runs", "runs` is empty"),
            ("time_samples", "runs[0].time_samples` holds 0 sample(s)"),
        ] {
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let mut t = trial(&mut v);
            match field {
                "runs" => t["runs"] = serde_json::json!([]),
                _ => t["runs"][0][field] = serde_json::json!([]),
            }
            v["trials"][&name] = t;
            std::fs::write(&path, v.to_string()).unwrap();
            let e = super::super::file::load(&path).unwrap_err().to_string();
            assert!(e.contains(place), "{e}");
            super::super::file::save(&path, &file).unwrap();
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
