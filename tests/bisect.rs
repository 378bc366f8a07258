//! `kernelgate bisect` on a real git history (`docs/examples/bisect-demo.sh`: 8 commits after a
//! good one, a broken commit, code-neutral commits and one real regression), without a GPU:
//! the commits' suites come out of git and their trial identities from NVRTC's cubins, and a
//! scripted probe stands in for the GPU's timing — so the search, the identical-code decisions,
//! the skipped broken commit and the printed report are checked here, and the timing on a GPU.

#[path = "common/repo.rs"]
mod repo;

use kernelgate::bisect::{bisect, Broken, Commit, How, Probe, Repo, Report, Timed};
use kernelgate::config::Config;
use kernelgate::gate::Comparison;
use repo::{kernelgate, text};
use std::path::{Path, PathBuf};
use std::process::Command;

const TRIAL: &str = "saxpy::vec4::n=16777216";

/// The demo history in a scratch folder.
fn history(name: &str) -> PathBuf {
    let dir = repo::scratch("bisect", name);
    let o = Command::new("bash")
        .arg("docs/examples/bisect-demo.sh")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

fn config(dir: &Path) -> Config {
    Config {
        suites: dir.join("suites"),
        cache: dir.join("target/kernelgate-cache"),
        ..Config::from_env().unwrap()
    }
}

fn change(slowdown: f64) -> Comparison {
    Comparison {
        slowdown,
        low: slowdown - 0.01,
        high: slowdown + 0.01,
        p: 1e-5,
        p_adjusted: 1e-5,
    }
}

/// Identities from the repository, timing from a script: the commits from `vec4: 32-thread
/// blocks` on are 12% slower than good.
struct Scripted<'r, 'c> {
    repo: &'r mut Repo<'c>,
    regressed: Vec<String>,
    timed: Vec<String>,
}

impl Probe for Scripted<'_, '_> {
    fn identity(&mut self, commit: &Commit) -> Result<Option<String>, Broken> {
        self.repo.identity(commit)
    }
    fn time(&mut self, commit: &Commit) -> Timed {
        self.timed.push(commit.subject.clone());
        if self.regressed.contains(&commit.id) {
            Timed::Regressed(change(1.12))
        } else {
            Timed::Unchanged(Some(change(1.0)))
        }
    }
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn the_first_regressed_commit_is_found_with_few_timings_around_a_broken_one() {
    repo::require_nvrtc();
    let dir = history("search");
    let config = config(&dir);
    let mut repo = Repo::new(&config, &[], TRIAL, "sm_90");
    let (good, commits, _) = repo.prepare("HEAD~8", "HEAD").unwrap();
    assert_eq!(commits.len(), 8);
    let by = |subject: &str| {
        commits
            .iter()
            .find(|c| c.subject.starts_with(subject))
            .unwrap()
            .clone()
    };
    let regression = by("vec4: 32-thread blocks");
    let first_bad = commits.iter().position(|c| c == &regression).unwrap();
    // The identities the search decides by: code-neutral commits share good's or the
    // regression's; the half-done edit does not compile.
    let good_id = repo.identity(&good).unwrap().unwrap();
    let regressed_id = repo.identity(&regression).unwrap().unwrap();
    assert_ne!(good_id, regressed_id);
    for c in &commits[first_bad + 1..] {
        assert_eq!(
            repo.identity(c).unwrap().as_ref(),
            Some(&regressed_id),
            "{}",
            c.subject
        );
    }
    assert_eq!(
        repo.identity(&by("saxpy.cu: say why")).unwrap(),
        Some(good_id.clone())
    );
    let broken = by("vec4: start using fmaf");
    let why = repo.identity(&broken).unwrap_err().to_string();
    assert!(why.contains("does not compile"), "{why}");
    let fmaf_same = repo.identity(&by("vec4: fmaf(a, x, y)")).unwrap() == Some(good_id);
    eprintln!("fmaf(a, x, y) gives good's code: {fmaf_same}");

    let regressed: Vec<String> = commits[first_bad..].iter().map(|c| c.id.clone()).collect();
    let mut probe = Scripted {
        repo: &mut repo,
        regressed,
        timed: Vec::new(),
    };
    let found = bisect(&good, commits.clone(), &mut probe);
    let timed = probe.timed.clone();
    assert_eq!(found.first.as_ref(), Some(&regression), "{found:?}");
    // Bad is timed; the rest is decided by identity, except a commit whose code is new.
    assert_eq!(timed[0], "saxpy.toml: a comment", "bad is confirmed first");
    assert!(timed.len() <= if fmaf_same { 1 } else { 2 }, "{timed:?}");
    let (n_timed, same) = found.counts();
    assert_eq!(n_timed, timed.len());
    assert!(same >= 2, "{found:?}");
    assert!(
        matches!(found.how(&broken.id), Some(How::Broken(_))),
        "the broken commit was probed and skipped: {found:?}"
    );
    let since_parent = repo.since_parent(&regression);
    let (parent, changes) = since_parent.clone().unwrap();
    let (code, diffs) = (changes.code, changes.diffs);
    assert_eq!(
        parent.subject,
        "vec4: fmaf(a, x, y), the same FMA spelt out"
    );
    assert!(
        diffs.is_empty(),
        "a launch change changes no kernel's code: {diffs:?}"
    );
    let report = Report {
        trial: TRIAL,
        good: &good,
        range: 8,
        found: &found,
        since_parent,
    };
    let lines = report.lines();
    let text = lines.join("\n");
    eprintln!("{text}");
    assert_eq!(
        lines[0],
        format!(
            "kernelgate bisect: `{TRIAL}` first regressed at {} \"vec4: 32-thread blocks\"",
            regression.short()
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "  +12.0% [+11.0%, +13.0%] against good {} (paired: its time over good's, 95% interval)",
            good.short()
        )
    );
    assert!(
        text.contains(&format!(
            "probed {}: {n_timed} timed, {same} decided without timing (identical code), 1 skipped",
            found.probed.len()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "    skipped {} \"vec4: start using fmaf (half-done)\": suite `saxpy`",
            broken.short()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  {}: changed since its parent {}: launches",
            regression.short(),
            parent.short()
        )),
        "{text}"
    );
    assert!(code.as_ref().is_some_and(|c| !c.is_same()), "{code:?}");
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn a_code_change_comes_with_its_sass_diff_against_the_parent() {
    repo::require_nvrtc();
    let dir = history("sass");
    // One more commit that changes saxpy_vec4's code: one addend negated.
    let cu = dir.join("suites/saxpy/saxpy.cu");
    let text = std::fs::read_to_string(&cu).unwrap();
    let negated = text.replace("yv.w = a * xv.w + yv.w;", "yv.w = a * xv.w - yv.w;");
    assert_ne!(negated, text);
    std::fs::write(&cu, negated).unwrap();
    repo::git(&dir, &["commit", "-q", "-am", "vec4: negate w"]);
    let config = config(&dir);
    let mut repo = Repo::new(&config, &[], TRIAL, "sm_90");
    let (parent, commits, _) = repo.prepare("HEAD~1", "HEAD").unwrap();
    let changes = repo.changes(&parent, &commits[0]).unwrap();
    let (diffs, note) = (changes.diffs, changes.note);
    assert_eq!(
        changes.code.unwrap().changed_kernels(),
        [(kernelgate::code::Role::Kernel, "vec4")]
    );
    assert_eq!(
        diffs.len(),
        1,
        "the kernel, not its unchanged reference: {diffs:?}"
    );
    let lines = diffs[0].lines().join("\n");
    assert!(
        lines.starts_with("changed  saxpy::vec4 (sm_90)\n  code changed: "),
        "{lines}"
    );
    match note {
        None => assert!(
            lines.contains("+FFMA") && lines.contains("-FFMA"),
            "a one-instruction change: {lines}"
        ),
        Some(why) => assert!(lines.contains(&format!("no SASS: {why}")), "{lines}"),
    }
}

#[test]
fn the_command_needs_revisions_it_can_use_and_a_gpu_to_time() {
    let dir = history("command");
    let run = |args: &[&str]| kernelgate(&dir, &[&["bisect"], args].concat(), &[]);
    for (args, said) in [
        (
            ["no-such-rev", "HEAD", TRIAL],
            "`no-such-rev` is not a commit in this repository",
        ),
        (
            ["HEAD", "HEAD~8", TRIAL],
            "`HEAD` is not an ancestor of `HEAD~8`",
        ),
        (
            ["HEAD~8", "HEAD", "saxpy::nothing::n=4096"],
            "no trial `saxpy::nothing::n=4096` at this commit",
        ),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(said), "{}", text(&o));
    }
    if kernelgate::device::driver_missing().is_some()
        && kernelgate::device::nvrtc_missing().is_none()
    {
        // Bad's code differs from good's: it must be timed, and there is no GPU here.
        let o = run(&["HEAD~8", "HEAD", TRIAL]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("no first regressed commit found: no CUDA driver"),
            "{}",
            text(&o)
        );
    }
}
