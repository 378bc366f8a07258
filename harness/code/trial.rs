//! `trial_code`: the trial identity — one pure function from a suite, a case, a kernel, the
//! input seed and the suite's [`SuiteCode`] to a SHA-256 of everything the trial runs, checks
//! and judges: the code identities of its kernel and reference for the architecture, and **the
//! suite's own serialization** (the `Suite` every worker receives) cut down to this trial —
//! its case, its kernel and reference, every buffer, the check and bench settings, the seed
//! — with data files by their contents. Nothing is listed field by field: a field added to
//! the suite enters the identity unless [`EXEMPT`] names it with its reason (a name, a place in
//! the file, or what the code identities already stand for), so none can be forgotten.
//! `tests/identity.rs` checks it from the outside, key by key of the suite schema.
//!
//! The parts ([`TrialParts`]: launches, inputs, check, bench) digest pieces of the same value
//! so that a change can be named; the identity covers the whole value, parts or not.

use super::suite_code::SuiteCode;
use super::types::{Role, RoleCode, TrialCode, TrialParts, IDENTITY_VERSION};
use crate::sass::identity::hex;
use crate::suite::Suite;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// What the identity leaves out of the suite's serialization, by key, with why. Keys of the
/// suite (top level), of a kernel (`kernel.`) and of a case (`case.`).
pub const EXEMPT: &[(&str, &str)] = &[
    ("name", "the suite's name: renaming runs nothing else"),
    ("name_pos", "where the name is written"),
    ("warnings", "what loading said of the file"),
    ("path", "where the suite file is"),
    ("kernel_lines", "where each kernel is written"),
    ("sources", "compiled: the kernels' code identities stand for what runs (comments and formatting do not run)"),
    ("include_dirs", "compiled: in the kernels' code identities"),
    ("options", "compiled: in the kernels' code identities"),
    ("reference", "the index of the reference: its launches enter in the reference role"),
    ("kernels", "only the trial's kernel and its reference enter (other kernels do not run)"),
    ("cases", "only the trial's case enters"),
    ("kernel.name", "a kernel's name"),
    ("kernel.entries", "entry names: the entries' code identities stand for them"),
    ("kernel.source", "which source: the entries' code identities stand for it"),
    ("case.label", "the case's name, made of its sizes (which enter)"),
];

/// The SHA-256 of a canonical JSON value.
fn digest(value: &Value) -> [u8; 32] {
    Sha256::digest(serde_json::to_vec(value).unwrap_or_default()).into()
}

/// A data file as the identity sees it: the digest of its contents (or that it is unreadable,
/// which no readable file matches).
fn file(code: &SuiteCode, path: &Value) -> Value {
    let digest = path
        .as_str()
        .and_then(|p| code.files.get(std::path::Path::new(p)));
    digest.map_or(json!({ "unreadable": true }), |d| json!({ "sha256": d }))
}

/// `value` with every `.npy` init's path replaced by the file's contents' digest.
fn npy_by_contents(code: &SuiteCode, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match key.as_str() {
                    "Npy" => *v = file(code, v),
                    _ => npy_by_contents(code, v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| npy_by_contents(code, v)),
        _ => {}
    }
}

/// `object` without the keys [`EXEMPT`] names under `prefix` (`""`, `"kernel."`, `"case."`).
fn without_exempt(mut object: Map<String, Value>, prefix: &str) -> Map<String, Value> {
    for (key, _) in EXEMPT {
        if let Some(k) = key.strip_prefix(prefix).filter(|k| !k.contains('.')) {
            object.remove(k);
        }
    }
    object
}

