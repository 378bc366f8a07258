//! `RunInfo`: what identifies a run besides its results — date, start time, commit, branch,
//! dirty, mode — as its results file records them.

use crate::report::results::Results;

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
            // In UTC, so start times order as text (a results file may carry an offset).
            started: p.started.as_ref().map(|s| {
                crate::baseline::parse_rfc3339(s)
                    .map_or_else(|| s.clone(), crate::baseline::rfc3339)
            }),
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
    results.base.as_ref().map_or("stored", |_| "paired")
}
