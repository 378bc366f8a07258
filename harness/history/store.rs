//! `History`: the run history in one SQLite file (`KERNELGATE_HISTORY=path.sqlite`): one row
//! per run, one per trial of a run with its summary, samples, verdict and whole record.
//!
//! The schema's version is SQLite's `user_version`; opening applies the missing migrations in
//! one immediate transaction, so two shards opening a new file at once migrate it once. Writers
//! use WAL and wait for each other (`busy_timeout`), so concurrent shards lose nothing.

use super::error::HistoryError;
use super::run_info::RunInfo;
use crate::report::results::{Results, Status};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema this kernelgate writes.
pub const SCHEMA_VERSION: u32 = 3;

/// `MIGRATIONS[v]` takes the schema from version `v` to `v + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    r#"
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    date TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    branch TEXT NOT NULL,
    dirty INTEGER NOT NULL,
    mode TEXT NOT NULL,
    kernelgate TEXT NOT NULL,
    device TEXT NOT NULL,
    gpu_uuid TEXT
);
CREATE TABLE trials (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    suite TEXT NOT NULL,
    status TEXT NOT NULL,
    verdict TEXT,
    median REAL,
    low REAL,
    high REAL,
    max_slowdown REAL,
    samples TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE INDEX trials_by_name ON trials(name, run_id);
"#,
    // 2: when each run started (RFC 3339; NULL for runs imported before), and each timed
    // trial's regime, so graph and cold medians are never one trend (read back from the
    // stored record for the runs already there).
    r#"
ALTER TABLE runs ADD COLUMN started TEXT;
ALTER TABLE trials ADD COLUMN regime TEXT;
UPDATE trials SET regime = json_extract(record, '$.measurement.regime');
"#,
    // 3: each run's results digest (SHA-256 of the results as stored), so a run is stored once
    // (NULL for runs appended before: those are matched by commit, start time and device).
    r#"
ALTER TABLE runs ADD COLUMN digest TEXT;
CREATE UNIQUE INDEX runs_by_digest ON runs(digest);
"#,
];

/// How long a writer waits for another (a shard appending its run) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// One stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Row id, in insertion order.
    pub id: i64,
    /// What identifies it.
    pub info: RunInfo,
    /// The device's fingerprint, described (`no GPU` when none).
    pub device: String,
    /// The physical GPU, when known.
    pub gpu_uuid: Option<String>,
}

impl Run {
    /// The run for a person: its commit's first `n` characters, or when it ran where the
    /// commit is unknown.
    pub fn short(&self, n: usize) -> String {
        if self.info.commit == "unknown" {
            self.info.when().to_string()
        } else {
            self.info.commit.chars().take(n).collect()
        }
    }
}

/// One trial in one run: its median, or that it failed without one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Point {
    /// The run's id.
    pub run: i64,
    /// The trial.
    pub name: String,
    /// The suite.
    pub suite: String,
    /// Median time, seconds; `None` for a failure that left no time (a wrong output, a fault).
    pub median: Option<f64>,
    /// Whether the trial failed that run (a regression, a wrong output, a limit, ...).
    pub failed: bool,
    /// The timing regime (`cold`, `graph`), when timed.
    pub regime: Option<String>,
    /// The gate's verdict that run, when it had a baseline.
    pub verdict: Option<String>,
    /// The suite's `max_slowdown` that run.
    pub max_slowdown: f64,
    /// Its time samples, seconds (empty where none were stored).
    pub samples: Vec<f64>,
    /// Its per-round speedups over the reference (empty for the reference, or where none).
    pub speedups: Vec<f64>,
    /// Whether the run's gate found its times unreliable (throttled or shared rounds): never
    /// judged, never a baseline for another run.
    pub unreliable: bool,
}

/// An open history file.
pub struct History {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
}

