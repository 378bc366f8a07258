//! `History`: every run appended to SQLite (`KERNELGATE_HISTORY=path.sqlite`, or
//! `kernelgate history import RESULTS.json...`), trends per trial, and drift — level shifts
//! found by change-point detection that no single merge's gate crossed.
//!
//! `kernelgate history [FILTER]` prints a table per trial and regime and writes an HTML trend
//! page; `kernelgate history --check` exits 1 when a trial's level moved beyond `max_slowdown`
//! since a chosen commit or date, naming the commits between which it moved. Each run keeps
//! the commit, branch and start time its results file records ([`RunInfo::of`]); runs are
//! read in commit order where the repository knows the commit ([`order`]).

mod cli;
pub mod drift;
pub mod order;
pub mod store;
mod trend;

pub use cli::command;
pub use store::{History, Point, Run, SCHEMA_VERSION};

use crate::report::results::Results;
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
    /// When it started (RFC 3339), where its results file recorded it.
    pub started: Option<String>,
    /// The commit measured (`unknown` when its results file recorded none).
    pub commit: String,
    /// Its branch (`unknown` when not recorded).
    pub branch: String,
    /// Whether the work tree had uncommitted changes to tracked files.
    pub dirty: bool,
    /// `stored` (against stored baselines) or `paired` (against a base revision in the run).
    pub mode: String,
}

impl RunInfo {
    /// What `results` records about its run — never the importing checkout's commit.
    pub fn of(results: &Results) -> RunInfo {
        let p = &results.provenance;
        RunInfo {
            date: results.date.clone(),
            started: p.started.clone(),
            commit: p.commit.clone().unwrap_or_else(|| "unknown".into()),
            branch: p.branch.clone().unwrap_or_else(|| "unknown".into()),
            dirty: p.dirty.unwrap_or(false),
            mode: mode_of(results).into(),
        }
    }

    /// When it ran, as precisely as known: the start time, else the date.
    pub fn when(&self) -> &str {
        self.started.as_deref().unwrap_or(&self.date)
    }
}

/// `paired` for a run judged against a base revision (`KERNELGATE_BASE`), `stored` otherwise.
pub fn mode_of(results: &Results) -> &'static str {
    if results.base.is_some() {
        "paired"
    } else {
        "stored"
    }
}

/// Appends a finished run to the history at `path` (the runner's `KERNELGATE_HISTORY`), with
/// the commit, branch and start time its results record.
pub fn append(path: &Path, results: &Results) -> Result<(), String> {
    History::open(path)
        .and_then(|mut h| h.append(results, &RunInfo::of(results)))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::BaseRevision;

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
        results.provenance.commit = Some("feedbeef".into());
        results.provenance.started = Some("2026-11-22T09:00:01Z".into());
        let dir = std::env::temp_dir().join(format!("kg-history-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.sqlite");
        append(&db, &results).unwrap();
        let runs = History::open(&db).unwrap().runs().unwrap();
        assert_eq!(runs[0].info.mode, "paired");
        assert_eq!(
            runs[0].info.commit, "feedbeef",
            "the file's commit, not this checkout's"
        );
        assert_eq!(
            runs[0].info.started.as_deref(),
            Some("2026-11-22T09:00:01Z")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
