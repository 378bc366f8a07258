//! `Results::load` and `Results::save`: reading a results file — its format checked, files
//! from before `ignored` was a field moved forward, every value validated
//! ([`super::validate`]) — and writing one atomically; and `ResultsError`, why a results
//! file cannot be read, joined or written.

use super::results::Results;
use std::path::Path;

use super::results::{FORMAT, OLDEST_FORMAT};

/// Files written before `ignored` was a field kept an ignored trial's reason in `message`
/// (with every other trial's prose, which reporters now render from the typed record): move it.
fn keep_ignored_reasons(mut value: serde_json::Value) -> serde_json::Value {
    if let Some(trials) = value.get_mut("trials").and_then(|t| t.as_array_mut()) {
        for t in trials.iter_mut().filter_map(|t| t.as_object_mut()) {
            let message = t.remove("message");
            let ignored = t.get("status").and_then(|s| s.as_str()) == Some("ignored");
            if let (Some(m), true, false) = (message, ignored, t.contains_key("ignored")) {
                t.insert("ignored".into(), m);
            }
        }
    }
    value
}

/// The trials whose verdict does not say which comparison it is about (files written before
/// `basis` was recorded), by index.
fn without_basis(value: &serde_json::Value) -> Vec<usize> {
    let trials = value.get("trials").and_then(|t| t.as_array());
    trials
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, t)| {
            t.get("verdict")
                .and_then(|v| v.as_object())
                .is_some_and(|v| !v.contains_key("basis"))
        })
        .map(|(i, _)| i)
        .collect()
}

/// A verdict of a file that did not record its basis, about the speedup where that is the
/// comparison its label agrees with and the time's does not (the gate decided about the speedup
/// when the reference slowed as much: `gate::combine`); so every report prints the interval the
/// label is about.
fn infer_basis(t: &mut super::results::TrialRecord) {
    let (max_slowdown, _) = super::reading::stored_threshold(t);
    let (Some(v), Some(_)) = (t.verdict.as_mut(), &t.measurement) else {
        return;
    };
    let Some(s) = v.speedup else { return };
    if !v.verdict.agrees(&v.time, max_slowdown) && v.verdict.agrees(&s, max_slowdown) {
        v.basis = crate::gate::Basis::Speedup;
    }
}

impl Results {
    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<(), ResultsError> {
        let value = serde_json::to_value(self).map_err(crate::baseline::WriteError::from)?;
        crate::baseline::write_atomically(path, crate::baseline::pretty_json(&value).as_bytes())?;
        Ok(())
    }

    /// Reads a results file, checking its format.
    pub fn load(path: &Path) -> Result<Results, ResultsError> {
        let path_buf = || path.to_path_buf();
        let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Read {
            path: path_buf(),
            source,
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| ResultsError::NotJson {
                path: path_buf(),
                source,
            })?;
        match value.get("format").and_then(|f| f.as_u64()) {
            Some(f) if (OLDEST_FORMAT as u64..=FORMAT as u64).contains(&f) => {
                let unsaid = without_basis(&value);
                let mut results: Results = serde_json::from_value(keep_ignored_reasons(value))
                    .map_err(|source| ResultsError::NotResults {
                        path: path_buf(),
                        source,
                    })?;
                super::validate::validate(&results).map_err(|problem| ResultsError::Invalid {
                    path: path_buf(),
                    problem,
                })?;
                for i in unsaid {
                    infer_basis(&mut results.trials[i]);
                }
                Ok(results)
            }
            Some(found) => Err(ResultsError::Format {
                path: path_buf(),
                found,
            }),
            None => Err(ResultsError::NoFormat { path: path_buf() }),
        }
    }
}

/// Why results files cannot be read, joined or written; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file cannot be read.
    #[error("cannot read `{}`: {source}", .path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// Not JSON.
    #[error("`{}` is not valid JSON: {source}", .path.display())]
    NotJson {
        /// The file.
        path: std::path::PathBuf,
        /// The parser's reason.
        source: serde_json::Error,
    },
    /// JSON of this format, but not results.
    #[error("`{}` is not a kernelgate results file: {source}", .path.display())]
    NotResults {
        /// The file.
        path: std::path::PathBuf,
        /// The parser's reason.
        source: serde_json::Error,
    },
    /// Parsed, but a value no command can use: the place, and what to write.
    #[error("`{}`: {problem} (a results file is written by kernelgate: run again to make a new one, or restore it)", .path.display())]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// The place and what is wrong there.
        problem: crate::problems::Problem,
    },
    /// Another format.
    #[error("`{}` is results format {found}; this kernelgate reads formats {OLDEST_FORMAT} to {FORMAT} (use the kernelgate that wrote it)", .path.display())]
    Format {
        /// The file.
        path: std::path::PathBuf,
        /// Its format.
        found: u64,
    },
    /// No `format` at all.
    #[error("`{}` is not a kernelgate results file (no `format`)", .path.display())]
    NoFormat {
        /// The file.
        path: std::path::PathBuf,
    },
    /// Merging: no file given.
    #[error("nothing to merge")]
    NothingToMerge,
    /// Merging: a file that is already a pool of GPU models.
    #[error("`{}` is a pool of GPU models already: merge each device's own files", .0.display())]
    Pooled(std::path::PathBuf),
    /// Merging: a trial in two files, or twice in one.
    #[error("trial `{trial}` is {}", match files.as_slice() {
        [one] => format!("twice in `{}`", one.display()),
        many => format!("in {} (two shards given the same k/n, or one run's file twice)",
            many.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(" and ")),
    })]
    TrialTwice {
        /// The trial.
        trial: String,
        /// The file it is twice in, or the two files it is in.
        files: Vec<std::path::PathBuf>,
    },
    /// Merging: files of different runs (modes or bases, commits, suite revisions, shard counts).
    #[error("`{}` and `{}` are not the files of one run: they {what}", .first.display(), .other.display())]
    OtherRun {
        /// The first file.
        first: std::path::PathBuf,
        /// The file that differs from it.
        other: std::path::PathBuf,
        /// How they differ.
        what: String,
    },
    /// Merging: one shard given in two files.
    #[error("shard {shard} is given twice: {}", files.iter().map(|p| format!("`{}`", p.display())).collect::<Vec<_>>().join(", "))]
    ShardTwice {
        /// The shard.
        shard: super::provenance::Shard,
        /// The files that say they are it.
        files: Vec<std::path::PathBuf>,
    },
    /// Merging: shards of the run not given.
    #[error("shard(s) {} of the run{} are missing: give every shard's results file", .0.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "), .1.as_ref().map_or(String::new(), |d| format!(" on {d}")))]
    MissingShards(Vec<super::provenance::Shard>, Option<String>),
    /// The file (or a report made from it) could not be written.
    #[error(transparent)]
    Write(#[from] crate::baseline::WriteError),
}
