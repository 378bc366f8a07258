//! `Shared`: what the processes of one nextest run share — a lock file, and `run.json`, the
//! run's state: running (in which process), finished (with every trial's record), or stopped
//! (and why). The first process to take the lock runs the trials; the rest wait for the lock
//! and read the state.

use super::invocation::NextestRun;
use crate::report::results::Results;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often a waiting process tries the lock again.
const POLL: Duration = Duration::from_millis(50);

/// Run folders older than this are removed by the next run that runs trials.
const KEEP: Duration = Duration::from_secs(24 * 3600);

/// The run's state, in `run.json`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum State {
    /// A process is running every trial.
    Running {
        /// Its process id.
        pid: u32,
        /// The trial nextest started it for.
        trial: String,
        /// When it started, seconds since the Unix epoch.
        started: f64,
    },
    /// Every trial ran, was judged and reported.
    Finished {
        /// The process that ran them.
        pid: u32,
        /// The trial nextest started it for.
        trial: String,
        /// When it started, seconds since the Unix epoch.
        started: f64,
        /// When it finished.
        finished: f64,
        /// Every trial's record.
        results: Box<Results>,
    },
    /// The run stopped before any trial ran.
    Stopped {
        /// Why.
        message: String,
    },
}

/// What one process of the run gets: every trial's record, and, in the process that ran
/// them, what running them returned.
#[derive(Debug)]
pub struct Shared<T> {
    /// Every trial's record, as `run.json` holds it.
    pub results: Results,
    /// What the run returned, in the process that ran the trials; `None` in the others.
    pub ran: Option<T>,
    /// One line for stderr: which process ran the trials, and when.
    pub note: String,
}

/// Why a process of a nextest run cannot answer for its trial (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The run's folder, lock or state file cannot be used.
    #[error("cannot share the nextest run through `{path}`: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The process running the trials held the lock past the wait limit.
    #[error("waited {waited} s for process {pid}, which runs this nextest run's trials (nextest started it for `{trial}`); it is still running them, or hung (see that test's output)")]
    TimedOut {
        /// Seconds waited.
        waited: u64,
        /// The process running the trials.
        pid: u32,
        /// The trial it was started for.
        trial: String,
    },
    /// The process that ran the trials died before writing their results.
    #[error("process {pid}, which ran this nextest run's trials (nextest started it for `{trial}`), ended without writing their results (see that test's output); no trial is run twice in one nextest run, so run again")]
    Abandoned {
        /// The process.
        pid: u32,
        /// The trial it was started for.
        trial: String,
    },
    /// The run stopped before any trial ran.
    #[error("{message}")]
    Stopped {
        /// Why, as the process that tried to run the trials said.
        message: String,
    },
    /// `run.json` is not a state this kernelgate wrote.
    #[error("`{path}` cannot be read: {message} (remove that folder and run again)")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The parse error.
        message: String,
    },
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `HH:MM:SS.mmm` (UTC) of a time in seconds since the Unix epoch.
pub fn clock(t: f64) -> String {
    let at = chrono::DateTime::from_timestamp_millis((t * 1000.0).round() as i64);
    at.unwrap_or_default().format("%H:%M:%S%.3f").to_string()
}

impl NextestRun {
    fn state_path(&self) -> PathBuf {
        self.dir.join("run.json")
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> StateError + '_ {
        let path = path.to_path_buf();
        move |source| StateError::Io {
            path: path.clone(),
            source,
        }
    }

    fn read(&self) -> Result<Option<State>, StateError> {
        let path = self.state_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(&path)(e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| StateError::Unreadable {
                path,
                message: e.to_string(),
            })
    }

    fn write(&self, state: &State) -> Result<(), StateError> {
        let path = self.state_path();
        let text = serde_json::to_string(state).map_err(|e| StateError::Unreadable {
            path: path.clone(),
            message: e.to_string(),
        })?;
        crate::baseline::write_atomically(&path, text.as_bytes())
            .map_err(|e| self.io(&path)(std::io::Error::other(e.to_string())))
    }

