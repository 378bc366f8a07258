//! Paired mode's set-up without a GPU: the base revision's suites come out of git (the working
//! tree untouched), and every way the base cannot be used is exit 2 with what to run.

#[path = "common/repo.rs"]
mod repo;

use repo::{git, kernelgate, text};
use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    repo::scratch("paired", name)
}

/// A repository with the saxpy suite in `suites/`, two commits: the second changes the kernel.
fn repository(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("suites/saxpy")).unwrap();
    std::fs::copy("suites/saxpy.toml", dir.join("suites/saxpy.toml")).unwrap();
    std::fs::copy("suites/saxpy/saxpy.cu", dir.join("suites/saxpy/saxpy.cu")).unwrap();
    std::fs::write(dir.join(".gitignore"), "/target/\n").unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    let cu = dir.join("suites/saxpy/saxpy.cu");
    let text = std::fs::read_to_string(&cu).unwrap();
    std::fs::write(&cu, format!("// the candidate\n{text}")).unwrap();
    git(&dir, &["commit", "-q", "-am", "candidate"]);
    dir
}

#[test]
fn the_base_is_extracted_from_git_without_touching_the_working_tree() {
    let dir = repository("extract");
    std::fs::write(dir.join("suites/saxpy/uncommitted.txt"), "mine").unwrap();
    let status_before = git(&dir, &["status", "--porcelain"]);
    let o = kernelgate(
        &dir,
        &["run", "saxpy::vec4"],
        &[("KERNELGATE_BASE", "HEAD~1")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let base = git(&dir, &["rev-parse", "HEAD~1"]);
    // Where the product puts it: under `CARGO_TARGET_DIR` where that is set.
    let target = dir.join(kernelgate::nextest::target_dir());
    let extracted = target
        .join("kernelgate-base")
        .join(&base)
        .join("suites/saxpy/saxpy.cu");
    let cu = std::fs::read_to_string(&extracted).unwrap_or_else(|e| panic!("{extracted:?}: {e}"));
    assert!(
        !cu.contains("the candidate"),
        "the base's source, not the candidate's"
    );
    assert_eq!(
        git(&dir, &["status", "--porcelain"]),
        status_before,
        "working tree untouched"
    );
    assert!(dir.join("suites/saxpy/uncommitted.txt").exists());
}

#[test]
fn a_bad_revision_says_what_to_fetch() {
    let dir = repository("bad-rev");
    let o = kernelgate(&dir, &["run"], &[("KERNELGATE_BASE", "no-such-branch")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("KERNELGATE_BASE=`no-such-branch` is not a commit in this repository (check the name, or fetch it: `git fetch origin <rev>`)"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_shallow_clone_is_told_to_deepen() {
    let dir = repository("shallow-origin");
    let clone = scratch("shallow");
    let url = format!("file://{}", dir.display());
    let o = Command::new("git")
        .args(["clone", "-q", "--depth", "1", &url])
        .arg(clone.join("c"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = kernelgate(&clone.join("c"), &["run"], &[("KERNELGATE_BASE", "HEAD~1")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("this is a shallow clone: `git fetch --deepen=200`"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_suites_folder_missing_at_the_base_is_named() {
    let dir = repository("missing");
    std::fs::write(dir.join("README"), "x").unwrap();
    git(&dir, &["add", "README"]);
    git(&dir, &["commit", "-q", "-m", "readme"]);
    // Move the suites: at HEAD~1 there is no `checks/` folder.
    git(&dir, &["mv", "suites", "checks"]);
    git(&dir, &["commit", "-q", "-m", "move"]);
    let o = kernelgate(
        &dir,
        &["run"],
        &[
            ("KERNELGATE_BASE", "HEAD~1"),
            ("KERNELGATE_SUITES", "checks"),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("the suites folder `checks` does not exist at KERNELGATE_BASE=`HEAD~1`"),
        "{}",
        text(&o)
    );
}

#[test]
fn bless_and_base_together_are_refused() {
    let dir = repository("bless");
    let o = kernelgate(
        &dir,
        &["run"],
        &[("KERNELGATE_BASE", "HEAD~1"), ("KERNELGATE_BLESS", "1")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("KERNELGATE_BLESS and KERNELGATE_BASE together"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_folder_of_suites_can_be_the_base() {
    let dir = repository("folder");
    let base = dir.join("base-suites");
    std::fs::create_dir_all(base.join("saxpy")).unwrap();
    std::fs::copy("suites/saxpy.toml", base.join("saxpy.toml")).unwrap();
    std::fs::copy("suites/saxpy/saxpy.cu", base.join("saxpy/saxpy.cu")).unwrap();
    let o = kernelgate(
        &dir,
        &["run", "saxpy::vec4"],
        &[("KERNELGATE_BASE", "base-suites")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn trials_whose_code_is_identical_at_the_base_are_skipped_without_a_gpu() {
    // The candidate only adds a comment to saxpy.cu: every trial's identity is the base's.
    repo::require_nvrtc();
    let dir = repository("identical");
    let results = dir.join("results.json");
    let o = kernelgate(
        &dir,
        &["run"],
        &[
            ("KERNELGATE_BASE", "HEAD~1"),
            ("KERNELGATE_RESULTS", results.to_str().unwrap()),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let said = text(&o);
    let line = said
        .lines()
        .find(|l| l.starts_with("test saxpy::vec4::n=4096 "))
        .unwrap();
    assert!(line.contains(" ... identical code to base "), "{line}");
    assert!(
        said.contains("0 trial(s) compared, 8 identical code"),
        "{said}"
    );
    assert!(
        said.contains("kernelgate: 8 trial(s) skipped as identical code (not timed, correctness not run: the base passed it)"),
        "{said}"
    );
    let r = kernelgate::report::results::Results::load(&results).unwrap();
    assert_eq!(r.format, kernelgate::report::results::FORMAT);
    assert_eq!(r.identical.as_ref().map(|i| i.skipped), Some(8));
    let vec4 = r
        .trials
        .iter()
        .find(|t| t.name == "saxpy::vec4::n=4096")
        .unwrap();
    let (code, base) = (
        vec4.code.as_ref().unwrap(),
        vec4.base_code.as_ref().unwrap(),
    );
    assert_eq!(code.identity, base.identity);
    assert_eq!(code.kernels.len(), 2, "the kernel and its reference");
}
