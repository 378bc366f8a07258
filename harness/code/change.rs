//! `CodeChange`: what differs between the code a trial ran and the code it is compared with
//! (a stored baseline's, or the paired base's) — the same code, or which of the architecture,
//! a kernel (its code, data or attributes), the launches, the inputs, the check or the bench
//! settings changed — with the toolchain beside it. Kept as a typed field of the trial's record;
//! every reporter renders it with [`CodeChange::describe`].

use super::types::{Role, TrialCode};
use crate::sass::change::{parts, KernelPart};
use crate::sass::{KernelCode, Toolchain};
use serde::{Deserialize, Serialize};

/// One thing that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Another architecture.
    Arch {
        /// The other side's.
        old: String,
        /// This run's.
        new: String,
    },
    /// A kernel's code identity.
    Kernel {
        /// What the kernel is to the trial.
        role: Role,
        /// The suite kernel's name (this run's).
        kernel: String,
        /// The parts that differ.
        parts: Vec<KernelPart>,
    },
    /// The kernel became, or stopped being, the suite's reference.
    Reference,
    /// Launch shapes, resolved arguments, scratch buffers or limits.
    Launches,
    /// Buffers, their `init` or `.npy` contents, sizes or the input seed.
    Inputs,
    /// `[check]`: input sets, tolerances, golden files.
    Check,
    /// `[bench]`, `bytes` or `flops`.
    Bench,
}

/// A toolchain component that differs (stored beside the identity, not in it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolchainChange {
    /// `NVRTC`, `driver` or `kernelgate`.
    pub what: String,
    /// The other side's version (`None`: not recorded, or not loaded).
    pub old: Option<String>,
    /// This run's.
    pub new: Option<String>,
}

/// What differs between a trial's code and the code it is compared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CodeChange {
    /// The trial identities are equal: the same code, launches, inputs and settings.
    Same {
        /// Toolchain components that differ (empty: the same toolchain too).
        toolchain: Vec<ToolchainChange>,
    },
    /// The identities differ.
    Changed {
        /// What differs, as far as the recorded parts tell.
        changes: Vec<Change>,
        /// Toolchain components that differ.
        toolchain: Vec<ToolchainChange>,
    },
    /// The other side recorded no code (a baseline written before format 3).
    NotRecorded,
    /// The other side's trial identity is of another version (`TrialCode::version`): made
    /// another way, it cannot say whether the code changed.
    OtherVersion {
        /// Its version.
        version: u32,
    },
}

/// The parts of a kernel's identities that differ between `old` and `new`.
fn kernel_parts(old: &KernelCode, new: &KernelCode) -> Vec<KernelPart> {
    if old.entries.len() != new.entries.len() {
        return vec![KernelPart::Entries];
    }
    let changed = (old.entries.iter().zip(&new.entries)).filter(|(o, n)| o.hash != n.hash);
    crate::order::first_seen(changed.flat_map(|(o, n)| parts(o, n)))
}

/// The toolchain components that differ.
fn toolchain(old: &Toolchain, new: &Toolchain) -> Vec<ToolchainChange> {
    [
        ("NVRTC", &old.nvrtc, &new.nvrtc),
        ("driver", &old.driver, &new.driver),
        (
            "kernelgate",
            &Some(old.kernelgate.clone()),
            &Some(new.kernelgate.clone()),
        ),
    ]
    .into_iter()
    .filter(|(_, o, n)| o != n)
    .map(|(what, o, n)| ToolchainChange {
        what: what.to_string(),
        old: o.clone(),
        new: n.clone(),
    })
    .collect()
}

