//! `TrialCode`: what one trial runs — the code of each of its kernels for one architecture,
//! the toolchain beside it, and the trial identity, a hash of the whole resolved trial — as
//! results files and baselines (format 3) store it. `docs/sass.md` documents the JSON.

use crate::sass::{KernelCode, Toolchain};
use serde::{Deserialize, Serialize};

/// What a kernel is to a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The kernel the trial checks and times.
    Kernel,
    /// The suite's reference kernel it is checked against (and timed with, in stored mode).
    Reference,
}

impl Role {
    /// `kernel`, `reference`.
    pub fn word(self) -> &'static str {
        match self {
            Role::Kernel => "kernel",
            Role::Reference => "reference",
        }
    }
}

/// One kernel of a trial with its code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleCode {
    /// What the kernel is to the trial.
    pub role: Role,
    /// Its code: the suite kernel's name and one identity per launch.
    #[serde(flatten)]
    pub code: KernelCode,
}

/// The parts of a trial identity besides its kernels' code, each the first 16 hex digits of
/// its own SHA-256, so a change can be named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialParts {
    /// The kernels' launches in this case (grid, block, dynamic shared memory, resolved
    /// arguments), their scratch buffers and their limits.
    pub launches: String,
    /// The buffers (names, types, roles, lengths, `init`, `.npy` contents), the sizes and the
    /// input seed.
    pub inputs: String,
    /// `[check]`: input sets, tolerances, golden files' contents.
    pub check: String,
    /// `[bench]` and the case's `bytes` and `flops`.
    pub bench: String,
}

/// What one trial runs, for one architecture: equal `identity` means the same code on the same
/// launches, inputs, checks and timing settings.
/// The trial identity's version: 2 since the identity is the suite's own serialization cut
/// down to the trial (`code::trial`); 1, the hand-listed fields before it (files that do not
/// say). Identities of different versions cannot be compared: the code change is unknown.
pub const IDENTITY_VERSION: u32 = 2;

fn version_1() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialCode {
    /// How `identity` was made ([`IDENTITY_VERSION`]); absent in files of version 1.
    #[serde(default = "version_1")]
    pub version: u32,
    /// SHA-256 (64 hex digits) of the whole resolved trial: the architecture, every kernel's
    /// code identity, and the parts in [`TrialParts`]. Not the toolchain (beside it).
    pub identity: String,
    /// The architecture the code is for, e.g. `sm_90`.
    pub arch: String,
    /// What built and identified it.
    pub toolchain: Toolchain,
    /// The trial's kernel, then its reference (absent when the kernel is the reference).
    pub kernels: Vec<RoleCode>,
    /// The sub-hashes of the identity's other parts.
    pub parts: TrialParts,
}

impl TrialCode {
    /// The kernel in `role`, when the trial has one.
    pub fn role(&self, role: Role) -> Option<&RoleCode> {
        self.kernels.iter().find(|k| k.role == role)
    }

    /// The first 12 hex digits of the identity, as lines show it.
    pub fn short(&self) -> &str {
        self.identity.get(..12).unwrap_or(&self.identity)
    }
}