impl History {
    /// Opens (creating when absent) and migrates the history at `path`.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        let sql = sqlite(path);
        let mut conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // Switching a new file to WAL takes an exclusive lock, and SQLite answers BUSY at once
        // there instead of calling the busy handler (seen: 6 writers opening one new file at
        // once); so wait for the other writer here, as busy_timeout does elsewhere.
        let start = std::time::Instant::now();
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && start.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(sql(e)),
            }
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let found = schema_version(&tx, path, ": nothing was written to it")?;
        for (v, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            tx.execute_batch(migration).map_err(sql)?;
            tx.pragma_update(None, "user_version", v as u32 + 1)
                .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(History {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens an existing history to read it, without creating or migrating anything
    /// (`kernelgate lint FILE`); its schema must be one this kernelgate knows.
    pub fn open_read_only(path: &Path) -> Result<History, HistoryError> {
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(sqlite(path))?;
        let found = schema_version(&conn, path, "")?;
        if found < SCHEMA_VERSION {
            return Err(HistoryError::Invalid {
                path: path.to_path_buf(),
                problem: format!("schema version {found} is older than {SCHEMA_VERSION} (any `kernelgate history` command migrates it)"),
            });
        }
        Ok(History {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Every row the query `sql` with `params` returns, each read by `row`.
    pub(super) fn rows<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        row: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, HistoryError> {
        let mut stmt = self.conn.prepare(sql).map_err(sqlite(&self.path))?;
        let rows = stmt.query_map(params, row).map_err(sqlite(&self.path))?;
        rows.collect::<Result<_, _>>().map_err(sqlite(&self.path))
    }

    /// Refuses `results` where their run is stored already ([`already`]), naming the results
    /// `file` they were read from.
    pub fn refuse_stored(
        &self,
        results: &Results,
        info: &RunInfo,
        file: &Path,
    ) -> Result<(), HistoryError> {
        let digest = digest(results);
        already(&self.conn, &self.path, &digest, results, info, Some(file))
    }

    /// Appends one run and every trial of it, in one transaction; returns the run's id. A run
    /// already stored ([`already`]) is refused, naming it.
    pub fn append(&mut self, results: &Results, info: &RunInfo) -> Result<i64, HistoryError> {
        let path = self.path.clone();
        let sql = sqlite(&path);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let device = results.described_device();
        let uuid = results.device_info.as_ref().and_then(|d| d.uuid.clone());
        let digest = digest(results);
        // Inside the transaction: two writers of one run store it once.
        already(&tx, &path, &digest, results, info, None)?;
        tx.execute(
            "INSERT INTO runs (date, commit_sha, branch, dirty, mode, kernelgate, device, gpu_uuid, started, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![info.date, info.commit, info.branch, info.dirty, info.mode, results.kernelgate, device, uuid, info.started, digest],
        )
        .map_err(sql)?;
        let run = tx.last_insert_rowid();
        for t in &results.trials {
            let m = t.measurement.as_ref();
            let status = match t.status {
                Status::Passed => "passed",
                Status::Failed => "failed",
                Status::Ignored => "ignored",
            };
            tx.execute(
                "INSERT INTO trials (run_id, name, suite, status, verdict, median, low, high, max_slowdown, samples, record, regime) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    run,
                    t.name,
                    t.suite,
                    status,
                    t.verdict.map(|v| v.verdict.to_string()),
                    m.map(|m| m.time.median),
                    m.map(|m| m.time.low),
                    m.map(|m| m.time.high),
                    m.map(|m| m.max_slowdown),
                    json(&m.map(|m| &m.time_samples)),
                    json(t),
                    m.map(|m| m.regime.to_string()),
                ],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(run)
    }

    /// Every run, by start time (by date for runs that recorded none), then by insertion;
    /// [`super::order`] puts them in commit order where the repository knows the commits.
    pub fn runs(&self) -> Result<Vec<Run>, HistoryError> {
        let sql = "SELECT id, date, commit_sha, branch, dirty, mode, device, gpu_uuid, started FROM runs ORDER BY COALESCE(started, date), id";
        self.rows(sql, [], |r| {
            Ok(Run {
                id: r.get(0)?,
                info: RunInfo {
                    date: r.get(1)?,
                    commit: r.get(2)?,
                    branch: r.get(3)?,
                    dirty: r.get(4)?,
                    mode: r.get(5)?,
                    started: r.get(8)?,
                },
                device: r.get(6)?,
                gpu_uuid: r.get(7)?,
            })
        })
    }

    /// Every trial whose name contains `filter` that was timed or failed (ignored trials and
    /// untimed passes, such as compile trials, are left out).
    pub fn points(&self, filter: &str) -> Result<Vec<Point>, HistoryError> {
        let sql = "SELECT run_id, name, suite, median, verdict, max_slowdown, status, regime, samples, json_extract(record, '$.measurement.speedup_samples'), json_extract(record, '$.gate.kind') FROM trials WHERE (median IS NOT NULL OR status = 'failed') AND instr(name, ?1) > 0 ORDER BY name, run_id";
        self.rows(sql, [filter], |r| {
            Ok(Point {
                run: r.get(0)?,
                name: r.get(1)?,
                suite: r.get(2)?,
                median: r.get(3)?,
                verdict: r.get(4)?,
                max_slowdown: r.get::<_, Option<f64>>(5)?.unwrap_or(0.0),
                failed: r.get::<_, String>(6)? == "failed",
                regime: r.get(7)?,
                samples: list(r.get(8)?).unwrap_or_default(),
                speedups: list(r.get(9)?).unwrap_or_default(),
                unreliable: r.get::<_, Option<String>>(10)?.as_deref() == Some("unreliable"),
            })
        })
    }
}

/// The tables of the database `conn`, by name.
pub(super) fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    names.collect()
}

/// What SQLite's errors on the history at `path` are.
pub(super) fn sqlite(path: &Path) -> impl Fn(rusqlite::Error) -> HistoryError + Copy + '_ {
    |source| HistoryError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// The schema version of the history at `path`: an error when it is newer than this kernelgate
/// knows, or when the file has tables while no kernelgate schema — a new history has none, so
/// it is someone else's SQLite file (`after`: what that message adds).
fn schema_version(conn: &Connection, path: &Path, after: &str) -> Result<u32, HistoryError> {
    let found: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(sqlite(path))?;
    if found > SCHEMA_VERSION {
        return Err(HistoryError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    let other = tables(conn).map_err(sqlite(path))?;
    if found == 0 && !other.is_empty() {
        return Err(HistoryError::Invalid {
            path: path.to_path_buf(),
            problem: format!(
                "it is an SQLite file of something else (tables {}), not a kernelgate history{after}",
                other.join(", ")
            ),
        });
    }
    Ok(found)
}

/// An error where the history at `path` holds the run of `results` already (the same results
/// `digest`, or for runs stored before digests the same commit, start time and device), naming
/// the stored run by its id, commit and start, and the results `file` being imported.
fn already(
    conn: &Connection,
    path: &Path,
    digest: &str,
    results: &Results,
    info: &RunInfo,
    file: Option<&Path>,
) -> Result<(), HistoryError> {
    let device = results.described_device();
    let stored = conn.query_row(
        "SELECT id, commit_sha, COALESCE(started, date) FROM runs WHERE digest = ?1 OR (digest IS NULL AND started IS NOT NULL AND started = ?2 AND commit_sha = ?3 AND device = ?4) ORDER BY id LIMIT 1",
        params![digest, info.started, info.commit, device],
        |r| Ok(HistoryError::AlreadyStored {
            path: path.to_path_buf(),
            file: file.map(Path::to_path_buf),
            run: r.get(0)?,
            commit: r.get(1)?,
            when: r.get(2)?,
        }),
    );
    stored.optional().map_err(sqlite(path))?.map_or(Ok(()), Err)
}

/// What identifies a run's results: the SHA-256 of their JSON.
fn digest(results: &Results) -> String {
    crate::report::provenance::sha256(&serde_json::to_vec(results).unwrap_or_default())
}

/// A stored JSON list of numbers (`null`, absent or not a list: none).
fn list(text: Option<String>) -> Option<Vec<f64>> {
    text.and_then(|t| serde_json::from_str::<Option<Vec<f64>>>(&t).ok().flatten())
}

/// A value as JSON (plain data; a value JSON cannot hold is stored as `null`).
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history written by the first schema opens with its runs and trials kept, each timed
    /// trial's regime read back from its stored record.
    #[test]
    fn version_1_migrates() {
        let dir = std::env::temp_dir().join(format!("kg-migrate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("v1.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.execute_batch(
                r#"INSERT INTO runs VALUES (1, '2026-11-01', 'abc', 'main', 0, 'stored', '0.1.0', 'H200', NULL);
                   INSERT INTO trials VALUES (1, 's::k::n=1', 's', 'passed', 'unchanged', 1e-6, 1e-6, 1e-6, 0.03, '[1e-6]', '{"measurement": {"regime": "graph"}}');
                   INSERT INTO trials VALUES (1, 's::compile', 's', 'passed', NULL, NULL, NULL, NULL, NULL, 'null', '{"measurement": null}');"#,
            )
            .unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
        }
        let h = History::open(&path).unwrap();
        let runs = h.runs().unwrap();
        assert_eq!((runs.len(), runs[0].info.started.clone()), (1, None));
        let points = h.points("").unwrap();
        assert_eq!(points.len(), 1, "the compile trial is not a point");
        assert_eq!(points[0].regime.as_deref(), Some("graph"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
