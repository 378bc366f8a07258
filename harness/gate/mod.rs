//! `gate`: pure policy over samples — the set of verdicts and what each means ([`semantics`]),
//! the [`Verdict`] of one trial against its baseline or base
//! ([`verdict`]: the two-sample and paired tests, Benjamini–Hochberg over the run, the
//! `max_slowdown` rule) and the one re-measure rule ([`settle`]). It knows nothing of kernels,
//! files or the GPU, and is tested with synthetic samples.

#![deny(clippy::too_many_lines)]

mod semantics;
mod settle;
mod verdict;

pub use semantics::{combine, Basis, Comparison, Reading, Strictness, Verdict, FDR};
pub use settle::{
    settle, settle_again, Confirm, Decision, Evidence, Measure, Measures, Recording,
    REMEASURE_EFFORT,
};
pub use verdict::{compare_paired, decide, percent, with_spread, GateInput, TrialVerdict};