    /// Takes the run's lock, waiting at most `wait`.
    fn lock(&self, wait: Duration) -> Result<File, StateError> {
        std::fs::create_dir_all(&self.dir).map_err(self.io(&self.dir))?;
        let path = self.dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(self.io(&path))?;
        let start = Instant::now();
        loop {
            // `flock` on Unix (std's `File::try_lock`, stable since Rust 1.89): the lock goes
            // with the open file and is freed when the process ends, however it ends.
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(TryLockError::Error(e)) => return Err(self.io(&path)(e)),
                Err(TryLockError::WouldBlock) if start.elapsed() < wait => std::thread::sleep(POLL),
                Err(TryLockError::WouldBlock) => {
                    let (pid, trial) = match self.read() {
                        Ok(Some(State::Running { pid, trial, .. })) => (pid, trial),
                        _ => (0, "(unknown)".into()),
                    };
                    return Err(StateError::TimedOut {
                        waited: start.elapsed().as_secs(),
                        pid,
                        trial,
                    });
                }
            }
        }
    }

    /// This process's part in the run, for `trial` (the trial nextest started it for): the
    /// first process to take the lock calls `run` — which runs every trial, judges, reports
    /// and blesses, and returns the records — and writes them to `run.json`; every process
    /// then answers from `run.json`. Others wait for the lock at most `wait`.
    pub fn share<T, E: std::fmt::Display>(
        &self,
        trial: &str,
        wait: Duration,
        run: impl FnOnce() -> Result<(Results, T), E>,
    ) -> Result<Shared<T>, StateError> {
        let lock = self.lock(wait)?;
        let ran = match self.read()? {
            Some(State::Running { pid, trial, .. }) => {
                return Err(StateError::Abandoned { pid, trial })
            }
            Some(State::Stopped { message }) => return Err(StateError::Stopped { message }),
            Some(State::Finished { .. }) => None,
            None => {
                self.prune_old_runs();
                let (pid, started) = (std::process::id(), now());
                let trial = trial.to_string();
                self.write(&State::Running {
                    pid,
                    trial: trial.clone(),
                    started,
                })?;
                match run() {
                    Ok((results, ran)) => {
                        self.write(&State::Finished {
                            pid,
                            trial,
                            started,
                            finished: now(),
                            results: Box::new(results),
                        })?;
                        Some(ran)
                    }
                    Err(e) => {
                        let message = e.to_string();
                        self.write(&State::Stopped {
                            message: message.clone(),
                        })?;
                        return Err(StateError::Stopped { message });
                    }
                }
            }
        };
        // Every process, the one that ran the trials too, answers from the same bytes.
        let Some(State::Finished {
            pid,
            trial: first,
            started,
            finished,
            results,
        }) = self.read()?
        else {
            return Err(StateError::Unreadable {
                path: self.state_path(),
                message: "the run is not finished".into(),
            });
        };
        drop(lock);
        let note = match ran {
            Some(_) => format!(
                "kernelgate: nextest run {}: this process ran all {} trials of the run, {}–{} UTC; the others answer from {}",
                self.id,
                results.trials.len(),
                clock(started),
                clock(finished),
                self.state_path().display()
            ),
            None => format!(
                "kernelgate: nextest run {}: `{trial}` answered at {} UTC from the run of process {pid} (started for `{first}`, {}–{} UTC)",
                self.id,
                clock(now()),
                clock(started),
                clock(finished)
            ),
        };
        Ok(Shared {
            results: *results,
            ran,
            note,
        })
    }

    /// Removes the folders of runs older than [`KEEP`], so the target directory does not
    /// collect one folder per run forever.
    fn prune_old_runs(&self) {
        let Some(parent) = self.dir.parent() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(parent) else {
            return;
        };
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > KEEP);
            if old && entry.path() != self.dir {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests;
