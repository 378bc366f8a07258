//! `History`: every run appended to SQLite (`KERNELGATE_HISTORY=path.sqlite`, or
//! `kernelgate history import RESULTS.json...`), trends per trial, and drift — level shifts
//! found by change-point detection that no single merge's gate crossed.
//!
//! `kernelgate history [FILTER]` prints a table per trial and writes an HTML trend page;
//! `kernelgate history --check` exits 1 when a trial's level moved beyond `max_slowdown`
//! since a chosen commit or date, naming the commits between which it moved.

mod cli;
pub mod drift;
pub mod store;
mod trend;

pub use cli::command;
pub use store::{History, Point, Run, SCHEMA_VERSION};

use std::path::{Path, PathBuf};

/// `history --check`: a trial's level moved beyond its threshold.
pub const EXIT_DRIFT: u8 = crate::exit::DRIFT;
/// Bad input: arguments, an unreadable or newer history, an unreadable results file.
pub const EXIT_BAD_INPUT: u8 = crate::exit::BAD_INPUT;

/// What went wrong with a history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// SQLite refused.
    #[error("history `{}`: {source}", path.display())]
    Sqlite {
        /// The history file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// Written by a newer kernelgate.
    #[error("history `{}` has schema version {found}; this kernelgate knows up to {SCHEMA_VERSION} (use the kernelgate that wrote it, or a newer one)", path.display())]
    NewerSchema {
        /// The history file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// A results file to import could not be read.
    #[error("{0}")]
    Results(String),
    /// The command line.
    #[error("{0}")]
    Usage(String),
    /// `--since` names no run.
    #[error("no run in the history matches `--since {0}` (give a commit prefix or a date such as 2026-11-01)")]
    UnknownSince(String),
}

/// What identifies a run besides its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// When it ran (the results file's date).
    pub date: String,
    /// The commit measured (`unknown` outside git).
    pub commit: String,
    /// Its branch.
    pub branch: String,
    /// Whether the work tree had uncommitted changes to tracked files.
    pub dirty: bool,
    /// `stored` (against stored baselines) or `paired` (against a base revision in the run).
    pub mode: String,
}

fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl RunInfo {
    /// The run at `date` in this checkout: commit and branch from `KERNELGATE_COMMIT` /
    /// `KERNELGATE_BRANCH`, else GitHub's variables, else git; `unknown` when none answers.
    pub fn here(date: &str) -> RunInfo {
        let commit = env("KERNELGATE_COMMIT")
            .or_else(|| env("GITHUB_SHA"))
            .or_else(|| git(&["rev-parse", "HEAD"]))
            .unwrap_or_else(|| "unknown".into());
        let branch = env("KERNELGATE_BRANCH")
            .or_else(|| env("GITHUB_HEAD_REF"))
            .or_else(|| env("GITHUB_REF_NAME"))
            .or_else(|| git(&["rev-parse", "--abbrev-ref", "HEAD"]))
            .unwrap_or_else(|| "unknown".into());
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        RunInfo {
            date: date.to_string(),
            commit,
            branch,
            dirty,
            mode: "stored".into(),
        }
    }
}

/// `paired` for a run judged against a base revision (`KERNELGATE_BASE`), `stored` otherwise.
pub fn mode_of(results: &crate::report::results::Results) -> &'static str {
    if results.base.is_some() {
        "paired"
    } else {
        "stored"
    }
}

/// Appends a finished run to the history at `path` (the runner's `KERNELGATE_HISTORY`).
pub fn append(path: &Path, results: &crate::report::results::Results) -> Result<(), String> {
    let mut info = RunInfo::here(&results.date);
    info.mode = mode_of(results).into();
    History::open(path)
        .and_then(|mut h| h.append(results, &info))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::{BaseRevision, Results};

    #[test]
    fn a_paired_run_is_recorded_as_paired() {
        let mut results = Results {
            format: crate::report::results::FORMAT,
            kernelgate: "0.1.0".into(),
            date: "2026-11-22".into(),
            device: None,
            device_info: None,
            trials: Vec::new(),
            totals: None,
            base: None,
            gone: Vec::new(),
            provenance: Default::default(),
        };
        assert_eq!(mode_of(&results), "stored");
        results.base = Some(BaseRevision {
            rev: "origin/main".into(),
            commit: "0123456".into(),
        });
        assert_eq!(mode_of(&results), "paired");
        let dir = std::env::temp_dir().join(format!("kg-history-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.sqlite");
        append(&db, &results).unwrap();
        let runs = History::open(&db).unwrap().runs().unwrap();
        assert_eq!(runs[0].info.mode, "paired");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
