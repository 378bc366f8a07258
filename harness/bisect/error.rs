//! `BisectError` and `Broken`: why a bisect cannot start, and why one commit of its range
//! cannot be used (it is skipped, and named with the reason).

use crate::code::CodeError;
use crate::paired::PairedError;
use std::sync::Arc;

/// Why a bisect cannot start: each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// A revision, or the repository, cannot be used.
    #[error(transparent)]
    Git(#[from] PairedError),
    /// `good` is not an ancestor of `bad`.
    #[error("`{good}` is not an ancestor of `{bad}`: name a good commit that `{bad}` descends from (bisect follows first parents from good to bad)")]
    NotAncestor {
        /// As given.
        good: String,
        /// As given.
        bad: String,
    },
    /// The trial cannot be used at `good` or `bad`.
    #[error("at {which} ({commit}): {why}")]
    Unusable {
        /// `good` or `bad`.
        which: &'static str,
        /// The commit.
        commit: String,
        /// Why.
        why: Broken,
    },
}

/// Why one commit cannot be used: it is skipped.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Broken {
    /// Its suites cannot be taken out of git, or do not load.
    #[error(transparent)]
    Suites(#[from] PairedError),
    /// It has no such trial.
    #[error("no trial `{0}` at this commit")]
    NoTrial(String),
    /// A kernel of the trial's suite does not compile, or its module cannot be read.
    #[error("{0}")]
    Code(Arc<CodeError>),
}
