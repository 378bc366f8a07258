//! `check`: a stored [`TrialCode`] (a baseline entry's `code`, a results trial's `code` and
//! `base_code`) checked where its file is read. Equal identities decide "same code as the
//! baseline", paired mode's skipped trials and bisect's untimed commits, so a damaged one must
//! not pass for a real one: every hash is lower-case hex of its length (the trial identity and
//! each entry's 64 digits of SHA-256, the parts 16), and the trial has its kernel.

use super::types::{Role, TrialCode};
use crate::problems::Problems;

/// Whether `s` is `len` lower-case hex digits.
fn hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Records a problem at `place` unless `value` is `len` hex digits.
fn hash(p: &mut Problems, place: String, value: &str, len: usize) {
    if !hex(value, len) {
        let shown: String = value.chars().take(80).collect();
        p.add(
            place,
            format!("is `{shown}`; write {len} lower-case hex digits (kernelgate writes it: bless again to renew it)"),
        );
    }
}

/// Checks `code`, stored at `place`.
pub fn check(p: &mut Problems, place: &str, code: &TrialCode) {
    hash(p, format!("{place}.identity"), &code.identity, 64);
    if code.arch.is_empty() {
        p.add(
            format!("{place}.arch"),
            "is empty; write the architecture, e.g. `sm_90`",
        );
    }
    let parts = &code.parts;
    for (name, value) in [
        ("launches", &parts.launches),
        ("inputs", &parts.inputs),
        ("check", &parts.check),
        ("bench", &parts.bench),
    ] {
        hash(p, format!("{place}.parts.{name}"), value, 16);
    }
    let kernels = code
        .kernels
        .iter()
        .filter(|k| k.role == Role::Kernel)
        .count();
    let references = code.kernels.len() - kernels;
    if kernels != 1 || references > 1 {
        p.add(
            format!("{place}.kernels"),
            format!("holds {kernels} kernel(s) and {references} reference(s); a trial has one kernel, and one reference unless the kernel is it"),
        );
    }
    for (k, role) in code.kernels.iter().enumerate() {
        for (e, entry) in role.code.entries.iter().enumerate() {
            let at = format!("{place}.kernels[{k}].entries[{e}]");
            hash(p, format!("{at}.hash"), &entry.hash, 64);
            if let Some(parts) = &entry.parts {
                for (name, value) in [
                    ("code", &parts.code),
                    ("data", &parts.data),
                    ("attributes", &parts.attributes),
                ] {
                    hash(p, format!("{at}.parts.{name}"), value, 16);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_code_is_checked_at_its_place() {
        // A trial's code as a paired H200 run recorded it (tests/fixtures/results).
        let good: TrialCode = serde_json::from_value(serde_json::json!({
            "arch": "sm_90",
            "identity": "4d0f70e56672441d85e716ff3b582eb06079d0bdc23c08e429b30f56f3923668",
            "kernels": [
                {"role": "kernel", "kernel": "vec4", "entries": [{
                    "arch": "sm_90", "from": "cubin", "name": "saxpy_vec4",
                    "hash": "96b2e151c37b7bbaa49697e44a7dd05dfc009f65efb5187b2b3c06fabb3058e5",
                    "parts": {"attributes": "5467df511be84276", "code": "218a9f65ef3de857", "data": "82b0e70e6421393f"}
                }]},
                {"role": "reference", "kernel": "naive", "entries": [{
                    "arch": "sm_90", "from": "cubin", "name": "saxpy",
                    "hash": "5c8b31031f7310a39b956662c4de230da556ee96cc27d9c80f7b1688a2dda818"
                }]}
            ],
            "parts": {"bench": "2ebeebe53c1d78d1", "check": "077d655f8a7b14bb", "inputs": "4e450229e6b0e823", "launches": "cb12f22c921505ee"},
            "toolchain": {"driver": "13.0", "kernelgate": "0.1.0", "nvrtc": "13.0"}
        }))
        .unwrap();
        let mut p = Problems::default();
        check(&mut p, "code", &good);
        assert!(p.0.is_empty(), "{:?}", p.0);

        let mut bad = good.clone();
        bad.identity = "4D0F".into();
        bad.parts.inputs.clear();
        bad.kernels.retain(|k| k.role == Role::Reference);
        let mut p = Problems::default();
        check(&mut p, "trials[0].code", &bad);
        let shown: Vec<String> = p.0.iter().map(ToString::to_string).collect();
        assert_eq!(shown[0], "`trials[0].code.identity` is `4D0F`; write 64 lower-case hex digits (kernelgate writes it: bless again to renew it)");
        assert_eq!(shown[1], "`trials[0].code.parts.inputs` is ``; write 16 lower-case hex digits (kernelgate writes it: bless again to renew it)");
        assert!(
            shown[2].starts_with("`trials[0].code.kernels` holds 0 kernel(s) and 1 reference(s)"),
            "{shown:?}"
        );
    }
}
