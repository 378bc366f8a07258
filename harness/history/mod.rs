//! `History`: every run appended to SQLite (`KERNELGATE_HISTORY=path.sqlite`, or
//! `kernelgate history import RESULTS.json...`), trends per trial, and drift — level shifts
//! found by change-point detection that no single merge's gate crossed.
//!
//! `kernelgate history [FILTER]` prints a table per trial and regime and writes an HTML trend
//! page; `kernelgate history --check` exits 1 when a trial's level moved beyond `max_slowdown`
//! since a chosen commit or date, naming the commits between which it moved. Each run keeps
//! the commit, branch and start time its results file records ([`RunInfo::of`]); runs are
//! read in commit order where the repository knows the commit ([`order`]).

pub mod check;
mod cli;
pub mod drift;
mod error;
pub mod order;
mod run_info;
pub mod store;
mod trend;
mod valid;

pub use cli::{command, HistoryArgs};
pub use error::HistoryError;
pub use run_info::{mode_of, RunInfo};
pub use store::{History, Point, Run, SCHEMA_VERSION};

use crate::report::results::Results;
use std::path::Path;

/// Appends a finished run to the history at `path` (the runner's `KERNELGATE_HISTORY`), with
/// the commit, branch and start time its results record.
pub fn append(path: &Path, results: &Results) -> Result<(), HistoryError> {
    History::open(path)
        .and_then(|mut h| h.append(results, &RunInfo::of(results)))
        .map(|_| ())
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
            identical: None,
            sass: Vec::new(),
            sass_note: None,
            undecided: Vec::new(),
            pool: Vec::new(),
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
