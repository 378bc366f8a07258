//! `kernelgate sass` end to end, without a GPU: on a two-commit repository where one kernel's
//! code changed and another's source changed only in a comment, `--base HEAD~1` lists exactly
//! the first, with a short diff; `--json` identities come from the compile cache.
//!
//! Needs NVRTC and `nvdisasm` (ci/test.sh installs both under target/ and runs these with
//! `--include-ignored`); each test is `#[ignore]`d with that reason, so a run without them lists
//! it as ignored, never as passed.

#[path = "common/repo.rs"]
mod repo;

use repo::{git, kernelgate, text};
use std::path::{Path, PathBuf};

/// `PATH` with the folder of the `nvdisasm` kernelgate finds from here; a failure, saying why,
/// where NVRTC or nvdisasm is missing (the tests that call it are `#[ignore]`d with that reason).
fn tools() -> String {
    repo::require_nvrtc();
    let tool = kernelgate::sass::disasm::Disassembler::find()
        .unwrap_or_else(|e| panic!("this test needs nvdisasm: {e} (ci/test.sh installs it)"));
    let dir = tool
        .path
        .canonicalize()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let joined = std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path)));
    joined.unwrap().to_string_lossy().into_owned()
}

/// The compile cache the tests share, so each source compiles once.
fn cache() -> String {
    concat!(env!("CARGO_TARGET_TMPDIR"), "/sass-cache").to_string()
}

fn copy(files: &[&str], to: &Path) {
    for f in files {
        let dest = to.join(f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(f, dest).unwrap();
    }
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{file:?} has no `{from}`");
    std::fs::write(file, text.replacen(from, to, 1)).unwrap();
}

/// The saxpy and affine suites; the second commit changes one operation of `saxpy_vec4` and
/// only a comment in affine's source.
fn repository(name: &str) -> PathBuf {
    let dir = repo::scratch("sass", name);
    copy(
        &[
            "suites/saxpy.toml",
            "suites/saxpy/saxpy.cu",
            "suites/affine.toml",
            "suites/affine/affine.cu",
        ],
        &dir,
    );
    std::fs::write(dir.join(".gitignore"), "/target/\n").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    edit(
        &dir.join("suites/saxpy/saxpy.cu"),
        "yv.w = a * xv.w + yv.w;",
        "yv.w = a * xv.w - yv.w;",
    );
    edit(
        &dir.join("suites/affine/affine.cu"),
        "// Reference: a multiply then an add, one element per thread.",
        "// Reference: a multiply, then an add;\n// one element per thread.",
    );
    git(&dir, &["commit", "-q", "-am", "candidate"]);
    dir
}

#[test]
#[ignore = "needs NVRTC and nvdisasm: ci/test.sh installs both and runs these (--include-ignored)"]
fn the_base_comparison_lists_exactly_the_kernel_whose_code_changed() {
    let path = tools();
    let dir = repository("base");
    let env = [("PATH", path.as_str()), ("KERNELGATE_CACHE", &cache())];
    let o = kernelgate(&dir, &["sass", "--base", "HEAD~1"], &env);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let changed: Vec<&str> = out.lines().filter(|l| l.starts_with("changed")).collect();
    assert_eq!(changed, ["changed  saxpy::vec4 (sm_90)"], "{out}");
    assert!(
        out.contains("kernelgate sass: 1 changed, 3 unchanged, 0 new, 0 gone (sm_90; base "),
        "{out}"
    );
    assert!(out.contains("  code changed: "), "{out}");
    // One FFMA's operand changed: one line out, one in (the scheduler may move it).
    let diff: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("    -") || l.starts_with("    +"))
        .filter(|l| !l.starts_with("    ---") && !l.starts_with("    +++"))
        .collect();
    assert_eq!(diff.len(), 2, "{out}");
    assert!(
        diff[0].starts_with("    -FFMA ") && diff[1].starts_with("    +FFMA "),
        "{out}"
    );
    assert!(diff[1].contains(", -R"), "the negated addend: {out}");
    // A filter narrows both sides; the comment-only change is not a change.
    let o = kernelgate(&dir, &["sass", "--base", "HEAD~1", "affine"], &env);
    assert!(
        text(&o).contains("kernelgate sass: 0 changed, 2 unchanged, 0 new, 0 gone"),
        "{}",
        text(&o)
    );
    // The working tree, not HEAD, is the candidate: a new kernel there is listed as new.
    edit(
        &dir.join("suites/affine.toml"),
        "[[kernel]]\nname = \"naive\"",
        "[[kernel]]\nname = \"plain\"\nentry = \"affine\"\ngrid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [\"x\", \"y\", \"n as i32\"]\n\n[[kernel]]\nname = \"naive\"",
    );
    let o = kernelgate(&dir, &["sass", "--base", "HEAD~1", "affine"], &env);
    let out = text(&o);
    assert!(out.contains("new      affine::plain (sm_90)"), "{out}");
    assert!(
        out.contains("0 changed, 2 unchanged, 1 new, 0 gone"),
        "{out}"
    );
}