/// The resolved trial (`case`; `roles`: its kernel and reference) as one JSON value: the
/// suite's serialization cut down to it, the seed the run uses, data files by contents.
fn resolved(
    suite: &Suite,
    case: usize,
    roles: &[(Role, usize)],
    seed: u64,
    code: &SuiteCode,
) -> Map<String, Value> {
    let Ok(Value::Object(mut whole)) = serde_json::to_value(suite) else {
        return Map::new();
    };
    // The kernels and cases taken out (the trial's enter below; the rest are exempt), so the
    // rest of the suite is moved, not copied.
    let (all_kernels, all_cases) = (whole.remove("kernels"), whole.remove("cases"));
    let pick = |all: &Option<Value>, i: usize| match all.as_ref().and_then(|v| v.get(i)) {
        Some(Value::Object(o)) => o.clone(),
        _ => Map::new(),
    };
    let mut the_case = without_exempt(pick(&all_cases, case), "case.");
    // The case's launches and scratch lengths are per kernel: each enters with its kernel.
    let mut per_kernel = |key: &str| match the_case.remove(key) {
        Some(Value::Array(v)) => v,
        _ => Vec::new(),
    };
    let (launches, scratch_lens) = (per_kernel("launches"), per_kernel("scratch_lens"));
    let kernels: Vec<Value> = roles
        .iter()
        .map(|(role, k)| {
            let kernel = without_exempt(pick(&all_kernels, *k), "kernel.");
            json!({
                "role": role.word(),
                "kernel": kernel,
                "launches": launches.get(*k),
                "scratch_lens": scratch_lens.get(*k),
            })
        })
        .collect();
    let mut out = without_exempt(whole, "");
    out.insert("kernels".into(), Value::Array(kernels));
    out.insert("case".into(), Value::Object(the_case));
    // The seed the run uses (`KERNELGATE_SEED`, else the suite's), with the inputs.
    out.insert("seed".into(), json!(seed));
    if let Some(check) = out.get_mut("check").and_then(Value::as_object_mut) {
        check.remove("seed");
        if let Some(Value::Object(golden)) = check.get_mut("golden") {
            for path in golden.values_mut() {
                *path = file(code, path);
            }
        }
    }
    let mut value = Value::Object(out);
    npy_by_contents(code, &mut value);
    match value {
        Value::Object(o) => o,
        _ => Map::new(),
    }
}

/// The part of `trial` under `keys` (a `case.` key names one of the case's).
fn part(trial: &Map<String, Value>, keys: &[&str]) -> Value {
    let case = trial.get("case").and_then(Value::as_object);
    let get = |k: &str| match k.strip_prefix("case.") {
        Some(k) => case.and_then(|c| c.get(k)),
        None => trial.get(k),
    };
    Value::Array(
        keys.iter()
            .map(|k| get(k).cloned().unwrap_or(Value::Null))
            .collect(),
    )
}

/// The identity of trial (`case`, `kernel`) of `suite`, from the suite's code: the kernel's,
/// then its reference's (when another kernel), each with its code; the parts; the identity
/// over all of them. `seed` is `KERNELGATE_SEED` where set (it replaces the suite's).
pub fn trial_code(
    suite: &Suite,
    case: usize,
    kernel: usize,
    seed: Option<u64>,
    code: &SuiteCode,
) -> TrialCode {
    let seed = seed.unwrap_or(suite.check.seed);
    let mut roles = vec![(Role::Kernel, kernel)];
    if suite.reference != kernel {
        roles.push((Role::Reference, suite.reference));
    }
    let trial = resolved(suite, case, &roles, seed, code);
    let parts = [
        part(&trial, &["kernels"]),
        part(
            &trial,
            &[
                "buffers",
                "seed",
                "case.sizes",
                "case.lens",
                "case.init_bounds",
            ],
        ),
        part(&trial, &["check"]),
        part(&trial, &["bench", "case.bytes", "case.flops"]),
    ]
    .map(|p| digest(&p));
    let kernels: Vec<RoleCode> = roles
        .iter()
        .map(|(role, k)| RoleCode {
            role: *role,
            code: code
                .kernels
                .get(*k)
                .cloned()
                .unwrap_or_else(|| crate::sass::KernelCode {
                    kernel: suite.kernels[*k].name.clone(),
                    entries: Vec::new(),
                }),
        })
        .collect();
    let mut all = crate::sass::Fields::default();
    all.field(format!("kernelgate-trial-identity-v{IDENTITY_VERSION}").as_bytes())
        .field(code.arch.as_bytes());
    for k in &kernels {
        all.field(k.role.word().as_bytes())
            .field(&(k.code.entries.len() as u64).to_le_bytes());
        for e in &k.code.entries {
            all.field(e.hash.as_bytes());
        }
    }
    all.field(&digest(&Value::Object(trial)));
    let short = |d: &[u8; 32]| hex(&d[..8]);
    TrialCode {
        version: IDENTITY_VERSION,
        identity: hex(&all.finish()),
        arch: code.arch.clone(),
        toolchain: code.toolchain.clone(),
        kernels,
        parts: TrialParts {
            launches: short(&parts[0]),
            inputs: short(&parts[1]),
            check: short(&parts[2]),
            bench: short(&parts[3]),
        },
    }
}
