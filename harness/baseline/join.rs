//! `join`: the baselines folders of several runners (each blessed with `KERNELGATE_BLESS=add`,
//! each its own process) as one folder. Per device and suite, every trial keeps every run of
//! every folder once — runs both folders started from (the committed baseline) are not counted
//! twice — and the counter reads likewise; an entry is re-pooled from its runs. Nothing is lost
//! silently: a trial whose code differs between folders, or a device's files that disagree, is
//! an error naming both files; runs beyond `MAX_RUNS` are dropped oldest first, and said.

use super::check::check_dir;
use super::entry::{BaselineFile, MAX_COUNTER_READS};
use super::runs::MAX_RUNS;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why folders cannot be joined.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// An input file is unusable: its validator's message.
    #[error("{0}")]
    Input(String),
    /// One trial blessed on different code in two folders: which is the baseline is a choice.
    #[error("`{trial}` was blessed on other code in `{}` than in `{}`: bless both runners at one commit, or join only the folders of that commit", .first.display(), .second.display())]
    OtherCode {
        /// The trial.
        trial: String,
        /// Where it was first seen.
        first: PathBuf,
        /// Where it differs.
        second: PathBuf,
    },
    /// The joined file cannot be written.
    #[error("cannot write `{}`: {message}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// What joining wrote.
#[derive(Debug, Default)]
pub struct Joined {
    /// The files written, with how many trials and runs each holds.
    pub files: Vec<(PathBuf, usize, usize)>,
    /// Runs dropped beyond `MAX_RUNS`, per trial.
    pub dropped: Vec<(String, usize)>,
}

/// Joins the baselines folders `inputs` into `out` (which may be one of them).
pub fn join(out: &Path, inputs: &[PathBuf]) -> Result<Joined, JoinError> {
    let mut by_file: BTreeMap<(String, String), (PathBuf, BaselineFile)> = BTreeMap::new();
    let mut joined = Joined::default();
    for dir in inputs {
        let checked = check_dir(dir, None);
        if let Some(e) = checked.errors.first() {
            return Err(JoinError::Input(e.clone()));
        }
        for (path, file) in checked.files {
            let key = (file.device.slug(), file.suite.clone());
            match by_file.get_mut(&key) {
                None => {
                    by_file.insert(key, (path, file));
                }
                Some((first, into)) => add(into, file, (first, &path), &mut joined)?,
            }
        }
    }
    for (_, (_, file)) in by_file {
        let path = super::file::path(out, &file.device, &file.suite);
        super::file::save(&path, &file).map_err(|e| JoinError::Write {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let runs = file.trials.values().map(|e| e.runs.len()).sum();
        joined.files.push((path, file.trials.len(), runs));
    }
    Ok(joined)
}

/// Adds `other`'s entries to `into`: new trials as they are, runs and counter reads not yet
/// there to the trials both have.
fn add(
    into: &mut BaselineFile,
    other: BaselineFile,
    (first, second): (&Path, &Path),
    joined: &mut Joined,
) -> Result<(), JoinError> {
    for (trial, mut entry) in other.trials {
        let Some(have) = into.trials.get_mut(&trial) else {
            into.trials.insert(trial, entry);
            continue;
        };
        if let (Some(a), Some(b)) = (&have.code, &entry.code) {
            if a.identity != b.identity {
                return Err(JoinError::OtherCode {
                    trial,
                    first: first.to_path_buf(),
                    second: second.to_path_buf(),
                });
            }
        }
        have.ensure_runs();
        entry.ensure_runs();
        let mut runs = have.runs.clone();
        runs.extend(entry.runs.into_iter().filter(|r| !have.runs.contains(r)));
        // Oldest first, as blessing keeps them: by date, then as found.
        runs.sort_by(|a, b| a.date.cmp(&b.date));
        let extra = runs.len().saturating_sub(MAX_RUNS);
        if extra > 0 {
            joined.dropped.push((trial.clone(), extra));
        }
        have.runs = runs.split_off(extra);
        for c in entry.counters {
            if !have.counters.contains(&c) {
                have.counters.push(c);
            }
        }
        let extra = have.counters.len().saturating_sub(MAX_COUNTER_READS);
        have.counters.drain(..extra);
        have.pool();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLUG: &str = "nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0";

    /// A baselines folder `name` holding the committed saxpy baseline, changed by `edit`.
    fn folder(name: &str, edit: impl Fn(&mut BaselineFile)) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kg-join-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let committed = Path::new("baselines").join(SLUG).join("saxpy.json");
        let mut file = super::super::load(&committed).unwrap().unwrap();
        edit(&mut file);
        super::super::save(&dir.join(SLUG).join("saxpy.json"), &file).unwrap();
        dir
    }

    #[test]
    fn every_run_is_kept_once() {
        const TRIAL: &str = "saxpy::vec4::n=16777216";
        let a = folder("a", |f| {
            let e = f.trials.get_mut(TRIAL).unwrap();
            let mut run = e.runs[0].clone();
            run.origin.host = Some("runner-a".into());
            run.date = "2026-11-27".into();
            e.add_run(run);
        });
        let b = folder("b", |f| {
            let e = f.trials.get_mut(TRIAL).unwrap();
            let mut run = e.runs[0].clone();
            run.origin.host = Some("runner-b".into());
            run.date = "2026-11-27".into();
            e.add_run(run);
        });
        let committed = super::super::load(&Path::new("baselines").join(SLUG).join("saxpy.json"))
            .unwrap()
            .unwrap();
        let before = committed.trials[TRIAL].runs.len();
        let out = std::env::temp_dir().join(format!("kg-join-{}-out", std::process::id()));
        let joined = join(&out, &[a.clone(), b]).unwrap();
        assert_eq!(joined.files.len(), 1);
        let file = super::super::load(&joined.files[0].0).unwrap().unwrap();
        let hosts: Vec<Option<&str>> = file.trials[TRIAL]
            .runs
            .iter()
            .map(|r| r.origin.host.as_deref())
            .collect();
        assert_eq!(
            hosts.len(),
            before + 2,
            "the committed runs once, each runner's own: {hosts:?}"
        );
        assert!(hosts.contains(&Some("runner-a")) && hosts.contains(&Some("runner-b")));
        assert_eq!(file.trials.len(), committed.trials.len());
        // A trial blessed on other code in one folder: refused, naming both files.
        let c = folder("c", |f| {
            let e = f.trials.get_mut(TRIAL).unwrap();
            if let Some(code) = e.code.as_mut() {
                code.identity = "0".repeat(64);
            }
        });
        let e = join(&out, &[a, c]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("`{TRIAL}` was blessed on other code in")),
            "{e}"
        );
    }
}
