//! `kernelgate compare OLD.json NEW.json` on synthetic results files: the table, the verdicts
//! and the exit codes (0 none regressed, 1 regressed, 2 bad input).

use kernelgate::baseline::Stored;
use kernelgate::measure::Footprint;
use kernelgate::report::results::{
    BaseRevision, Measurement, Results, Status, TrialRecord, FORMAT,
};
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use std::path::PathBuf;
use std::process::Command;

fn record(name: &str, median: f64, rng: &mut rand_chacha::ChaCha8Rng) -> TrialRecord {
    let noise: LogNormal<f64> = LogNormal::new(0.0, 0.01).unwrap();
    let samples: Vec<f64> = (0..32).map(|_| median * noise.sample(rng)).collect();
    TrialRecord {
        name: name.into(),
        suite: "s".into(),
        file: "suites/s.toml".into(),
        line: 10,
        status: Status::Passed,
        failure: None,
        device_ordinal: Some(0),
        ignored: None,
        measurement: Some(Measurement {
            regime: kernelgate::measure::Regime::Cold,
            batch: [1, 1],
            launch_floor: 3.4e-6,
            time: Stored {
                median,
                low: median,
                high: median,
            },
            time_samples: samples,
            speedup: None,
            speedup_samples: vec![],
            max_slowdown: 0.03,
            precision: None,
            hit_time_cap: false,
            l2_flush: None,
            clocks: Default::default(),
            reference: None,
            footprint: Footprint {
                pool_peak: 1 << 20,
                free_drop: 0,
                local_reservation: 0,
                fp64: None,
                library: None,
                launches: vec![],
            },
            bytes: None,
            flops: None,
            baseline_samples: vec![],
            baseline_footprint: None,
            trial_seconds: None,
            units: vec![],
            counters: None,
            baseline_counters: None,
            counter_changes: vec![],
            counter_gate: None,
            declared_work: None,
            flops_type: None,
            roofline: None,
        }),
        verdict: None,
        gate: None,
        breaches: Vec::new(),
        resource_changes: Vec::new(),
        failure_detail: None,
        commands: None,
        compiled: None,
        code: None,
        base_code: None,
        code_change: None,
        evidence: None,
    }
}

fn results(trials: Vec<TrialRecord>) -> Results {
    Results {
        format: FORMAT,
        kernelgate: "0.1.0".into(),
        date: "2026-11-21".into(),
        device: None,
        device_info: None,
        trials,
        totals: None,
        base: None,
        gone: Vec::new(),
        identical: None,
        sass: Vec::new(),
        sass_note: None,
        undecided: Vec::new(),
        pool: Vec::new(),
        provenance: Default::default(),
    }
}

fn write(name: &str, r: &Results) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    r.save(&p).unwrap();
    p
}

fn compare(old: &PathBuf, new: &PathBuf) -> (Option<i32>, String, String) {
    compare_with(&[], old, new)
}

fn compare_with(flags: &[&str], old: &PathBuf, new: &PathBuf) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .arg("compare")
        .args(flags)
        .arg(old)
        .arg(new)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn a_regression_between_two_files_exits_1() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let old = write(
        "old.json",
        &results(vec![
            record("s::a::n=1", 10e-6, &mut rng),
            record("s::b::n=1", 20e-6, &mut rng),
        ]),
    );
    let new = write(
        "new.json",
        &results(vec![
            record("s::a::n=1", 11e-6, &mut rng),
            record("s::b::n=1", 20e-6, &mut rng),
            record("s::c::n=1", 5e-6, &mut rng),
        ]),
    );
    let (code, out, err) = compare(&old, &new);
    assert_eq!(code, Some(1), "{out}{err}");
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} in {out}"))
            .to_string()
    };
    assert!(line("s::a::n=1").ends_with("regressed"), "{out}");
    assert!(line("s::a::n=1").contains("+10."), "{out}");
    assert!(line("s::c::n=1").ends_with("only in NEW"), "{out}");
    assert!(
        !out.lines().any(|l| l.starts_with("s::b::n=1")),
        "unchanged trials are not listed by default: {out}"
    );
    assert!(
        out.contains("2 compared: 1 regressed, 0 improved, 0 inconclusive, 1 unchanged; 1 trial(s) that did not change not shown (`--all` lists them)"),
        "{out}"
    );
    let (code, all, _) = compare_with(&["--all"], &old, &new);
    assert_eq!(code, Some(1));
    assert!(
        all.lines()
            .any(|l| l.starts_with("s::b::n=1") && l.ends_with("unchanged")),
        "{all}"
    );
}

