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

/// Reads every `<device>/<suite>.json` under `dir` (a missing folder holds none). A file
/// fails when it is not a kernelgate baseline of a format this kernelgate reads, when its
/// `suite` differs from its file name, or when an entry's (or one of its runs') samples are
/// empty or not positive and finite.
pub fn check_dir(dir: &Path) -> Checked {
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
        .collect();
    paths.sort();
    for path in paths {
        match load(&path) {
            Ok(Some(file)) => match problems(&path, &file) {
                None => out.files.push((path, file)),
                Some(e) => out.errors.push(e),
            },
            Ok(None) => {}
            Err(e) => out.errors.push(e.to_string()),
        }
    }
    out
}

/// What makes a parsed file unusable, if anything.
fn problems(path: &Path, file: &BaselineFile) -> Option<String> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if file.suite != stem {
        return Some(format!(
            "baseline `{}` holds suite `{}`: the file must be named `{}.json`",
            path.display(),
            file.suite,
            file.suite
        ));
    }
    let bad = |v: &f64| !(v.is_finite() && *v > 0.0);
    for (name, e) in &file.trials {
        let runs_bad = e.runs.iter().any(|r| {
            r.time_samples.is_empty()
                || r.time_samples.iter().any(bad)
                || r.speedup_samples.iter().any(bad)
                || bad(&r.median)
        });
        if e.time_samples.is_empty()
            || e.time_samples.iter().any(bad)
            || e.speedup_samples.iter().any(bad)
            || runs_bad
        {
            return Some(format!(
                "baseline `{}`, trial `{name}`: samples must be positive, finite numbers and not none; restore the file from version control, or re-record it with KERNELGATE_BLESS=1",
                path.display()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_baselines_are_valid_and_a_broken_one_is_named() {
        let checked = check_dir(Path::new("baselines"));
        assert!(checked.errors.is_empty(), "{:?}", checked.errors);
        assert!(checked.files.len() >= 7, "{}", checked.files.len());

        let tmp = std::env::temp_dir().join(format!("kg-baseline-check-{}", std::process::id()));
        let device = tmp.join("some-gpu");
        std::fs::create_dir_all(&device).unwrap();
        let (good, file) = &checked.files[0];
        let mut text = std::fs::read_to_string(good).unwrap();
        std::fs::write(device.join(format!("{}.json", file.suite)), &text).unwrap();
        std::fs::write(device.join("renamed.json"), &text).unwrap();
        text.truncate(text.len() / 2);
        std::fs::write(device.join("torn.json"), &text).unwrap();
        let checked = check_dir(&tmp);
        assert_eq!(checked.files.len(), 1);
        assert_eq!(checked.errors.len(), 2, "{:?}", checked.errors);
        assert!(
            checked.errors[0].contains("must be named"),
            "{:?}",
            checked.errors
        );
        assert!(checked.errors[1].contains("torn.json` is not valid JSON"));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_run_with_a_broken_sample_is_named() {
        let tmp = std::env::temp_dir().join(format!("kg-baseline-runs-{}", std::process::id()));
        let (good, _) = &check_dir(Path::new("baselines")).files[0];
        let mut file = super::super::file::load(good).unwrap().unwrap();
        let (name, entry) = file.trials.iter_mut().next().unwrap();
        let name = name.clone();
        let mut run = entry.runs[0].clone();
        run.time_samples[0] = -1.0;
        entry.add_run(run);
        let path = tmp.join("some-gpu").join(format!("{}.json", file.suite));
        super::super::file::save(&path, &file).unwrap();
        let checked = check_dir(&tmp);
        assert_eq!(checked.errors.len(), 1, "{:?}", checked.errors);
        assert!(
            checked.errors[0].contains(&format!("trial `{name}`: samples must be positive")),
            "{:?}",
            checked.errors
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
