//! `bisect`: `kernelgate bisect <good> <bad> <trial>` — the first commit between `good` and `bad`
//! (first parents) at which a trial regressed, each probed commit timed in paired mode against
//! `good` in one worker; commits whose trial identity matches one already known are decided
//! without timing (no GPU), broken or inconclusive ones skipped.
//!
//! - `search`: the binary search, through the `Probe` trait (tests script one).
//! - `repo`: the commits' suites out of git and each one's trial identity (no GPU).
//! - `gpu`: the real probe: identity from `repo`, timing through the worker pool.
//! - `report`: what the command prints.
//!
//! Every commit is run by the *current* kernelgate: a regression of the harness or the driver
//! is out of its reach.

mod error;
mod gpu;
mod repo;
mod report;
mod search;

pub use error::{BisectError, Broken};
pub use gpu::{timed, GpuProbe};
pub use repo::{Changes, Loaded, Repo};
pub use report::Report;
pub use search::{bisect, Commit, Found, How, Probe, Probed, Stopped, Timed};