/// A compile trial (never timed) that passed on both sides is not a change; a trial that
/// only OLD has is listed as gone from NEW.
#[test]
fn compile_trials_are_not_changes_and_old_only_trials_are_listed() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let compile = |mut t: TrialRecord| {
        t.name = "s::compile".into();
        t.measurement = None;
        t
    };
    let old = write(
        "compile-old.json",
        &results(vec![
            compile(record("x", 1.0, &mut rng)),
            record("s::a::n=1", 10e-6, &mut rng),
            record("s::gone::n=1", 10e-6, &mut rng),
        ]),
    );
    let new = write(
        "compile-new.json",
        &results(vec![
            compile(record("x", 1.0, &mut rng)),
            record("s::a::n=1", 10e-6, &mut rng),
        ]),
    );
    let (code, out, err) = compare(&old, &new);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!out.contains("s::compile"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("s::gone::n=1") && l.ends_with("only in OLD")),
        "{out}"
    );
}

/// Each file says where it came from, read from the file; different modes and suite files
/// are warned about; different devices are refused unless `--allow-device`.
#[test]
fn provenance_modes_and_devices() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let mut stored = results(vec![record("s::a::n=1", 10e-6, &mut rng)]);
    stored.provenance.commit = Some("1111111aaaaaaa".into());
    stored.provenance.branch = Some("main".into());
    stored.provenance.started = Some("2026-11-21T10:00:00Z".into());
    stored
        .provenance
        .suites
        .insert("s".into(), "digest-one".into());
    let mut paired = results(vec![record("s::a::n=1", 10e-6, &mut rng)]);
    paired.provenance.commit = Some("2222222bbbbbbb".into());
    paired
        .provenance
        .suites
        .insert("s".into(), "digest-two".into());
    paired.base = Some(BaseRevision {
        rev: "origin/main".into(),
        commit: "1111111aaaaaaa".into(),
    });
    let (old, new) = (
        write("mode-old.json", &stored),
        write("mode-new.json", &paired),
    );
    let (code, out, err) = compare(&old, &new);
    assert_eq!(code, Some(0), "{out}{err}");
    let header: Vec<&str> = out.lines().take(2).collect();
    assert!(
        header[0].starts_with("OLD: ")
            && header[0].contains(
                "commit 1111111 (main) started 2026-11-21T10:00:00Z; against stored baselines"
            ),
        "{out}"
    );
    assert!(
        header[1].contains("commit 2222222; paired against KERNELGATE_BASE=origin/main"),
        "{out}"
    );
    assert!(
        out.contains("warning: the runs were decided in different modes"),
        "{out}"
    );
    assert!(
        out.contains("warning: the suite files of `s` differ"),
        "{out}"
    );

    let mut other = paired.clone();
    other.base = None;
    other.provenance.suites = stored.provenance.suites.clone();
    let mut h100 = stored.clone();
    h100.device = Some(device("NVIDIA H100 80GB HBM3"));
    other.device = Some(device("NVIDIA H200"));
    let (a, b) = (write("dev-old.json", &h100), write("dev-new.json", &other));
    let (code, out, err) = compare(&a, &b);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("error: the files come from different devices (OLD: NVIDIA H100 80GB HBM3")
            && err.contains("`--allow-device` compares them anyway"),
        "{err}"
    );
    let (code, out, _) = compare_with(&["--allow-device"], &a, &b);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("warning: the files come from different devices"),
        "{out}"
    );
    assert!(!out.contains("different modes"), "{out}");
}

fn device(name: &str) -> kernelgate::baseline::Fingerprint {
    kernelgate::baseline::Fingerprint {
        name: name.into(),
        compute_capability: "9.0".into(),
        sm_count: 132,
        memory_gib: 80,
        driver: "580.159.04".into(),
        cuda: "13.0".into(),
    }
}