impl CodeChange {
    /// What differs between `old` (the baseline's or base's code; `None` where none was
    /// recorded) and `new` (this run's).
    pub fn between(old: Option<&TrialCode>, new: &TrialCode) -> CodeChange {
        let Some(old) = old else {
            return CodeChange::NotRecorded;
        };
        if old.version != new.version {
            return CodeChange::OtherVersion {
                version: old.version,
            };
        }
        let toolchain = toolchain(&old.toolchain, &new.toolchain);
        if old.identity == new.identity {
            return CodeChange::Same { toolchain };
        }
        let mut changes = Vec::new();
        if old.arch != new.arch {
            changes.push(Change::Arch {
                old: old.arch.clone(),
                new: new.arch.clone(),
            });
        }
        if old.kernels.len() != new.kernels.len() {
            changes.push(Change::Reference);
        }
        for n in &new.kernels {
            let Some(o) = old.role(n.role) else { continue };
            let parts = kernel_parts(&o.code, &n.code);
            if !parts.is_empty() {
                changes.push(Change::Kernel {
                    role: n.role,
                    kernel: n.code.kernel.clone(),
                    parts,
                });
            }
        }
        let (a, b) = (&old.parts, &new.parts);
        changes.extend(crate::order::flagged([
            (a.launches != b.launches, Change::Launches),
            (a.inputs != b.inputs, Change::Inputs),
            (a.check != b.check, Change::Check),
            (a.bench != b.bench, Change::Bench),
        ]));
        CodeChange::Changed { changes, toolchain }
    }

    /// Whether the trial ran the same code as the other side.
    pub fn is_same(&self) -> bool {
        matches!(self, CodeChange::Same { .. })
    }

    /// The kernels whose code identity changed, by role and name.
    pub fn changed_kernels(&self) -> Vec<(Role, &str)> {
        match self {
            CodeChange::Changed { changes, .. } => changes
                .iter()
                .filter_map(|c| match c {
                    Change::Kernel { role, kernel, .. } => Some((*role, kernel.as_str())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// In words, against `other` (`the baseline`, `base 1a2b3c4`): `same code as the baseline`,
    /// `same code as the baseline, new toolchain (NVRTC 13.0 → 13.1)`, `code changed since the
    /// baseline: kernel `vec4` (code), launches`.
    pub fn describe(&self, other: &str) -> String {
        let tools = |t: &[ToolchainChange]| {
            let v = |s: &Option<String>| s.as_deref().unwrap_or("?").to_string();
            let list: Vec<String> = (t.iter())
                .map(|c| format!("{} {} → {}", c.what, v(&c.old), v(&c.new)))
                .collect();
            list.join(", ")
        };
        match self {
            CodeChange::NotRecorded => format!("{other} recorded no code identity"),
            CodeChange::OtherVersion { version } => format!(
                "{other} recorded a trial identity of version {version} (this kernelgate makes version {}): whether the code changed is unknown; bless again to record it",
                super::types::IDENTITY_VERSION
            ),
            CodeChange::Same { toolchain } if toolchain.is_empty() => {
                format!("same code as {other}")
            }
            CodeChange::Same { toolchain } => {
                format!("same code as {other}, new toolchain ({})", tools(toolchain))
            }
            CodeChange::Changed { changes, toolchain } => {
                let mut what: Vec<String> = changes.iter().map(change_words).collect();
                if what.is_empty() {
                    what.push("the trial".into());
                }
                let mut text = format!("changed since {other}: {}", what.join(", "));
                if !toolchain.is_empty() {
                    text.push_str(&format!("; toolchain {}", tools(toolchain)));
                }
                text
            }
        }
    }
}

/// One change in words: `kernel `vec4` (code, constant data)`, `launches`.
fn change_words(c: &Change) -> String {
    match c {
        Change::Arch { old, new } => format!("architecture {old} → {new}"),
        Change::Kernel {
            role,
            kernel,
            parts,
        } => {
            let parts: Vec<&str> = parts.iter().map(|p| p.word()).collect();
            format!("{} `{kernel}` ({})", role.word(), parts.join(", "))
        }
        Change::Reference => "which kernel is the reference".into(),
        Change::Launches => "launches".into(),
        Change::Inputs => "inputs".into(),
        Change::Check => "check".into(),
        Change::Bench => "bench settings".into(),
    }
}
