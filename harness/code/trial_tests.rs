//! The trial identity against every edit a user can make to a suite file: each that changes
//! what a trial runs changes its identity (and names the part), and comments, formatting,
//! names, other suites and unrelated kernels leave it alone. The kernels' code identities are
//! made up here (the real ones are tested in `sass`); `tests/bisect.rs` uses real ones.

use super::*;
use crate::dtype::{DType, HostData};
use crate::sass::{CodeSource, KernelCode, KernelIdentity, Parts, Toolchain};
use crate::suite::Suite;
use std::path::{Path, PathBuf};

const CU: &str = r#"extern "C" __global__ void k(float a, const float* x, float* y, int n) {}
extern "C" __global__ void other(float a, const float* x, float* y, int n) {}
"#;

const SUITE: &str = r#"# a comment
[suite]
name = "t"
source = "k.cu"
sizes = { n = [4096, 8192] }

[[buffer]]
name = "x"
type = "f32"
len = "n"
init = { random = "uniform", min = -1.0, max = 1.0 }

[[buffer]]
name = "w"
type = "f32"
len = "4"
init = { npy = "w.npy" }

[[buffer]]
name = "y"
type = "f32"
len = "n"
role = "output"

[[kernel]]
name = "naive"
entry = "k"
reference = true
grid = ["ceil(n / 256)"]
block = [256]
args = ["2.0f32", "x", "y", "n as i32"]

[[kernel]]
name = "fast"
entry = "k"
grid = ["ceil(n / 256)"]
block = [256]
args = ["2.0f32", "x", "y", "n as i32"]

[[kernel]]
name = "unrelated"
entry = "other"
grid = ["ceil(n / 128)"]
block = [128]
args = ["2.0f32", "x", "y", "n as i32"]

[check]
rtol = 1e-6
atol = 1e-6
trials = 3

[bench]
bytes = "3 * 4 * n"
max_slowdown = "3%"
"#;

fn npy(path: &Path, values: &[f64]) {
    let data = HostData::from_f64(DType::F32, values.iter().copied());
    std::fs::write(path, crate::npy::to_bytes(&data, &[values.len()]).unwrap()).unwrap();
}

/// A folder holding `k.cu`, `w.npy` (4 values), and `x.npy` and `golden.npy` (4096 values
/// each) for [`golden`].
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kg-trial-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.cu"), CU).unwrap();
    npy(&dir.join("w.npy"), &[1.0, 2.0, 3.0, 4.0]);
    npy(&dir.join("x.npy"), &vec![0.25; 4096]);
    npy(&dir.join("golden.npy"), &vec![0.5; 4096]);
    dir
}

fn load(dir: &Path, text: &str) -> Suite {
    crate::suite::load_text(&dir.join("t.toml"), text).unwrap_or_else(|d| panic!("{d:?}"))
}

/// `text` as `len` hex digits, as a stored hash is written: its bytes' hex, padded with 0s.
fn made_up_hash(text: &str, len: usize) -> String {
    let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{hex:0>len$}")[..len].to_string()
}

/// A made-up identity per entry: `hash` from the kernel's name and `salt`.
fn identity(name: &str, salt: &str) -> KernelIdentity {
    KernelIdentity {
        hash: made_up_hash(&format!("{name}{salt}"), 64),
        arch: "sm_90".into(),
        name: name.into(),
        from: CodeSource::Cubin,
        parts: Some(Parts {
            code: made_up_hash(&format!("c{salt}"), 16),
            data: made_up_hash("d", 16),
            attributes: made_up_hash("a", 16),
        }),
        resources: None,
    }
}

