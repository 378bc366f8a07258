//! The whole run without a GPU: `kernelgate run` with scripted worker processes that speak the
//! real protocol, so the pool, the client, the two-GPU scheduler, re-measures, fresh-worker
//! confirmations, crashes, hangs, poisoned workers and signals are exercised as they are on a
//! GPU machine. This test binary is also the worker (`common/scripted_worker.rs`): `kernelgate`
//! starts it through `KERNELGATE_WORKER_PROGRAM`, and with `KERNELGATE_WORKER` set it serves.

#[path = "common/repo.rs"]
mod repo;
#[path = "common/scripted_worker.rs"]
mod scripted_worker;

use repo::{kernelgate, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A project holding the saxpy example suite (8 kernel trials) and a script `script.toml`.
fn project(name: &str, script: &str) -> PathBuf {
    let dir = repo::scratch("scripted", name);
    std::fs::create_dir_all(dir.join("suites/saxpy")).unwrap();
    std::fs::copy("suites/saxpy.toml", dir.join("suites/saxpy.toml")).unwrap();
    std::fs::copy("suites/saxpy/saxpy.cu", dir.join("suites/saxpy/saxpy.cu")).unwrap();
    std::fs::write(dir.join("script.toml"), script).unwrap();
    dir
}

/// The run's environment: two scripted GPUs, a 2 s time-out, no counters.
fn env(dir: &Path, script: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            kernelgate::worker::client::PROGRAM_ENV,
            std::env::current_exe().unwrap().display().to_string(),
        ),
        (
            scripted_worker::SCRIPT_ENV,
            dir.join(script).display().to_string(),
        ),
        ("KERNELGATE_DEVICE", "0,1".into()),
        ("KERNELGATE_TIMEOUT", "2".into()),
        ("KERNELGATE_COUNTERS", "off".into()),
        (
            "KERNELGATE_LOCK_DIR",
            dir.join("locks").display().to_string(),
        ),
        (
            "KERNELGATE_RESULTS",
            dir.join("results.json").display().to_string(),
        ),
    ]
}