#[test]
#[ignore = "needs NVRTC and nvdisasm: ci/test.sh installs both and runs these (--include-ignored)"]
fn sass_listings_strip_addresses_and_name_the_resources() {
    let path = tools();
    let o = kernelgate(
        Path::new("."),
        &["sass", "saxpy::vec4"],
        &[("PATH", path.as_str()), ("KERNELGATE_CACHE", &cache())],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.starts_with("saxpy::vec4 (sm_90)\n  saxpy_vec4  code "),
        "{out}"
    );
    assert!(
        out.contains(" · smem 0 B · local 0 B · stack 0 B · "),
        "{out}"
    );
    assert!(out.contains("\n    LDG.E.128"), "{out}");
    assert!(!out.contains("/*0"), "no addresses: {out}");
    assert!(
        out.ends_with("kernelgate sass: 1 kernel(s) for sm_90\n"),
        "{out}"
    );
    // `kernelgate sass | head`: a reader that goes away early ends the listing quietly.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .args(["sass", "saxpy"])
        .env("PATH", &path)
        .env("KERNELGATE_CACHE", cache())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
}

#[test]
#[ignore = "needs NVRTC and nvdisasm: ci/test.sh installs both and runs these (--include-ignored)"]
fn identities_as_json_come_from_the_cache_the_second_time() {
    tools();
    let cache = concat!(env!("CARGO_TARGET_TMPDIR"), "/sass-json-cache");
    let _ = std::fs::remove_dir_all(cache);
    let run = || {
        let o = kernelgate(
            Path::new("."),
            &["sass", "--json", "saxpy"],
            &[
                ("KERNELGATE_CACHE", cache),
                ("KERNELGATE_ARCH", "sm_80,sm_90"),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (json, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (first, said) = run();
    assert!(
        said.contains("2 source(s) compiled, 0 from the cache"),
        "{said}"
    );
    let (second, said) = run();
    assert!(
        said.contains("0 source(s) compiled, 2 from the cache"),
        "{said}"
    );
    assert_eq!(first, second);
    let kernels = first["kernels"].as_array().unwrap();
    let names: Vec<String> = kernels
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                k["name"].as_str().unwrap(),
                k["arch"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "saxpy::naive sm_80",
            "saxpy::vec4 sm_80",
            "saxpy::naive sm_90",
            "saxpy::vec4 sm_90"
        ]
    );
    let hash = |i: usize| {
        kernels[i]["entries"][0]["hash"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_ne!(hash(1), hash(3), "sm_80 and sm_90 code differ");
    assert_eq!(kernels[3]["entries"][0]["name"], "saxpy_vec4");
    assert_eq!(kernels[3]["entries"][0]["resources"]["local_bytes"], 0);
    assert!(first["toolchain"]["nvrtc"].is_string(), "{first}");
}

#[test]
#[ignore = "needs NVRTC and nvdisasm: ci/test.sh installs both and runs these (--include-ignored)"]
fn bad_arguments_bases_and_a_missing_disassembler_are_exit_2() {
    tools();
    let here = Path::new(".");
    let o = kernelgate(here, &["sass", "--jason"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("unexpected argument '--jason' found")
            && text(&o).contains("a similar argument exists: '--json'"),
        "{}",
        text(&o)
    );
    let o = kernelgate(
        here,
        &["sass", "--base", "no-such-revision", "saxpy"],
        &[("KERNELGATE_CACHE", &cache())],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`no-such-revision` is not a commit"),
        "{}",
        text(&o)
    );
    if Path::new("/usr/local/cuda/bin/nvdisasm").exists() {
        return; // found there whatever PATH says
    }
    let o = kernelgate(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &["sass"],
        &[
            ("PATH", "/usr/bin:/bin"),
            ("CUDA_HOME", ""),
            ("CARGO_TARGET_DIR", ""),
            (
                "KERNELGATE_SUITES",
                concat!(env!("CARGO_MANIFEST_DIR"), "/suites"),
            ),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no `nvdisasm` found (looked in PATH, "),
        "{}",
        text(&o)
    );
}
