//! The run history: a synthetic history of 12 runs with a 2% step injected in one trial is
//! flagged as drift for exactly that trial and commit range; concurrent writers lose nothing;
//! the schema is versioned; `kernelgate history` exit codes 0 / 1 / 2 end to end.

mod common;

use common::synthetic;
use kernelgate::history::drift::trends;
use kernelgate::history::{History, RunInfo, SCHEMA_VERSION};
use kernelgate::report::results::Results;
use kernelgate::stats::changepoint::Options;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const STEPPED: &str = "saxpy::vec4::n=1048576";

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("history");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    path
}

/// Run `i` of a history: every trial's median moved by 0.5% run-to-run noise; `STEPPED` 2%
/// slower from run `step` on.
fn nth_run(i: usize, step: usize, rng: &mut ChaCha8Rng) -> Results {
    let noise = Normal::new(1.0, 0.005).unwrap();
    let mut r = synthetic::run();
    r.date = format!("2026-11-{:02}", i + 1);
    for t in &mut r.trials {
        if let Some(m) = &mut t.measurement {
            let level = if t.name == STEPPED && i >= step {
                1.02
            } else {
                1.0
            };
            let f = level * noise.sample(rng);
            m.time.median *= f;
            m.time_samples.iter_mut().for_each(|s| *s *= f);
            m.max_slowdown = 0.01;
        }
    }
    r
}

fn info(i: usize) -> RunInfo {
    RunInfo {
        date: format!("2026-11-{:02}", i + 1),
        commit: format!("c{i:02}0000000000"),
        branch: "main".into(),
        dirty: false,
        mode: "stored".into(),
    }
}

fn build(path: &Path, runs: usize, step: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut h = History::open(path).unwrap();
    for i in 0..runs {
        h.append(&nth_run(i, step, &mut rng), &info(i)).unwrap();
    }
}

fn kernelgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .args(args)
        .env_remove("KERNELGATE_HISTORY")
        .output()
        .unwrap()
}

#[test]
fn a_two_percent_step_in_one_trial_is_the_only_drift() {
    let path = scratch("step.sqlite");
    build(&path, 12, 7);
    let h = History::open(&path).unwrap();
    let runs = h.runs().unwrap();
    assert_eq!(runs.len(), 12);
    let found = trends(&runs, &h.points("").unwrap(), &Options::default());
    assert_eq!(found.len(), 16, "every timed trial has a trend");
    let drifted: Vec<(&str, Vec<(usize, usize)>)> = found
        .iter()
        .filter_map(|t| {
            t.drift(0)
                .filter(|d| d.factor() > 1.01)
                .map(|d| (t.name.as_str(), d.moved))
        })
        .collect();
    assert_eq!(drifted, vec![(STEPPED, vec![(6, 7)])]);
    // The samples are stored with each run.
    let samples = h.samples(runs[0].id, STEPPED).unwrap().unwrap();
    assert_eq!(samples.len(), 24);

    // End to end: exit 1 naming the trial and the commits; nothing since the step.
    let db = path.to_str().unwrap();
    let out = kernelgate(&["history", "--check", "--db", db]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("drift:")).count(),
        1,
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("drift: {STEPPED}")) && stdout.contains("c060000000..c070000000"),
        "{stdout}"
    );
    let out = kernelgate(&["history", "--check", "--since", "c07", "--db", db]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A 2% step is under a 5% threshold.
    let out = kernelgate(&["history", "--check", "--max-slowdown", "5%", "--db", db]);
    assert_eq!(out.status.code(), Some(0));

    // The table and the trend page.
    let html = scratch("trend.html");
    let out = kernelgate(&[
        "history",
        "saxpy::vec4",
        "--db",
        db,
        "--html",
        html.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("saxpy::vec4"))
            .count(),
        4,
        "{stdout}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let doc = scraper::Html::parse_document(&page);
    let svgs = doc
        .select(&scraper::Selector::parse("svg").unwrap())
        .count();
    assert_eq!(svgs, 1, "one chart for saxpy");
    assert!(
        page.contains("+2.") && page.contains("between c06"),
        "the change point is listed"
    );
    assert!(!page.contains("<script") && !page.contains("href=\"http"));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let path = scratch("concurrent.sqlite");
    let writers: Vec<_> = (0..6)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut h = History::open(&path).unwrap();
                let results = synthetic::run();
                for i in 0..4 {
                    h.append(&results, &info(w * 4 + i)).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let h = History::open(&path).unwrap();
    assert_eq!(h.runs().unwrap().len(), 24);
    assert_eq!(h.points("").unwrap().len(), 24 * 16);
}

#[test]
fn the_schema_is_versioned() {
    let path = scratch("versioned.sqlite");
    History::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(conn);
    let e = History::open(&path).err().unwrap().to_string();
    assert!(
        e.contains("schema version 2; this kernelgate knows up to 1"),
        "{e}"
    );
}

#[test]
fn import_and_bad_input() {
    let path = scratch("import.sqlite");
    let db = path.to_str().unwrap();
    let fixture = "tests/fixtures/results/example.json";
    let out = kernelgate(&[
        "history", "import", fixture, fixture, "--commit", "abc123", "--db", db,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = History::open(&path).unwrap().runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].info.commit, "abc123");
    assert_eq!(
        runs[0].gpu_uuid.as_deref(),
        Some("GPU-5b1f0c3e-9a7d-4c21-8e6f-0d3a2b1c4e5f")
    );
    let out = kernelgate(&["history", "--check", "--since", "zzz", "--db", db]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no run in the history matches `--since zzz`"));
    let out = kernelgate(&["history", "--check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("which history?"));
    let out = kernelgate(&["history", "import", "no-such.json", "--db", db]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read `no-such.json`"));
}
