//! `History`: every run appended to SQLite (`KERNELGATE_HISTORY=path.sqlite`, or
//! `kernelgate history import RESULTS.json...`), trends per trial, and drift — level shifts
//! found by change-point detection that no single merge's gate crossed.
//!
//! `kernelgate history [FILTER]` prints a table per trial and writes an HTML trend page;
//! `kernelgate history --check` exits 1 when a trial's level moved beyond `max_slowdown`
//! since a chosen commit or date, naming the commits between which it moved.

mod cli;
pub mod drift;
mod error;
mod run_info;
pub mod store;
mod trend;

pub use cli::{command, EXIT_BAD_INPUT, EXIT_DRIFT};
pub use error::HistoryError;
pub use run_info::{mode_of, RunInfo};
pub use store::{History, Point, Run, SCHEMA_VERSION};

use std::path::Path;

/// Appends a finished run to the history at `path` (the runner's `KERNELGATE_HISTORY`).
pub fn append(path: &Path, results: &crate::report::results::Results) -> Result<(), HistoryError> {
    let mut info = RunInfo::here(&results.date);
    info.mode = mode_of(results).into();
    History::open(path)
        .and_then(|mut h| h.append(results, &info))
        .map(|_| ())
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