/// The suite's code with made-up identities; `salted` kernels get another code part. (The
/// runner's tests use it too.)
pub(crate) fn code(suite: &Suite, arch: &str, salted: &[&str]) -> SuiteCode {
    let kernels = suite
        .kernels
        .iter()
        .map(|k| KernelCode {
            kernel: k.name.clone(),
            entries: k
                .entries
                .iter()
                .map(|e| {
                    identity(
                        e,
                        if salted.contains(&k.name.as_str()) {
                            "2"
                        } else {
                            "1"
                        },
                    )
                })
                .collect(),
        })
        .collect();
    let files = ["w.npy", "x.npy", "golden.npy"]
        .map(|f| suite.path.with_file_name(f))
        .iter()
        .filter_map(|p| Some((p.clone(), file_digest(p)?)))
        .collect();
    SuiteCode {
        arch: arch.into(),
        toolchain: Toolchain {
            nvrtc: Some("13.0".into()),
            driver: None,
            kernelgate: "test".into(),
        },
        kernels,
        files,
        compiled: Vec::new(),
        identify_seconds: 0.0,
    }
}

/// The suite with fixed inputs (`x` from `x.npy`, one size) and a golden output for `y`.
fn golden() -> String {
    SUITE
        .replace("sizes = { n = [4096, 8192] }", "sizes = { n = [4096] }")
        .replace(
            "init = { random = \"uniform\", min = -1.0, max = 1.0 }",
            "init = { npy = \"x.npy\" }",
        )
        .replace(
            "trials = 3\n",
            "trials = 3\ngolden = { y = \"golden.npy\" }\n",
        )
}

/// `fast` on the first case of `text`'s suite, with `KERNELGATE_SEED` `seed`.
fn fast(dir: &Path, text: &str, seed: Option<u64>, salted: &[&str]) -> TrialCode {
    let s = load(dir, text);
    let k = s.kernels.iter().position(|k| k.name == "fast").unwrap();
    trial_code(&s, 0, k, seed, &code(&s, "sm_90", salted))
}

