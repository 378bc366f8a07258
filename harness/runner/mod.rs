//! `Runner`: schedule, execute, judge — nothing else. Every selected trial runs first, through
//! an [`Executor`] (GPU work one trial at a time per GPU); then the gate decides all of them
//! together (its false-discovery-rate correction needs every p-value), re-measuring
//! inconclusive ones through the same executor; then baselines are blessed when asked. The
//! result is one typed [`TrialRecord`] per trial, which every reporter renders.
//!
//! The commands that drive it (`run`, `lint`, `calibrate`, ...) live in `cli/`.

#![deny(clippy::too_many_lines)]

mod attribute;
mod bless;
mod code;
mod commands;
mod count;
mod executor;
mod identical;
mod judge;
mod paired;
mod record;
mod run;
mod sass;
mod schedule;
#[cfg(test)]
mod tests;
mod trial;

pub use crate::plan::{plan, Kind, Planned};
pub use commands::commands;
pub use executor::{Executor, Measured, Outcome, TrialSpec};
pub use record::{limit_breaches, memory_growth, resource_changes};
pub use run::{units, Progress, RunReport, Runner, BLESS_UNITS, TICK_SECONDS, UNITS};
pub use sass::{kernel_diffs, sass_listings, Sided};
