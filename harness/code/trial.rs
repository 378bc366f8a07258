//! `trial_code`: the trial identity — one pure function from a suite, a case, a kernel, the
//! input seed and the suite's [`SuiteCode`] to a SHA-256 of everything the trial does:
//!
//! - the architecture and the code identity of the trial's kernel and of its reference (every
//!   launch's entry: code, data, attributes; `docs/sass.md`);
//! - **launches**: each kernel's launches in this case — grid, block, dynamic shared memory and
//!   the resolved arguments (a scalar as the bytes the kernel receives, a buffer or scratch
//!   buffer by name) — its scratch buffers (name, type, length) and its limits;
//! - **inputs**: every buffer of the suite in order (name, type, role, `init`, length; an
//!   `.npy` input by the SHA-256 of its contents), the case's sizes and the input seed;
//! - **check**: the input sets, the tolerances and golden files (their contents) by buffer;
//! - **bench**: every `[bench]` setting and the case's `bytes` and `flops`.
//!
//! Left out, because they do not change what runs: names (the suite's, the kernels', the
//! entries'), file paths and line numbers, comments and formatting of the suite file, other
//! suites, and the kernels of the suite the trial does not launch. The toolchain is stored
//! beside the identity, not in it (a PTX kernel's identity includes the driver, which compiles
//! it). Buffers enter in declaration order: reordering them is reported as a change, since the
//! allocation order may move what the kernels touch.

use super::suite_code::SuiteCode;
use super::types::{Role, RoleCode, TrialCode, TrialParts};
use crate::sass::identity::hex;
use crate::suite::{ArgValue, Init, Suite};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The SHA-256 of a canonical JSON value.
fn digest(value: &Value) -> [u8; 32] {
    Sha256::digest(serde_json::to_vec(value).unwrap_or_default()).into()
}

/// A data file as the identity sees it: the digest of its contents (or that it is unreadable,
/// which no readable file matches).
fn file(code: &SuiteCode, path: &Path) -> Value {
    match code.files.get(path) {
        Some(d) => json!({ "sha256": d }),
        None => json!({ "unreadable": true }),
    }
}

/// An `init` with `.npy` files by their contents.
fn init(code: &SuiteCode, init: &Init) -> Value {
    match init {
        Init::Npy(path) => json!({ "npy": file(code, path) }),
        Init::Sorted(inner) => json!({ "sorted": self::init(code, inner) }),
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

/// One kernel's launches in `case`, its scratch buffers and limits, with every buffer named.
fn launches(suite: &Suite, case: usize, kernel: usize) -> Value {
    let k = &suite.kernels[kernel];
    let c = &suite.cases[case];
    let scratch: Vec<Value> = k
        .scratch
        .iter()
        .zip(c.scratch_lens.get(kernel).into_iter().flatten())
        .map(|(s, len)| json!({ "name": s.name, "type": s.dtype.name(), "len": len }))
        .collect();
    let arg = |a: &ArgValue| match a {
        ArgValue::Buffer(i) => json!({ "buffer": suite.buffers.get(*i).map(|b| &b.name) }),
        ArgValue::Scratch(i) => json!({ "scratch": k.scratch.get(*i).map(|s| &s.name) }),
        ArgValue::Scalar(bytes) => json!({ "scalar": hex(bytes) }),
    };
    let launches: Vec<Value> = c
        .launches
        .get(kernel)
        .into_iter()
        .flatten()
        .map(|l| {
            json!({
                "grid": l.grid,
                "block": l.block,
                "shared": l.shared,
                "args": l.args.iter().map(arg).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "reference": k.reference,
        "launches": launches,
        "scratch": scratch,
        "limits": k.limits,
    })
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
    let c = &suite.cases[case];
    let by_name = |i: &usize| suite.buffers.get(*i).map(|b| b.name.clone());
    let launch_part = json!(roles
        .iter()
        .map(|(role, k)| json!({ "role": role.word(), "kernel": launches(suite, case, *k) }))
        .collect::<Vec<_>>());
    let buffers: Vec<Value> = suite
        .buffers
        .iter()
        .zip(&c.lens)
        .map(|(b, len)| {
            json!({
                "name": b.name,
                "type": b.dtype.name(),
                "role": b.role,
                "init": b.init.as_ref().map(|i| init(code, i)),
                "len": len,
            })
        })
        .collect();
    let inputs = json!({ "buffers": buffers, "sizes": c.sizes, "seed": seed });
    let tolerances: Vec<Value> = suite
        .check
        .tolerances
        .iter()
        .map(|(i, t)| json!([by_name(i), t]))
        .collect();
    let golden: Vec<Value> = suite
        .check
        .golden
        .iter()
        .map(|(i, p)| json!([by_name(i), file(code, p)]))
        .collect();
    let check = json!({
        "trials": suite.check.trials,
        "tolerances": tolerances,
        "golden": golden,
    });
    let bench = json!({ "bench": suite.bench, "bytes": c.bytes, "flops": c.flops });
    let parts = [&launch_part, &inputs, &check, &bench].map(digest);
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
    all.field(b"kernelgate-trial-identity-v1")
        .field(code.arch.as_bytes());
    for k in &kernels {
        all.field(k.role.word().as_bytes())
            .field(&(k.code.entries.len() as u64).to_le_bytes());
        for e in &k.code.entries {
            all.field(e.hash.as_bytes());
        }
    }
    for p in &parts {
        all.field(p);
    }
    let short = |d: &[u8; 32]| hex(&d[..8]);
    TrialCode {
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
