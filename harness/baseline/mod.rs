//! `BaselineFile`: a suite's stored results on one device, at
//! `baselines/<device>/<suite>.json`. Versioned, keyed by the device fingerprint, written
//! atomically, pretty-printed with sorted keys and one trial per entry so reviews see small
//! diffs. Each entry keeps the runs it was blessed from, with their physical GPU and host
//! (`runs.rs`).

pub mod check;
mod date;
mod entry;
mod file;
mod fingerprint;
pub mod join;
mod json;
mod runs;
mod store;
mod valid;

pub use date::{now_rfc3339, parse_rfc3339, rfc3339, today};
pub use entry::{
    BaselineFile, Entry, Stored, StoredCounters, FORMAT, MAX_COUNTER_READS, OLDEST_FORMAT,
};
pub use file::{load, path, recorded_elsewhere, save, write_atomically, BaselineError, WriteError};
pub use fingerprint::Fingerprint;
pub use runs::{host_name, pool, spread, thin, Origin, Run, MAX_RUNS, MAX_STORED_SAMPLES};
pub use store::{BaselineStore, SuiteBaseline};
pub use valid::validate;

pub use json::pretty as pretty_json;