#[test]
fn comments_formatting_names_and_unrelated_kernels_leave_the_identity_alone() {
    let dir = folder("same");
    let base = fast(&dir, SUITE, None, &[]);
    assert_eq!(base.identity.len(), 64);
    assert_eq!(
        base.kernels.iter().map(|k| k.role).collect::<Vec<_>>(),
        [Role::Kernel, Role::Reference]
    );
    let unrelated_moved = SUITE.replace(
        "[[kernel]]\nname = \"unrelated\"\nentry = \"other\"\ngrid = [\"ceil(n / 128)\"]\nblock = [128]\nargs = [\"2.0f32\", \"x\", \"y\", \"n as i32\"]\n",
        "",
    );
    let unrelated_moved = unrelated_moved.replace(
        "[[kernel]]\nname = \"naive\"",
        "[[kernel]]\nname = \"unrelated2\"\nentry = \"other\"\ngrid = [1]\nblock = [32]\nargs = [\"1.0f32\", \"x\", \"y\", \"n as i32\"]\n\n[[kernel]]\nname = \"naive\"",
    );
    let same = [
        (
            "a comment",
            SUITE.replace(
                "# a comment",
                "# another comment, longer\n# and a second line",
            ),
        ),
        (
            "formatting",
            SUITE.replace("trials = 3", "trials   =   3   # three sets"),
        ),
        (
            "the suite's name",
            SUITE.replace("name = \"t\"", "name = \"renamed\""),
        ),
        (
            "an unrelated kernel moved, replaced and changed",
            unrelated_moved,
        ),
        ("an unrelated kernel's code", SUITE.to_string()),
        (
            "a block spelt another way",
            SUITE.replace("block = [256]\nargs", "block = [256, 1, 1]\nargs"),
        ),
        (
            "an equivalent length expression",
            SUITE.replace("len = \"4\"", "len = \"2 + 2\""),
        ),
    ];
    for (what, text) in same {
        let salted: &[&str] = if what.contains("code") {
            &["unrelated"]
        } else {
            &[]
        };
        assert_eq!(fast(&dir, &text, None, salted), base, "{what}");
    }
    // Another suite file beside it changes nothing either: the identity reads one suite.
    std::fs::write(
        dir.join("other.toml"),
        SUITE.replace("name = \"t\"", "name = \"u\""),
    )
    .unwrap();
    assert_eq!(fast(&dir, SUITE, None, &[]), base, "another suite");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_edit_to_what_the_trial_runs_changes_it_and_names_the_part() {
    let dir = folder("changed");
    let base = fast(&dir, SUITE, None, &[]);
    let edit = |from: &str, to: &str| {
        assert!(SUITE.contains(from), "{from}");
        SUITE.replacen(from, to, 1)
    };
    let fast_block = "name = \"fast\"\nentry = \"k\"\ngrid = [\"ceil(n / 256)\"]\nblock = [256]";
    let cases: Vec<(&str, String, Change)> = vec![
        (
            "the kernel's block",
            edit(fast_block, &fast_block.replace("[256]", "[128]")),
            Change::Launches,
        ),
        (
            "the kernel's grid",
            edit(fast_block, &fast_block.replace("256)", "512)")),
            Change::Launches,
        ),
        (
            "a scalar argument",
            edit(
                &format!("{fast_block}\nargs = [\"2.0f32\""),
                &format!("{fast_block}\nargs = [\"3.0f32\""),
            ),
            Change::Launches,
        ),
        (
            "the reference's launch",
            edit(
                "reference = true\ngrid = [\"ceil(n / 256)\"]",
                "reference = true\ngrid = [\"ceil(n / 64)\"]",
            ),
            Change::Launches,
        ),
        (
            "a limit",
            edit(fast_block, &format!("{fast_block}\nmax_registers = 64")),
            Change::Launches,
        ),
        (
            "an init's range",
            edit("max = 1.0 }", "max = 2.0 }"),
            Change::Inputs,
        ),
        (
            "an init's kind",
            edit(
                "init = { random = \"uniform\", min = -1.0, max = 1.0 }",
                "init = { random = \"normal\" }",
            ),
            Change::Inputs,
        ),
        (
            "a buffer's role",
            edit(
                "role = \"output\"",
                "role = \"inout\"\ninit = { constant = 0.0 }",
            ),
            Change::Inputs,
        ),
        (
            "the input seed",
            edit("trials = 3", "trials = 3\nseed = 99"),
            Change::Inputs,
        ),
        (
            "the input sets",
            edit("trials = 3", "trials = 4"),
            Change::Check,
        ),
        (
            "a tolerance",
            edit("rtol = 1e-6", "rtol = 1e-5"),
            Change::Check,
        ),
        (
            "max_slowdown",
            edit("max_slowdown = \"3%\"", "max_slowdown = \"2%\""),
            Change::Bench,
        ),
        (
            "bytes",
            edit("bytes = \"3 * 4 * n\"", "bytes = \"2 * 4 * n\""),
            Change::Bench,
        ),
        (
            "a bench setting",
            edit("[bench]", "[bench]\nl2_flush = false"),
            Change::Bench,
        ),
    ];
    for (what, text, part) in cases {
        let now = fast(&dir, &text, None, &[]);
        assert_ne!(now.identity, base.identity, "{what}");
        let change = CodeChange::between(Some(&base), &now);
        assert_eq!(
            change,
            CodeChange::Changed {
                changes: vec![part.clone()],
                toolchain: Vec::new()
            },
            "{what}"
        );
    }
    // KERNELGATE_SEED moves the inputs too.
    let seeded = fast(&dir, SUITE, Some(8), &[]);
    assert_eq!(
        CodeChange::between(Some(&base), &seeded),
        CodeChange::Changed {
            changes: vec![Change::Inputs],
            toolchain: Vec::new()
        }
    );
    // The contents of an `.npy` input and of a golden file, not their names.
    npy(&dir.join("w.npy"), &[1.0, 2.0, 3.0, 5.0]);
    let npy_changed = fast(&dir, SUITE, None, &[]);
    assert_eq!(
        CodeChange::between(Some(&base), &npy_changed),
        CodeChange::Changed {
            changes: vec![Change::Inputs],
            toolchain: Vec::new()
        },
        "npy contents"
    );
    let golden = golden();
    let before = fast(&dir, &golden, None, &[]);
    npy(&dir.join("golden.npy"), &vec![0.25; 4096]);
    let golden_changed = fast(&dir, &golden, None, &[]);
    assert_eq!(
        CodeChange::between(Some(&before), &golden_changed),
        CodeChange::Changed {
            changes: vec![Change::Check],
            toolchain: Vec::new()
        },
        "golden contents"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_code_of_the_kernel_or_its_reference_and_the_arch_change_it() {
    let dir = folder("code");
    let base = fast(&dir, SUITE, None, &[]);
    let kernel = fast(&dir, SUITE, None, &["fast"]);
    assert_eq!(
        CodeChange::between(Some(&base), &kernel),
        CodeChange::Changed {
            changes: vec![Change::Kernel {
                role: Role::Kernel,
                kernel: "fast".into(),
                parts: vec![KernelPart::Code]
            }],
            toolchain: Vec::new()
        }
    );
    let reference = fast(&dir, SUITE, None, &["naive"]);
    let change = CodeChange::between(Some(&base), &reference);
    assert_eq!(change.changed_kernels(), [(Role::Reference, "naive")]);
    assert_eq!(
        change.describe("base 1a2b3c4"),
        "changed since base 1a2b3c4: reference `naive` (code)"
    );
    let s = load(&dir, SUITE);
    let k = s.kernels.iter().position(|k| k.name == "fast").unwrap();
    let sm80 = trial_code(&s, 0, k, None, &code(&s, "sm_80", &[]));
    assert_eq!(
        CodeChange::between(Some(&base), &sm80),
        CodeChange::Changed {
            changes: vec![Change::Arch {
                old: "sm_90".into(),
                new: "sm_80".into()
            }],
            toolchain: Vec::new()
        }
    );
    // Another case of the same kernel is another trial.
    let case1 = trial_code(&s, 1, k, None, &code(&s, "sm_90", &[]));
    assert_ne!(case1.identity, base.identity);
    // The reference's own trial has one kernel.
    let naive = trial_code(&s, 0, s.reference, None, &code(&s, "sm_90", &[]));
    assert_eq!(naive.kernels.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_toolchain_is_beside_the_identity_and_said() {
    let dir = folder("toolchain");
    let base = fast(&dir, SUITE, None, &[]);
    let mut newer = base.clone();
    newer.toolchain.nvrtc = Some("13.1".into());
    let change = CodeChange::between(Some(&base), &newer);
    assert!(change.is_same());
    assert_eq!(
        change.describe("the baseline"),
        "same code as the baseline, new toolchain (NVRTC 13.0 → 13.1)"
    );
    assert_eq!(
        CodeChange::between(Some(&base), &base).describe("the baseline"),
        "same code as the baseline"
    );
    assert_eq!(
        CodeChange::between(None, &base).describe("the baseline"),
        "the baseline recorded no code identity"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_identity_of_another_version_is_unknown_never_changed() {
    let dir = folder("version");
    let now = fast(&dir, SUITE, None, &[]);
    let mut old = now.clone();
    old.version = 1;
    old.identity = "0".repeat(64);
    let change = CodeChange::between(Some(&old), &now);
    assert_eq!(change, CodeChange::OtherVersion { version: 1 });
    assert!(
        !change.is_same(),
        "never the same code: no machine attribution"
    );
    let words = change.describe("the baseline");
    assert!(
        words.contains("whether the code changed is unknown") && !words.starts_with("code changed"),
        "{words}"
    );
    // A stored identity without a version is version 1.
    let mut json = serde_json::to_value(&now).unwrap();
    json.as_object_mut().unwrap().remove("version");
    let read: TrialCode = serde_json::from_value(json).unwrap();
    assert_eq!(read.version, 1);
}
