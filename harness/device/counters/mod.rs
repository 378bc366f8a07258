//! `Profiler`: hardware counters of one operation's launches, read through CUPTI's range
//! profiler with user replay, in the worker process (no `ncu` subprocess).
//!
//! - `activity`: finding and loading `libcupti` ([`cupti_missing`]), and CUPTI's kernel records,
//!   each launch's GPU time, name and resources ([`Activity`]);
//! - `base`: CUPTI's results as [`CounterError`]s, its parameter structs, the current context;
//! - `profiler`: the metrics configured for this chip on the host ([`Profiler`]);
//! - `session`: the profiler enabled on the context, profiling operations ([`Session`]).
//!
//! One [`Profiler`] per worker: the metrics are configured once on the host (profiler host
//! API: chip name + counter availability → config image); [`Profiler::enable`] enables the
//! range profiler on the context for the rest of the process, and each
//! [`Session::profile_ops`] runs as many passes as the metrics need — each pass is, per
//! operation, `prepare` (outside the range: restore inputs, flush and clean L2) then `launch`
//! inside its own user range — then decodes and evaluates.

mod activity;
mod base;
mod profiler;
mod session;

pub use activity::{cupti_missing, per_sample, Activity, KernelRecord};
pub use base::CounterError;
pub use profiler::Profiler;
pub use session::{Closures, Profiled, Session};
