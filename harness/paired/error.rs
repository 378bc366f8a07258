//! `PairedError`: why the base revision of a paired run cannot be used; each says what to run.

use std::path::PathBuf;

/// Why the base revision cannot be used: each says what to run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairedError {
    /// The suites folder is not in a git repository.
    #[error("KERNELGATE_BASE needs git: `{path}` is not inside a git repository (set KERNELGATE_BASE to a folder holding the base's suites instead)")]
    NotARepository {
        /// The suites folder.
        path: PathBuf,
    },
    /// The revision does not name a commit here.
    #[error("KERNELGATE_BASE=`{rev}` is not a commit in this repository ({})", if *.shallow { "this is a shallow clone: `git fetch --deepen=200` or `git fetch --unshallow`, or fetch that commit: `git fetch origin <rev>`" } else { "check the name, or fetch it: `git fetch origin <rev>`" })]
    BadRevision {
        /// The revision as given.
        rev: String,
        /// The clone is shallow (the likely reason).
        shallow: bool,
    },
    /// The suites folder did not exist at the revision.
    #[error("the suites folder `{path}` does not exist at KERNELGATE_BASE=`{rev}` ({commit}); pair against a later revision, or run without KERNELGATE_BASE against stored baselines")]
    NoSuites {
        /// The revision as given.
        rev: String,
        /// Its commit.
        commit: String,
        /// The folder, relative to the repository.
        path: PathBuf,
    },
    /// git or tar failed.
    #[error("KERNELGATE_BASE: {what}")]
    Git {
        /// What failed.
        what: String,
    },
    /// The base's suites do not load.
    #[error("the suites at KERNELGATE_BASE=`{rev}` do not load:\n{diagnostics}")]
    Load {
        /// The revision as given.
        rev: String,
        /// The loader's errors.
        diagnostics: String,
    },
    /// Blessing and pairing at once.
    #[error("KERNELGATE_BLESS and KERNELGATE_BASE together: a paired run compares with a revision, not with stored baselines (unset one)")]
    Bless,
}
