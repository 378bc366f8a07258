//! `HistoryError`: what went wrong with a history (SQLite, a newer schema, the command line).

use std::path::PathBuf;

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
    #[error("history `{}` has schema version {found}; this kernelgate knows up to {known} (use the kernelgate that wrote it, or a newer one)", path.display())]
    NewerSchema {
        /// The history file.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// The newest this kernelgate knows (`SCHEMA_VERSION`).
        known: u32,
    },
    /// A value the history commands cannot use: the place, and what is wrong.
    #[error("history `{}`: {problem} (a history is written by kernelgate: restore it from a backup, or start a new one with `kernelgate history import`)", path.display())]
    Invalid {
        /// The history file.
        path: PathBuf,
        /// The place and what is wrong there.
        problem: String,
    },
    /// A results file to import could not be read.
    #[error(transparent)]
    Results(#[from] crate::report::results_file::ResultsError),
    /// The trend page could not be written.
    #[error(transparent)]
    Write(#[from] crate::baseline::WriteError),
    /// The command line.
    #[error("{0}")]
    Usage(String),
    /// The run is in the history already.
    #[error("history `{}` holds {} already, as run {run} (commit {commit}, {when}): a run is stored once{}", path.display(), file.as_ref().map_or("this run".into(), |f| format!("the run of `{}`", f.display())), if file.is_some() { "; nothing was imported" } else { "" })]
    AlreadyStored {
        /// The history file.
        path: PathBuf,
        /// The results file being imported, where one was.
        file: Option<PathBuf>,
        /// The stored run's id.
        run: i64,
        /// Its commit.
        commit: String,
        /// When it started (or its date).
        when: String,
    },
    /// `--since` names no run.
    #[error("no run in the history matches `--since {0}` (give a commit prefix or a date such as 2026-11-01)")]
    UnknownSince(String),
}