#[test]
fn the_same_file_twice_exits_0() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(10);
    let same = write(
        "same.json",
        &results(vec![record("s::a::n=1", 10e-6, &mut rng)]),
    );
    let (code, out, _) = compare(&same, &same);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("unchanged"), "{out}");
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let bad = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad.json");
    std::fs::write(&bad, "{\"format\": 7}").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let good = write(
        "good.json",
        &results(vec![record("s::a::n=1", 10e-6, &mut rng)]),
    );
    let (code, _, err) = compare(&bad, &good);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("bad.json") && err.contains("format 7"),
        "{err}"
    );
    let (code, _, err) = compare(&good, &PathBuf::from("no/such.json"));
    assert_eq!(code, Some(2));
    assert!(err.contains("no/such.json"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .args(["compare", "one.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// A trial that failed in NEW fails `compare` with NEW's own failure class — 101 for a wrong
/// output or a fault, whatever OLD says — and is listed whether or not OLD has it; a harness
/// failure is 2, a performance failure alone 1. `--json` says the same.
#[test]
fn a_run_that_lost_correctness_fails_compare() {
    use kernelgate::report::results::{FailKind, TrialFailure};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(14);
    let failed = |mut t: TrialRecord, f: TrialFailure| {
        t.status = Status::Failed;
        t.failure = Some(f.kind());
        t.failure_detail = Some(f);
        t.measurement = None;
        t
    };
    let old = write(
        "lost-old.json",
        &results(vec![
            record("s::a::n=1", 10e-6, &mut rng),
            record("s::b::n=1", 20e-6, &mut rng),
            record("s::c::n=1", 20e-6, &mut rng),
        ]),
    );
    let wrong = TrialFailure::WrongOutput("y[3]: 2 against 1".into());
    let new_trials = vec![
        failed(record("s::a::n=1", 10e-6, &mut rng), wrong.clone()),
        record("s::b::n=1", 20e-6, &mut rng),
        record("s::c::n=1", 20e-6, &mut rng),
        // Only in NEW, and failed: listed all the same.
        failed(
            record("s::new::n=1", 1e-6, &mut rng),
            TrialFailure::Timeout { seconds: 5 },
        ),
    ];
    let new = write("lost-new.json", &results(new_trials.clone()));
    let (code, out, err) = compare(&old, &new);
    assert_eq!(code, Some(101), "{out}{err}");
    assert!(
        out.lines().any(|l| l.starts_with("s::a::n=1")
            && l.ends_with("FAILED in NEW: correctness (wrong output); passed in OLD")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("s::new::n=1")
            && l.ends_with("FAILED in NEW: correctness (time-out); not in OLD")),
        "{out}"
    );
    assert!(
        out.contains("2 compared: 0 regressed, 0 improved, 0 inconclusive, 2 unchanged; 2 trial(s) FAILED in NEW"),
        "{out}"
    );
    let (code, json, _) = compare_with(&["--json"], &old, &new);
    assert_eq!(code, Some(101));
    let v: serde_json::Value = serde_json::from_str(&json).expect("compare --json is JSON");
    assert_eq!(v["summary"]["failed_in_new"], 2);
    assert_eq!(v["summary"]["exit_code"], 101);
    assert_eq!(v["trials"].as_array().unwrap().len(), 4);
    assert_eq!(v["trials"][0]["failed"]["kind"], "correctness");
    assert_eq!(v["trials"][0]["failed"]["what"], "wrong output");

    // The worst class decides: a harness failure is 2; a performance failure alone is 1.
    let mut worst = new_trials.clone();
    worst[1] = failed(worst[1].clone(), TrialFailure::Harness("probe".into()));
    let (code, out, _) = compare(&old, &write("lost-harness.json", &results(worst)));
    assert_eq!(code, Some(2), "{out}");
    let perf = vec![
        failed(
            record("s::a::n=1", 10e-6, &mut rng),
            TrialFailure::OutOfMemory("12 GiB".into()),
        ),
        record("s::b::n=1", 20e-6, &mut rng),
    ];
    let (code, out, _) = compare(&old, &write("lost-perf.json", &results(perf)));
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("FAILED in NEW: performance (out of memory)"),
        "{out}"
    );
    assert_eq!(FailKind::Performance.exit_code(), 1);
}

/// `merge` is the gate of a sharded run: its exit code is the merged run's — 101 where a shard
/// has a correctness failure, 1 where the worst is a performance failure, 0 where none failed.
#[test]
fn merge_exits_with_the_runs_code() {
    use kernelgate::report::provenance::Shard;
    use kernelgate::report::results::TrialFailure;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
    let shard = |k, trials| {
        let mut r = results(trials);
        r.provenance.shard = Some(Shard { index: k, count: 2 });
        r
    };
    let fail = |mut t: TrialRecord, f: TrialFailure| {
        t.status = Status::Failed;
        t.failure = Some(f.kind());
        t.failure_detail = Some(f);
        t
    };
    let merge = |name: &str, one: Results, two: Results| {
        let (a, b) = (
            write(&format!("{name}-1.json"), &one),
            write(&format!("{name}-2.json"), &two),
        );
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-merged.json"));
        let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
            .arg("merge")
            .args([&out, &a, &b])
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
        )
    };
    let (code, out) = merge(
        "clean",
        shard(1, vec![record("s::a::n=1", 1e-5, &mut rng)]),
        shard(2, vec![record("s::b::n=1", 1e-5, &mut rng)]),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("none failed\n"), "{out}");
    let wrong = fail(
        record("s::b::n=1", 1e-5, &mut rng),
        TrialFailure::WrongOutput("y".into()),
    );
    let oom = fail(
        record("s::a::n=1", 1e-5, &mut rng),
        TrialFailure::OutOfMemory("x".into()),
    );
    let (code, out) = merge("wrong", shard(1, vec![oom.clone()]), shard(2, vec![wrong]));
    assert_eq!(code, Some(101), "{out}");
    assert!(out.ends_with("2 failed (worst: correctness)\n"), "{out}");
    let (code, out) = merge(
        "perf",
        shard(1, vec![oom]),
        shard(2, vec![record("s::b::n=1", 1e-5, &mut rng)]),
    );
    assert_eq!(code, Some(1), "{out}");
}

/// `compare --markdown` and `report --markdown`: the comparison and the run's own summary as
/// Markdown, for a pull-request comment.
#[test]
fn markdown_for_a_pull_request_comment() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    let old = write(
        "md-old.json",
        &results(vec![
            record("s::a::n=1", 10e-6, &mut rng),
            record("s::b::n=1", 20e-6, &mut rng),
        ]),
    );
    let new = write(
        "md-new.json",
        &results(vec![
            record("s::a::n=1", 12e-6, &mut rng),
            record("s::b::n=1", 20e-6, &mut rng),
        ]),
    );
    let (code, out, _) = compare_with(&["--markdown"], &old, &new);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("## kernelgate compare\n"), "{out}");
    assert!(
        out.contains("| trial | old | new | change [95% interval] | p (BH) | verdict |\n| --- | --- | --- | --- | --- | --- |\n| `s::a::n=1` | "),
        "{out}"
    );
    assert!(out.contains(" | **regressed** |"), "{out}");
    let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .args(["report", new.to_str().unwrap(), "--markdown", "-"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{md}");
    assert!(md.starts_with("## kernelgate: "), "{md}");
    assert!(md.contains("| `s::a::n=1` |"), "{md}");
    let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .args(["report", new.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "--html or --markdown is required");
}

/// A results file holding one trial twice is refused where it is read (the one validator
/// `lint` uses), naming both places: by `compare`, `merge`, `report` and `history import`.
#[test]
fn a_trial_twice_in_one_file_is_refused_where_it_is_read() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let twice = write(
        "twice.json",
        &results(vec![
            record("s::a::n=1", 1e-5, &mut rng),
            record("s::b::n=1", 1e-5, &mut rng),
            record("s::a::n=1", 1e-5, &mut rng),
        ]),
    );
    let good = write(
        "once.json",
        &results(vec![record("s::a::n=1", 1e-5, &mut rng)]),
    );
    let db = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("twice.sqlite");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("twice-merged.json");
    for args in [
        vec!["compare".into(), good.clone(), twice.clone()],
        vec!["merge".into(), out, twice.clone()],
        vec![
            "history".into(),
            "import".into(),
            twice.clone(),
            "--db".into(),
            db,
        ],
        vec!["lint".into(), twice.clone()],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(
                "`trials[2].name` `s::a::n=1` is trials[0] too: a run records each trial once"
            ),
            "{args:?}: {err}"
        );
    }
}
