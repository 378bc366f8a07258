//! `TrialCode`: what a trial runs — its kernels' code identities for one architecture, the
//! toolchain beside them, and the *trial identity*, one hash of the whole resolved trial (code,
//! launches, inputs, check and bench settings) — and `CodeChange`, what differs from the code a
//! trial is compared with. Paired mode skips trials whose identity is the base's, a stored
//! verdict says "same code as the baseline", bisect decides commits without timing, and the
//! reports show it. No GPU: the code comes from the compiled modules (`crate::sass`).
//!
//! - `types`: `TrialCode` and what it holds (`RoleCode`, `TrialParts`), as stored.
//! - `suite_code`: `SuiteCode`, a suite compiled and identified for one architecture.
//! - `trial`: `trial_code`, the one pure function from a trial to its identity.
//! - `change`: `CodeChange`, what differs, in types and in words.
//! - `valid`: a stored `TrialCode` checked where its file is read.

mod change;
mod suite_code;
mod trial;
#[cfg(test)]
pub(crate) mod trial_tests;
mod types;
pub mod valid;

pub use crate::sass::change::KernelPart;
pub use change::{Change, CodeChange, ToolchainChange};
pub use suite_code::{entry_sass, file_digest, kernel_cubin, CodeError, SuiteCode};
pub use trial::{trial_code, EXEMPT};
pub use types::{Role, RoleCode, TrialCode, TrialParts, IDENTITY_VERSION};
