//! The perf binary under nextest, on a machine without a GPU: processes started the way nextest
//! starts them (`--exact NAME --nocapture`, `NEXTEST_*` variables, all at once as nextest does
//! without this repository's test group), checked for one run shared by all of them. As in
//! `tests/cli.rs`, the GPUs are hidden, so a machine with one sees the same.

use kernelgate::report::results::{Results, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `kernelgate run ARGS` with the options of these tests; `nextest` adds nextest's variables
/// for run `id`, as nextest sets them for `trial`.
fn kernelgate(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernelgate"));
    cmd.arg("run").args(args);
    for key in [
        "KERNELGATE_SUITES",
        "KERNELGATE_REQUIRE_GPU",
        "KERNELGATE_REQUIRE_NVRTC",
        "KERNELGATE_DEVICE",
        "KERNELGATE_SHARD",
        "KERNELGATE_BLESS",
        "KERNELGATE_RESULTS",
        "KERNELGATE_JUNIT",
        "KERNELGATE_MARKDOWN",
        "GITHUB_STEP_SUMMARY",
        "NEXTEST",
        "NEXTEST_EXECUTION_MODE",
        "NEXTEST_RUN_ID",
        "NEXTEST_TEST_NAME",
        "NEXTEST_STRESS_CURRENT",
    ] {
        cmd.env_remove(key);
    }
    cmd.env("CUDA_VISIBLE_DEVICES", "");
    let tmp = env!("CARGO_TARGET_TMPDIR");
    cmd.env(
        "KERNELGATE_BASELINES",
        format!("{tmp}/nextest-no-baselines"),
    );
    cmd.env("KERNELGATE_CACHE", format!("{tmp}/nextest-cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn names(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test").map(String::from))
        .collect()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A fresh folder under the test target directory, as a run's `CARGO_TARGET_DIR`.
fn fresh(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn without_a_driver_gpu_trials_are_listed_ignored_so_nextest_skips_them() {
    let list = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["--list", "--format", "terse"];
        args.extend(extra);
        let o = kernelgate(&args, env).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        names(&o)
    };
    let all = list(&[], &[]);
    let ignored = list(&["--ignored"], &[]);
    assert!(
        all.contains(&"saxpy::compile".to_string())
            && all.contains(&"saxpy::vec4::n=4096".to_string()),
        "every trial is listed: {all:?}"
    );
    let compile: Vec<&String> = all.iter().filter(|n| n.ends_with("::compile")).collect();
    let gpu: Vec<&String> = all.iter().filter(|n| !n.ends_with("::compile")).collect();
    let no_driver = kernelgate::device::driver_missing().is_some();
    // The binary finds the wheels' NVRTC where this test process may not load it.
    let no_nvrtc = !kernelgate::device::libraries::nvrtc_found();
    for n in &gpu {
        assert_eq!(ignored.contains(n), no_driver, "{n}");
    }
    for n in &compile {
        assert_eq!(ignored.contains(n), no_nvrtc, "{n}");
    }
    // `--ignored` runs exactly what `--list --ignored` lists, each saying why it is ignored.
    let o = kernelgate(&["--ignored"], &[]).output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let lines: Vec<(&str, &str)> = out
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
        .collect();
    let ran: Vec<&str> = lines.iter().map(|(name, _)| name.trim_end()).collect();
    assert_eq!(ran, ignored, "{out}");
    assert!(
        lines.iter().all(|(_, end)| end.starts_with("ignored (")),
        "{out}"
    );
    // Where a GPU must be present, its trials run (and fail) instead of being skipped.
    let required = list(
        &["--ignored"],
        &[
            ("KERNELGATE_REQUIRE_GPU", "1"),
            ("KERNELGATE_REQUIRE_NVRTC", "1"),
        ],
    );
    assert!(required.is_empty(), "{required:?}");
}

#[test]
fn one_process_runs_every_trial_and_each_answers_for_its_own() {
    let dir = fresh("nextest-run");
    let tmp = dir.to_str().unwrap();
    let (results, junit, summary) = (
        format!("{tmp}/results.json"),
        format!("{tmp}/junit.xml"),
        format!("{tmp}/step-summary.md"),
    );
    let run_id = format!("test-{}", std::process::id());
    let listed = |extra: &[&str]| {
        let mut args = vec!["--list", "--format", "terse"];
        args.extend(extra);
        names(&kernelgate(&args, &[]).output().unwrap())
    };
    let (all, ignored) = (listed(&[]), listed(&["--ignored"]));
    // Every trial's process at once, as `--run-ignored all` without a test group starts them:
    // ignored ones with `--ignored`.
    let children: Vec<_> = all
        .iter()
        .map(|name| {
            let mut args = vec!["--exact", name, "--nocapture"];
            if ignored.contains(name) {
                args.push("--ignored");
            }
            let child = kernelgate(
                &args,
                &[
                    ("NEXTEST", "1"),
                    ("NEXTEST_EXECUTION_MODE", "process-per-test"),
                    ("NEXTEST_RUN_ID", &run_id),
                    ("NEXTEST_TEST_NAME", name),
                    ("CARGO_TARGET_DIR", tmp),
                    ("KERNELGATE_RESULTS", &results),
                    ("KERNELGATE_JUNIT", &junit),
                    ("GITHUB_STEP_SUMMARY", &summary),
                ],
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
            (name.clone(), child)
        })
        .collect();
    let outputs: Vec<(String, Output)> = children
        .into_iter()
        .map(|(n, c)| (n, c.wait_with_output().unwrap()))
        .collect();

    let ran_all = format!("this process ran all {} trials of the run", all.len());
    let ran: Vec<&String> = outputs
        .iter()
        .filter(|(_, o)| String::from_utf8_lossy(&o.stderr).contains(&ran_all))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(ran.len(), 1, "exactly one process ran the trials: {ran:?}");
    let shared = Results::load(Path::new(&results)).unwrap();
    assert_eq!(
        shared.trials.len(),
        all.len(),
        "the results file holds every trial"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(&format!("tests=\"{}\"", all.len())), "{xml}");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(
        summary.matches("## kernelgate:").count(),
        1,
        "appended once"
    );

    for (name, o) in &outputs {
        let out = text(o);
        assert_eq!(o.status.code(), Some(0), "{name}: {out}");
        if !ran.contains(&name) {
            assert!(
                out.contains(&format!("`{name}` answered at ")),
                "{name} answers from the shared run: {out}"
            );
        }
        let record = shared.trials.iter().find(|t| &t.name == name).unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("test {name} ... ")))
            .unwrap_or_else(|| panic!("{name} reports its trial: {out}"));
        match record.status {
            Status::Passed => assert!(line.ends_with(" ok"), "{line}"),
            Status::Ignored => assert!(
                line.ends_with(&format!(
                    "ignored ({})",
                    record.ignored.as_deref().unwrap_or_default()
                )),
                "{line}"
            ),
            Status::Failed => panic!("{name} failed without a GPU: {out}"),
        }
        let reported = out
            .lines()
            .filter(|l| l.starts_with("test ") && l.contains(" ... "))
            .count();
        assert_eq!(reported, 1, "{name} reports only its own trial: {out}");
    }
}

#[test]
fn nextest_without_a_run_id_is_refused() {
    let o = kernelgate(
        &["--exact", "saxpy::compile"],
        &[("NEXTEST_EXECUTION_MODE", "process-per-test")],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o)
            .contains("error: nextest runs one process per trial but did not set `NEXTEST_RUN_ID`"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("test saxpy"), "nothing ran");
}