fn run(dir: &Path, env: &[(&str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    kernelgate(dir, &["run"], &env)
}

/// Each kernel trial of the results file, by name.
fn trials(dir: &Path) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let results: Value = serde_json::from_str(&text).unwrap();
    results["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["name"].as_str().unwrap().ends_with("::compile"))
        .map(|t| (t["name"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

/// How many requests the scripted workers answered for `trial` (or GPU `gpu-N`).
fn calls(dir: &Path, trial: &str) -> usize {
    let file: String = match trial.starts_with("gpu-") {
        true => trial.into(),
        false => trial
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect(),
    };
    std::fs::read_to_string(dir.join("script.toml.calls").join(file))
        .map(|t| t.trim().parse().unwrap())
        .unwrap_or(0)
}

/// A project (`project`) with `script` as `script.toml`, blessed at 10 µs a trial by a scripted
/// run of its own (`bless.toml`); and that run's output.
fn blessed(name: &str, script: &str) -> (PathBuf, String) {
    let dir = project(name, script);
    std::fs::write(dir.join("bless.toml"), "[default]\ntime_us = 10.0\n").unwrap();
    let mut bless = env(&dir, "bless.toml");
    bless.push(("KERNELGATE_BLESS", "1".into()));
    let o = run(&dir, &bless);
    assert!(o.status.success(), "{}", text(&o));
    (dir, text(&o))
}

const GATE: &str = r#"
[default]
time_us = 10.0

[[trial]]
name = "saxpy::vec4::n=4096"
answers = [{ time_us = 11.0 }]

[[trial]]
name = "saxpy::vec4::n=1048576"
answers = [{ fault = "crash" }]

[[trial]]
name = "saxpy::naive::n=16777216"
answers = [{ fault = "hang" }]

[[trial]]
name = "saxpy::vec4::n=16777216"
answers = [{ time_us = 10.3, spread = 0.08 }, { time_us = 10.0 }]

[[trial]]
name = "saxpy::naive::n=1000003"
answers = [{ fault = "illegal-address" }]

[[trial]]
name = "saxpy::vec4::n=1000003"
answers = [{ fault = "wrong" }]
"#;

fn a_stored_gate_runs_end_to_end_on_two_scripted_gpus() {
    let (dir, t) = blessed("stored", GATE);
    assert!(t.contains("blessed saxpy::vec4::n=4096"), "{t}");

    let o = run(&dir, &env(&dir, "script.toml"));
    let t = text(&o);
    // Wrong outputs, faults, crashes and time-outs are correctness failures: libtest's 101.
    assert_eq!(o.status.code(), Some(101), "{t}");
    let trials = trials(&dir);
    let get = |name: &str| &trials.iter().find(|(n, _)| n == name).unwrap().1;
    // A slowdown of 10%: regressed, and confirmed in a fresh worker (a second request).
    let slow = get("saxpy::vec4::n=4096");
    assert_eq!(slow["verdict"]["verdict"], "regressed", "{slow}");
    assert_eq!(
        calls(&dir, "saxpy::vec4::n=4096"),
        2,
        "measured, then confirmed"
    );
    assert!(
        t.contains("confirming saxpy::vec4::n=4096 in a fresh worker"),
        "{t}"
    );
    // Inconclusive at first (a wide spread around +3%): re-measured with 4x the samples.
    let noisy = get("saxpy::vec4::n=16777216");
    assert_eq!(noisy["gate"]["remeasured"], true, "{noisy}");
    assert_eq!(noisy["verdict"]["verdict"], "unchanged", "{noisy}");
    assert_eq!(calls(&dir, "saxpy::vec4::n=16777216"), 2);
    // Each failure typed as it happened: a crash, a time-out, a sticky fault, a wrong output.
    let failure = |name: &str| get(name)["failure_detail"].clone();
    assert_eq!(
        failure("saxpy::vec4::n=1048576")["crashed"]["status"],
        "signal: 6 (SIGABRT)"
    );
    assert_eq!(failure("saxpy::naive::n=16777216")["timeout"]["seconds"], 2);
    assert_eq!(
        failure("saxpy::naive::n=1000003")["fault"]["name"],
        "CUDA_ERROR_ILLEGAL_ADDRESS"
    );
    assert!(failure("saxpy::vec4::n=1000003")["wrong_output"].is_string());
    // The unharmed trials pass, measured on both GPUs.
    let unchanged: Vec<&Value> = ["saxpy::naive::n=4096", "saxpy::naive::n=1048576"]
        .iter()
        .map(|n| get(n))
        .collect();
    assert!(unchanged.iter().all(|t| t["status"] == "passed"), "{t}");
    // Both GPU slots took trials (each scripted worker counts its requests).
    let (gpu0, gpu1) = (calls(&dir, "gpu-0"), calls(&dir, "gpu-1"));
    assert!(gpu0 > 0 && gpu1 > 0, "GPU 0: {gpu0}, GPU 1: {gpu1}");
    assert_eq!(
        gpu0 + gpu1,
        8 + 2,
        "8 trials, a re-measure and a confirmation"
    );
    // Every trial was asked for once at least, the crashed, hung and poisoned ones once each:
    // their workers were replaced, and nothing was sent twice.
    for name in [
        "saxpy::vec4::n=1048576",
        "saxpy::naive::n=16777216",
        "saxpy::naive::n=1000003",
    ] {
        assert_eq!(calls(&dir, name), 1, "{name}");
    }
    // 3 kernel trials pass, and the compile trial too where NVRTC is.
    assert!(t.contains("passed; 5 failed;"), "{t}");
}

/// A regression (confirmed in a fresh worker), an inconclusive trial (re-measured) and six
/// unchanged ones.
const SHARDED: &str = r#"
[default]
time_us = 10.0

[[trial]]
name = "saxpy::vec4::n=4096"
answers = [{ time_us = 11.0 }]

[[trial]]
name = "saxpy::vec4::n=16777216"
answers = [{ time_us = 10.3, spread = 0.08 }, { time_us = 10.0 }]
"#;

fn four_shards_merged_decide_as_one_process_does() {
    let verdicts = |file: &Path| -> Vec<(String, String, String, bool)> {
        let results: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let mut v: Vec<_> = results["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| !t["verdict"].is_null())
            .map(|t| {
                let word = |v: &Value| v.as_str().unwrap_or_default().to_string();
                let remeasured = t["gate"]["remeasured"].as_bool().unwrap_or(false);
                (
                    word(&t["name"]),
                    word(&t["verdict"]["verdict"]),
                    word(&t["status"]),
                    remeasured,
                )
            })
            .collect();
        v.sort();
        v
    };
    // One process.
    let (whole, _) = blessed("whole", SHARDED);
    let o = run(&whole, &env(&whole, "script.toml"));
    assert_eq!(o.status.code(), Some(1), "a regression fails: {}", text(&o));
    let one = verdicts(&whole.join("results.json"));
    assert_eq!(one.len(), 8, "{one:?}");
    assert!(
        one.contains(&(
            "saxpy::vec4::n=4096".into(),
            "regressed".into(),
            "failed".into(),
            false
        )),
        "{one:?}"
    );
    assert!(
        one.contains(&(
            "saxpy::vec4::n=16777216".into(),
            "unchanged".into(),
            "passed".into(),
            true
        )),
        "{one:?}"
    );
    // Four shards: each measures (and re-measures, and confirms) as its own family, defers its
    // verdicts and passes; `merge` decides all eight as one family.
    let (sharded, _) = blessed("sharded", SHARDED);
    let (mut files, mut outputs) = (Vec::new(), String::new());
    for k in 1..=4 {
        let file = sharded.join(format!("shard-{k}.json"));
        let mut e = env(&sharded, "script.toml");
        e.retain(|(key, _)| *key != "KERNELGATE_RESULTS");
        e.push(("KERNELGATE_RESULTS", file.display().to_string()));
        e.push(("KERNELGATE_SHARD", format!("{k}/4")));
        let o = run(&sharded, &e);
        assert!(o.status.success(), "shard {k}/4: {}", text(&o));
        assert!(
            text(&o).contains("its verdicts are deferred"),
            "{}",
            text(&o)
        );
        files.push(file.display().to_string());
        outputs.push_str(&text(&o));
    }
    // The regression is shown as its shard read it, and as deferred, never as the gate's.
    let regressed = outputs
        .lines()
        .find(|l| l.contains("saxpy::vec4::n=4096") && l.contains("REGRESSED"))
        .unwrap_or_else(|| panic!("{outputs}"));
    assert!(
        regressed
            .contains("deferred to `kernelgate merge` (this shard's trials alone read: REGRESSED"),
        "{regressed}"
    );
    assert_eq!(
        calls(&sharded, "saxpy::vec4::n=4096"),
        2,
        "confirmed in its shard"
    );
    assert_eq!(
        calls(&sharded, "saxpy::vec4::n=16777216"),
        2,
        "re-measured in its shard"
    );
    let mut args = vec!["merge", "merged.json"];
    args.extend(files.iter().map(String::as_str));
    let o = kernelgate(&sharded, &args, &[]);
    let t = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the merged run fails on the regression: {t}"
    );
    assert!(
        t.contains("decided the shards' 8 compared trial(s) as one family"),
        "{t}"
    );
    assert_eq!(verdicts(&sharded.join("merged.json")), one, "{t}");
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(sharded.join("merged.json")).unwrap())
            .unwrap();
    for t in merged["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["verdict"].is_null())
    {
        assert_eq!(t["gate"]["family"], 8, "{t}");
        assert_eq!(t["evidence"]["merged"], true, "decided by merge: {t}");
    }
}

fn a_pool_of_gpu_models_is_decided_per_device_and_reported_side_by_side() {
    // Two models, two shards each, each blessed on its own: model A regresses, model B does not.
    let dir = project("pool", "");
    let script = |model: &str, body: &str| format!("gpu = \"Model {model}\"\n{body}");
    let plain = "[default]\ntime_us = 10.0\n";
    for (file, text) in [
        ("bless-a.toml", script("A", plain)),
        ("bless-b.toml", script("B", plain)),
        ("a.toml", script("A", SHARDED)),
        ("b.toml", script("B", plain)),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    for bless in ["bless-a.toml", "bless-b.toml"] {
        let mut e = env(&dir, bless);
        e.push(("KERNELGATE_BLESS", "1".into()));
        let o = run(&dir, &e);
        assert!(o.status.success(), "{}", text(&o));
    }
    let mut files = Vec::new();
    for (model, k) in [("a", 1), ("a", 2), ("b", 1), ("b", 2)] {
        let file = dir.join(format!("{model}-{k}.json"));
        let mut e = env(&dir, &format!("{model}.toml"));
        e.retain(|(key, _)| *key != "KERNELGATE_RESULTS");
        e.push(("KERNELGATE_RESULTS", file.display().to_string()));
        e.push(("KERNELGATE_SHARD", format!("{k}/2")));
        let o = run(&dir, &e);
        assert!(o.status.success(), "{model} {k}/2: {}", text(&o));
        files.push(file.display().to_string());
    }
    let merge = |files: &[String]| {
        let mut args = vec!["merge", "merged.json"];
        args.extend(files.iter().map(String::as_str));
        kernelgate(&dir, &args, &[])
    };
    let o = merge(&files);
    let t = text(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "model A's regression fails the pool: {t}"
    );
    assert!(t.contains("a pool of 2 GPU models"), "{t}");
    for model in ["A", "B"] {
        assert!(
            t.contains(&format!("on Model {model} ("))
                && t.contains("decided the shards' 8 compared trial(s) as one family"),
            "{t}"
        );
    }
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap();
    assert_eq!(
        merged["trials"].as_array().unwrap().len(),
        0,
        "a pool's trials are its runs'"
    );
    let regressed = |run: &Value| -> Vec<String> {
        let trials = run["trials"].as_array().unwrap();
        for t in trials.iter().filter(|t| !t["verdict"].is_null()) {
            assert_eq!(
                t["gate"]["family"], 8,
                "one family per device, not one over both: {t}"
            );
        }
        let regressed = trials
            .iter()
            .filter(|t| t["verdict"]["verdict"] == "regressed");
        regressed
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let pool = merged["pool"].as_array().unwrap();
    assert_eq!(pool[0]["device"]["name"], "Model A");
    assert_eq!(pool[1]["device"]["name"], "Model B");
    assert_eq!(regressed(&pool[0]), ["saxpy::vec4::n=4096"]);
    assert!(regressed(&pool[1]).is_empty());
    // Side by side in the Markdown summary and the HTML report; each device's run after it.
    let o = kernelgate(
        &dir,
        &[
            "report",
            "merged.json",
            "--markdown",
            "-",
            "--html",
            "r.html",
            "--junit",
            "r.xml",
        ],
        &[],
    );
    let md = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", text(&o));
    // JUnit: a testsuite per suite and model, with the merged (not the shards' deferred) verdicts.
    let xml = std::fs::read_to_string(dir.join("r.xml")).unwrap();
    let suite_a = xml.find("<testsuite name=\"saxpy (Model A (").expect(&xml);
    let suite_b = xml.find("<testsuite name=\"saxpy (Model B (").expect(&xml);
    let vec4_a = xml[suite_a..suite_b]
        .split("<testcase")
        .find(|c| c.contains("saxpy::vec4::n=4096"));
    assert!(vec4_a.unwrap().contains("<failure"), "{xml}");
    assert!(!xml[suite_b..].contains("<failure"), "{xml}");
    assert!(
        md.starts_with("## kernelgate: a pool of 2 GPU models"),
        "{md}"
    );
    assert!(md.contains("| trial | Model A ("), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| `saxpy::vec4::n=4096` |"))
        .unwrap();
    assert!(
        row.contains("µs · reference") || row.contains("× · regressed |"),
        "{row}"
    );
    assert!(
        row.contains("regressed") && row.contains("unchanged"),
        "{row}"
    );
    assert!(md.contains("## Model A ("), "model A's own summary: {md}");
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(
        html.contains("a pool of 2 GPU models") && html.contains("id=\"d1-summary\""),
        "each device's ids its own"
    );
    // Model A's second shard missing: named with its device.
    let o = merge(&[files[0].clone(), files[2].clone(), files[3].clone()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("shard(s) 2/2 of the run on Model A ("),
        "{}",
        text(&o)
    );
    // A pool's file is not one device's run: compare refuses it, history imports each run.
    let o = kernelgate(&dir, &["compare", "merged.json", "merged.json"], &[]);
    assert!(text(&o).contains("is a pool of GPU models"), "{}", text(&o));
    let db = dir.join("h.sqlite").display().to_string();
    let import = ["history", "import", "merged.json", "--commit", "c0ffee"];
    let o = kernelgate(&dir, &import, &[("KERNELGATE_HISTORY", db.as_str())]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        text(&o).matches("kernelgate: run ").count(),
        2,
        "{}",
        text(&o)
    );
}

fn a_script_that_does_not_read_is_named_with_its_place() {
    let dir = project("bad", "[default]\ntime_us = \"ten\"\n");
    let mut e = env(&dir, "script.toml");
    e.push(("KERNELGATE_REQUIRE_GPU", "1".into()));
    let o = run(&dir, &e);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("script.toml: TOML parse error at line 2"), "{t}");
}

#[cfg(unix)]
fn sigterm_ends_a_run_waiting_on_a_hung_worker_with_what_it_measured() {
    let script = "[default]\ntime_us = 10.0\n\n[[trial]]\nname = \"saxpy::vec4::n=4096\"\nanswers = [{ fault = \"hang\" }]\n";
    let dir = project("sigterm", script);
    let mut e = env(&dir, "script.toml");
    e.retain(|(k, _)| *k != "KERNELGATE_DEVICE" && *k != "KERNELGATE_TIMEOUT");
    e.push(("KERNELGATE_TIMEOUT", "600".into()));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"));
    cmd.current_dir(&dir).arg("run");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("KERNELGATE_")) {
        cmd.env_remove(k);
    }
    for (k, v) in &e {
        cmd.env(k, v);
    }
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The hung trial is the second: wait until its request is counted.
    let started = std::time::Instant::now();
    while calls(&dir, "saxpy::vec4::n=4096") == 0 {
        assert!(
            started.elapsed().as_secs() < 60,
            "the hung trial never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let signalled = std::time::Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert!(
        signalled.elapsed().as_secs() < 10,
        "not the 600 s time-out: {t}"
    );
    assert_eq!(o.status.code(), Some(2), "{t}");
    let trials = trials(&dir);
    assert_eq!(
        trials.len(),
        1,
        "only the trial measured before the signal: {t}"
    );
    assert_eq!(trials[0].0, "saxpy::naive::n=4096");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert!(results.to_string().contains("SIGTERM"), "{results}");
}

fn a_paired_regression_is_confirmed_in_a_fresh_worker() {
    // Two revisions whose vec4 kernel differs (one addend negated): its trials are timed
    // against the base's; the script makes one of them 10% slower than its base.
    let script = "[default]\ntime_us = 10.0\nagainst_us = 10.0\n\n[[trial]]\nname = \"saxpy::vec4::n=4096\"\nanswers = [{ time_us = 11.0 }]\n";
    let dir = project("paired", script);
    std::fs::write(
        dir.join(".gitignore"),
        "script.toml*\nlocks\nresults.json\n",
    )
    .unwrap();
    repo::git(&dir, &["init", "-q"]);
    repo::git(&dir, &["add", "."]);
    repo::git(&dir, &["commit", "-qm", "base"]);
    let cu = dir.join("suites/saxpy/saxpy.cu");
    let code = std::fs::read_to_string(&cu).unwrap();
    let changed = code.replace("yv.w = a * xv.w + yv.w;", "yv.w = a * xv.w - yv.w;");
    assert_ne!(code, changed);
    std::fs::write(&cu, changed).unwrap();
    repo::git(&dir, &["commit", "-qam", "candidate"]);
    let mut e = env(&dir, "script.toml");
    e.push(("KERNELGATE_BASE", "HEAD~1".into()));
    let o = run(&dir, &e);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "a performance failure: {t}");
    assert!(
        t.contains("confirming saxpy::vec4::n=4096 in a fresh worker (regressed)"),
        "{t}"
    );
    assert_eq!(
        calls(&dir, "saxpy::vec4::n=4096"),
        2,
        "timed, then confirmed"
    );
    let trials = trials(&dir);
    let slow = &trials
        .iter()
        .find(|(n, _)| n == "saxpy::vec4::n=4096")
        .unwrap()
        .1;
    assert_eq!(slow["gate"]["kind"], "paired", "{slow}");
    assert_eq!(slow["verdict"]["verdict"], "regressed", "{slow}");
    let same = &trials
        .iter()
        .find(|(n, _)| n == "saxpy::vec4::n=1048576")
        .unwrap()
        .1;
    assert_eq!(same["verdict"]["verdict"], "unchanged", "{same}");
}

/// A size moved to a kernel's axis: the trials take new names (`saxpy::vec4[block=128]::n=4096`
/// for `saxpy::vec4::n=4096,block=128`), the reference is one trial per case instead of one per
/// block size, the old baseline entries are named stale by `lint` and the new trials are new
/// (not gated) until blessed. Then a change in which variant is fastest is reported, not failed.
fn a_size_moved_to_an_axis_renames_its_trials_and_the_fastest_variant_is_reported() {
    let dir = project("axes", "[default]\ntime_us = 10.0\n");
    let saxpy = std::fs::read_to_string("suites/saxpy.toml").unwrap();
    let sizes = "sizes = { n = [4096, 1_048_576, 16_777_216, 1_000_003] }";
    let as_size = saxpy
        .replace(sizes, "sizes = { n = [4096], block = [128, 256] }")
        .replace("ceil(n / 1024)", "ceil(n / (4 * block))")
        .replace("block = [256]", "block = [\"block\"]");
    std::fs::write(dir.join("suites/saxpy.toml"), &as_size).unwrap();
    let mut bless = env(&dir, "script.toml");
    bless.push(("KERNELGATE_BLESS", "1".into()));
    let o = run(&dir, &bless);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("blessed saxpy::naive::n=4096,block=128"),
        "{}",
        text(&o)
    );

    // The block an axis of `vec4` alone; the reference at a fixed block.
    let as_axis = saxpy.replace(sizes, "sizes = { n = [4096] }").replacen(
        "name = \"vec4\"",
        "name = \"vec4\"\naxes = { block = [128, 256] }",
        1,
    );
    let as_axis = as_axis
        .replace("ceil(n / 1024)", "ceil(n / (4 * block))")
        .replace(
            "block = [256]\nargs = [\"2.0f32\", \"x\", \"y\", \"n as i32\"]\n\n[check]",
            "block = [\"block\"]\nargs = [\"2.0f32\", \"x\", \"y\", \"n as i32\"]\n\n[check]",
        );
    std::fs::write(dir.join("suites/saxpy.toml"), &as_axis).unwrap();
    let fast = |variant: &str, us: f64| {
        format!("[default]\ntime_us = 10.0\n\n[[trial]]\nname = \"saxpy::vec4[block={variant}]::n=4096\"\nanswers = [{{ time_us = {us} }}]\n")
    };
    std::fs::write(dir.join("script.toml"), fast("128", 8.0)).unwrap();
    let o = run(&dir, &env(&dir, "script.toml"));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let names: Vec<String> = trials(&dir).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "saxpy::naive::n=4096",
            "saxpy::vec4[block=128]::n=4096",
            "saxpy::vec4[block=256]::n=4096"
        ]
    );
    assert!(t.contains("3 trial(s) new (not gated)"), "{t}");
    let lint = kernelgate(&dir, &["lint"], &[]);
    let l = text(&lint);
    assert!(
        l.contains("4 stale entries of trials the suite no longer has (left by an older revision of it): saxpy::naive::n=4096,block=128,"),
        "{l}"
    );
    assert!(
        t.contains("saxpy::vec4::n=4096: fastest of 2 variants [block=128] at 8."),
        "{t}"
    );

    // Blessed with [block=128] the faster; then [block=256] improves past it: reported, passed.
    let o = run(&dir, &bless);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(dir.join("script.toml"), fast("256", 6.0).replace("time_us = 10.0\n\n", "time_us = 10.0\n\n[[trial]]\nname = \"saxpy::vec4[block=128]::n=4096\"\nanswers = [{ time_us = 8.0 }]\n\n")).unwrap();
    let o = run(&dir, &env(&dir, "script.toml"));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("fastest of 2 variants [block=256] at 6.")
            && t.contains(
                "the fastest was [block=128] in what it was compared with (reported, not failed)"
            ),
        "{t}"
    );
}

/// The variants of a kernel on one case are timed in one request, in the same rounds against
/// one set of reference samples: each variant's speedup is against the same reference samples,
/// and the reference is sampled once per case. A variant that fails (here a wrong output) fails
/// its group's request, which is then run again kernel by kernel: its failure is its own.
fn a_kernels_variants_share_their_rounds_and_their_reference_samples() {
    let wrong = "saxpy::vec4[block=256]::n=4096";
    let script = format!(
        "[default]\ntime_us = 10.0\n\n[[trial]]\nname = \"{wrong}\"\nanswers = [{{ fault = \"wrong\" }}]\n"
    );
    let dir = project("groups", &script);
    let saxpy = std::fs::read_to_string("suites/saxpy.toml").unwrap();
    let sizes = "sizes = { n = [4096, 1_048_576, 16_777_216, 1_000_003] }";
    let suite = saxpy
        .replace(sizes, "sizes = { n = [4096, 1_048_576] }")
        .replacen(
            "name = \"vec4\"",
            "name = \"vec4\"\naxes = { block = [128, 256, 512] }",
            1,
        )
        .replace("ceil(n / 1024)", "ceil(n / (4 * block))")
        .replace(
            "block = [256]\nargs = [\"2.0f32\", \"x\", \"y\", \"n as i32\"]\n\n[check]",
            "block = [\"block\"]\nargs = [\"2.0f32\", \"x\", \"y\", \"n as i32\"]\n\n[check]",
        );
    std::fs::write(dir.join("suites/saxpy.toml"), &suite).unwrap();
    let o = run(&dir, &env(&dir, "script.toml"));
    let t = text(&o);
    assert!(!o.status.success(), "the wrong variant fails the run: {t}");
    let trials = trials(&dir);
    let status = |name: &str| {
        let (_, t) = trials.iter().find(|(n, _)| n == name).unwrap();
        t["status"].as_str().unwrap().to_string()
    };
    assert_eq!(status(wrong), "failed", "{t}");
    for other in [
        "saxpy::vec4[block=128]::n=4096",
        "saxpy::vec4[block=512]::n=4096",
    ] {
        assert_eq!(status(other), "passed", "{other}: {t}");
    }
    // Per case: the reference's own trial and one request for the three variants; at n=4096
    // that request failed, and each variant was asked alone.
    let requests = calls(&dir, "gpu-0") + calls(&dir, "gpu-1");
    assert_eq!(requests, 2 + 2 + 3, "{t}");
    assert_eq!(calls(&dir, "saxpy::vec4[block=512]::n=4096"), 2);
    assert_eq!(calls(&dir, "saxpy::vec4[block=512]::n=1048576"), 1);
    // The reference's samples, round by round (speedup × the kernel's time), are one set for
    // the three variants of a case.
    let reference = |name: &str| -> Vec<f64> {
        let (_, t) = trials.iter().find(|(n, _)| n == name).unwrap();
        let m = &t["measurement"];
        let f = |v: &Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let (time, speedup) = (f(&m["time_samples"]), f(&m["speedup_samples"]));
        time.iter().zip(&speedup).map(|(t, s)| t * s).collect()
    };
    let first = reference("saxpy::vec4[block=128]::n=1048576");
    assert!(first.len() >= 16, "{first:?}");
    for other in ["256", "512"] {
        let these = reference(&format!("saxpy::vec4[block={other}]::n=1048576"));
        assert_eq!(these.len(), first.len());
        for (a, b) in first.iter().zip(&these) {
            assert!((a / b - 1.0).abs() < 1e-9, "{a} vs {b}");
        }
    }
}

/// Each test by its function's name.
macro_rules! tests {
    ($($(#[$attr:meta])* $test:ident),* $(,)?) => {
        vec![$($(#[$attr])* (stringify!($test), $test as fn())),*]
    };
}

/// As `kernelgate`'s GPU worker, serves the script; otherwise runs the tests.
fn main() -> std::process::ExitCode {
    if std::env::var_os(kernelgate::worker::client::WORKER_ENV).is_some() {
        let script = std::env::var_os(scripted_worker::SCRIPT_ENV).unwrap_or_default();
        return std::process::ExitCode::from(scripted_worker::serve(script.into()) as u8);
    }
    let tests: Vec<(&str, fn())> = tests![
        a_stored_gate_runs_end_to_end_on_two_scripted_gpus,
        four_shards_merged_decide_as_one_process_does,
        a_pool_of_gpu_models_is_decided_per_device_and_reported_side_by_side,
        a_script_that_does_not_read_is_named_with_its_place,
        #[cfg(unix)]
        sigterm_ends_a_run_waiting_on_a_hung_worker_with_what_it_measured,
        a_paired_regression_is_confirmed_in_a_fresh_worker,
        a_size_moved_to_an_axis_renames_its_trials_and_the_fastest_variant_is_reported,
        a_kernels_variants_share_their_rounds_and_their_reference_samples,
    ];
    let tests = tests
        .into_iter()
        .map(|(name, test)| {
            libtest_mimic::Trial::test(name, move || {
                test();
                Ok(())
            })
        })
        .collect();
    libtest_mimic::run(&libtest_mimic::Arguments::from_args(), tests).exit_code()
}
