//! Git repositories made in a test's scratch folder, and the `kernelgate` binary run in them
//! with a clean environment: for the tests of paired mode and of `kernelgate sass --base`.
//! Included with `#[path = "common/repo.rs"] mod repo;` by the tests that use it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty folder `name` under the tests' scratch folder `group`.
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs git in `dir` as a fixed author; its trimmed output, or a failed test.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Runs `kernelgate ARGS` in `dir` without any inherited `KERNELGATE_*` variable, GPU or `CI`,
/// with `env` set.
pub fn kernelgate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernelgate"));
    cmd.current_dir(dir).args(args);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("KERNELGATE_")) {
        cmd.env_remove(k);
    }
    cmd.env("CUDA_VISIBLE_DEVICES", "").env_remove("CI");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Standard output, then standard error.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// For a test that compiles with NVRTC (marked `#[ignore]` with that reason, so a run without
/// NVRTC lists it as ignored, never as passed): fails, saying why, where NVRTC does not load.
/// (Unused by the tests that include this file without compiling anything.)
#[allow(dead_code)]
pub fn require_nvrtc() {
    if let Some(why) = kernelgate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
}
