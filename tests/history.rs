//! The run history: a synthetic history of 12 runs with a 10% step injected in one trial is
//! flagged by `--check` (the gate's rule against the trailing runs) for exactly that trial,
//! from the step's first run, and found as a level shift at that commit range; results files imported in random
//! order come out in commit order with their own commits; a regime switch is shown, not drift;
//! failures are kept and shown; concurrent writers lose nothing; the schema is versioned;
//! `kernelgate history` exit codes 0 / 1 / 2 end to end.

mod common;
#[path = "common/repo.rs"]
mod repo;

use common::synthetic;
use kernelgate::gate::Verdict;
use kernelgate::history::drift::trends;
use kernelgate::history::{History, RunInfo, SCHEMA_VERSION};
use kernelgate::report::results::Results;
use kernelgate::stats::changepoint::Options;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use repo::{git, text};
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

/// Run `i` of a history: every trial's median moved by 0.5% run-to-run noise (the whole GPU:
/// kernels and references alike, so speedups stay); `STEPPED` 10% slower from run `step` on (its
/// speedup over its reference 10% lower).
fn nth_run(i: usize, step: usize, rng: &mut ChaCha8Rng) -> Results {
    let noise = Normal::new(1.0, 0.005).unwrap();
    let mut r = synthetic::run();
    r.date = format!("2026-11-{:02}", i + 1);
    for t in &mut r.trials {
        if let Some(m) = &mut t.measurement {
            let level = if t.name == STEPPED && i >= step {
                1.10
            } else {
                1.0
            };
            let f = level * noise.sample(rng);
            m.time.median *= f;
            m.time_samples.iter_mut().for_each(|s| *s *= f);
            m.speedup_samples.iter_mut().for_each(|s| *s /= level);
            m.max_slowdown = 0.01;
        }
    }
    r
}

fn info(i: usize) -> RunInfo {
    RunInfo {
        date: format!("2026-11-{:02}", i + 1),
        started: None,
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
fn a_ten_percent_step_in_one_trial_is_the_only_drift() {
    let path = scratch("step.sqlite");
    build(&path, 12, 7);
    let h = History::open(&path).unwrap();
    let runs = h.runs().unwrap();
    assert_eq!(runs.len(), 12);
    let found = trends(&runs, &h.points("").unwrap(), &Options::default());
    assert_eq!(
        found.len(),
        17,
        "every timed trial has a trend, and the wrong result one of failures"
    );
    // Level shifts (information for the table and the trend page): the step's alone.
    let shifted: Vec<(&str, Vec<(usize, usize)>)> = found
        .iter()
        .filter(|t| !t.change_points.is_empty())
        .map(|t| {
            let runs = t.change_points.iter().map(|c| t.shift_runs(c)).collect();
            (t.name.as_str(), runs)
        })
        .collect();
    assert_eq!(shifted, vec![(STEPPED, vec![(6, 7)])]);
    // The samples are stored with each run.
    let points = h.points(STEPPED).unwrap();
    let first = (points.iter())
        .find(|p| p.name == STEPPED && p.run == runs[0].id)
        .unwrap();
    assert_eq!(first.samples.len(), 24);

    // End to end: exit 1 naming the trial and its first slow run; nothing since the step.
    let db = path.to_str().unwrap();
    let out = kernelgate(&["history", "--check", "--db", db]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let flagged: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("regressed:"))
        .collect();
    assert_eq!(flagged.len(), 1, "{stdout}");
    assert!(
        flagged[0].starts_with(&format!("regressed: {STEPPED} [cold]"))
            && flagged[0].contains("against its 7 trailing run(s)")
            && flagged[0].contains("slow since c070000000 (2026-11-08) (5 run(s))"),
        "{stdout}"
    );
    let out = kernelgate(&["history", "--check", "--since", "c07", "--db", db]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A 10% step is under a 15% threshold.
    let out = kernelgate(&["history", "--check", "--max-slowdown", "15%", "--db", db]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

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
    let row = page
        .split("<tr>")
        .find(|r| r.contains(&format!(">{STEPPED} [cold]<")))
        .expect("the stepped trial's row");
    assert!(
        row.contains("% between c060000 and c070000 (p = "),
        "the change point is listed: {row}"
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
                for i in 0..4 {
                    // 24 runs, each its own (a run is stored once).
                    let mut results = synthetic::run();
                    results.provenance.started =
                        Some(format!("2026-11-{:02}T08:00:00Z", w * 4 + i + 1));
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
    assert_eq!(
        h.points("").unwrap().len(),
        24 * 17,
        "16 timed trials and a failure per run"
    );
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
        e.contains(&format!(
            "schema version {}; this kernelgate knows up to {SCHEMA_VERSION}",
            SCHEMA_VERSION + 1
        )),
        "{e}"
    );
}

#[test]
fn import_and_bad_input() {
    let path = scratch("import.sqlite");
    let db = path.to_str().unwrap();
    let fixture = "tests/fixtures/results/example.json";
    // One run given twice: refused, nothing imported.
    let out = kernelgate(&["history", "import", fixture, fixture, "--db", db]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "`{fixture}` and `{fixture}` hold one run: import it once (nothing was imported)"
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(History::open(&path).unwrap().runs().unwrap().len(), 0);
    let out = kernelgate(&[
        "history", "import", fixture, "--commit", "abc123", "--db", db,
    ]);
    // The file records its own commit: `--commit` only fills in for files that record none.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("records commit `8a8b2565d0c1e2f3a4b5c6d7e8f90a1b2c3d4e5f`; `--commit abc123` applies only to files that record none"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = History::open(&path).unwrap().runs().unwrap();
    assert_eq!(runs.len(), 1);
    // A run already stored is refused, naming it; under another file name too.
    let copy = scratch("copy.json");
    std::fs::copy(fixture, &copy).unwrap();
    let out = kernelgate(&["history", "import", copy.to_str().unwrap(), "--db", db]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already, as run 1 (commit 8a8b2565d0c1e2f3a4b5c6d7e8f90a1b2c3d4e5f, 2026-11-21T23:31:07Z): a run is stored once; nothing was imported"),
        "{err}"
    );
    // A start time that is no time is refused where the file is read.
    let text = std::fs::read_to_string(fixture).unwrap();
    for bad in ["yesterday afternoon", "2026-02-30T10:00:00Z"] {
        let file = scratch("bad-start.json");
        std::fs::write(
            &file,
            text.replace("\"2026-11-21T23:31:07Z\"", &format!("\"{bad}\"")),
        )
        .unwrap();
        let out = kernelgate(&["history", "import", file.to_str().unwrap(), "--db", db]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("`started` `{bad}` is not a time")),
            "{err}"
        );
    }
    let runs = History::open(&path).unwrap().runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0].info.commit,
        "8a8b2565d0c1e2f3a4b5c6d7e8f90a1b2c3d4e5f"
    );
    assert_eq!(
        runs[0].info.started.as_deref(),
        Some("2026-11-21T23:31:07Z")
    );
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
    // A failed import into a new history leaves no file behind.
    let fresh = scratch("never.sqlite");
    let out = kernelgate(&[
        "history",
        "import",
        "no-such.json",
        "--db",
        fresh.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!fresh.exists(), "an empty history was left behind");
}

/// A repository of `n` commits, oldest first.
/// Every verdict a run can record is one a history it is stored in reads back: seen before, a
/// run with a `machine-slower` trial was stored, and then every reader refused the history
/// ("column verdict holds something else than a verdict or NULL").
#[test]
fn every_verdict_stored_is_read_back() {
    let path = scratch("verdicts.sqlite");
    let mut h = History::open(&path).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (i, verdict) in Verdict::ALL.into_iter().enumerate() {
        let mut run = nth_run(i, usize::MAX, &mut rng);
        let judged = run.trials.iter_mut().find_map(|t| t.verdict.as_mut());
        judged.expect("the synthetic run judges trials").verdict = verdict;
        h.append(&run, &info(i)).unwrap();
    }
    drop(h);
    let db = path.to_str().unwrap();
    for args in [vec!["history", "--db", db], vec!["lint", db]] {
        let out = kernelgate(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn repository(name: &str, n: usize) -> (PathBuf, Vec<String>) {
    let dir = repo::scratch("history", name);
    git(&dir, &["init", "-q", "-b", "main"]);
    for i in 0..n {
        git(
            &dir,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("commit {i}"),
            ],
        );
    }
    let commits = git(&dir, &["rev-list", "--reverse", "HEAD"])
        .lines()
        .map(String::from)
        .collect();
    (dir, commits)
}

/// `kernelgate ARGS` in `dir`, with no `KERNELGATE_*` variable from outside.
fn kernelgate_in(dir: &Path, args: &[&str]) -> Output {
    repo::kernelgate(dir, args, &[])
}

/// Twelve results files of twelve commits, the first four run last (a backfill), imported in
/// random order: the history reads them in commit order, each with its own commit, and the 10%
/// step at the eighth commit is the only regression, slow since the eighth.
#[test]
fn imported_in_random_order_read_in_commit_order() {
    use rand::seq::SliceRandom;
    let (repo, commits) = repository("ordered-repo", 12);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut files: Vec<PathBuf> = Vec::new();
    for (i, commit) in commits.iter().enumerate() {
        let mut r = nth_run(i, 7, &mut rng);
        r.provenance.commit = Some(commit.clone());
        r.provenance.branch = Some("main".into());
        // Commits 0-3 were measured after all the others.
        let day = if i < 4 { 20 + i } else { i };
        r.provenance.started = Some(format!("2026-11-{:02}T08:00:00Z", day + 1));
        let path = repo.join(format!("results-{i:02}.json"));
        r.save(&path).unwrap();
        files.push(path);
    }
    files.shuffle(&mut rng);
    let db = repo.join("history.sqlite");
    let mut args: Vec<&str> = vec!["history", "import"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend(["--db", db.to_str().unwrap()]);
    let out = kernelgate_in(&repo, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let html = repo.join("trend.html");
    let out = kernelgate_in(
        &repo,
        &[
            "history",
            "--db",
            db.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("12 in first-parent commit order, 0 by start time"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let doc = scraper::Html::parse_document(&page);
    let cell = scraper::Selector::parse("table.runs tbody tr td:first-child").unwrap();
    let listed: Vec<String> = doc.select(&cell).map(|e| e.text().collect()).collect();
    let expected: Vec<String> = commits.iter().map(|c| c[..12].to_string()).collect();
    assert_eq!(
        listed, expected,
        "runs in commit order, each with its own commit"
    );

    let out = kernelgate_in(&repo, &["history", "--check", "--db", db.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let flagged: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("regressed:"))
        .collect();
    assert_eq!(flagged.len(), 1, "{stdout}");
    assert!(
        flagged[0].starts_with(&format!("regressed: {STEPPED}"))
            && flagged[0].contains(&format!("slow since {}", &commits[7][..10])),
        "{stdout}"
    );
}

/// A trial timed as graphs for six runs, then cold (12.5% slower, as the regimes differ): two
/// trends, the switch printed and drawn, `--check` finds no drift. A trial that computed a
/// wrong output in one run is kept as a failure and shown. A suite of one run gets no chart.
#[test]
fn a_regime_switch_is_not_drift_and_failures_are_shown() {
    use kernelgate::measure::Regime;
    use kernelgate::report::results::{FailKind, Status};
    const SWITCHED: &str = "saxpy::vec4::n=4096";
    const WRONG: &str = "matmul::tiled::n=512";
    let path = scratch("regimes.sqlite");
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut h = History::open(&path).unwrap();
    for i in 0..12 {
        let mut r = nth_run(i, 99, &mut rng);
        for t in &mut r.trials {
            if t.name == SWITCHED && i >= 6 {
                let m = t.measurement.as_mut().unwrap();
                m.regime = Regime::Cold;
                m.time.median *= 1.125;
                m.time_samples.iter_mut().for_each(|s| *s *= 1.125);
            }
            if t.name == WRONG && i == 9 {
                t.measurement = None;
                t.verdict = None;
                t.status = Status::Failed;
                t.failure = Some(FailKind::Correctness);
            }
        }
        h.append(&r, &info(i)).unwrap();
    }
    drop(h);
    let db = path.to_str().unwrap();
    let out = kernelgate(&["history", "--check", "--db", db]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "regime switch: {SWITCHED} (NVIDIA H200 (sm_90, 132 SMs, 140 GiB, driver 580.159.04, CUDA 13.0)) graph → cold between c050000000"
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("drift:"), "{stdout}");

    let html = scratch("regimes.html");
    let out = kernelgate(&[
        "history",
        "--last",
        "12",
        "--db",
        db,
        "--html",
        html.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {stdout}"))
            .to_string()
    };
    assert!(
        row(&format!("{SWITCHED} [graph]")).contains("  6  "),
        "{stdout}"
    );
    assert!(
        row(&format!("{SWITCHED} [cold]")).contains("  6  "),
        "{stdout}"
    );
    // Run 10 (index 9) failed: `F` in its place among the verdict marks.
    let wrong = row(WRONG);
    assert!(wrong.contains("·········F··"), "{wrong}");
    let page = std::fs::read_to_string(&html).unwrap();
    let doc = scraper::Html::parse_document(&page);
    let select = |css: &str| scraper::Selector::parse(css).unwrap();
    let switches: Vec<String> = doc
        .select(&select("ul.switches li"))
        .map(|e| e.text().collect())
        .collect();
    assert_eq!(switches.len(), 1, "{switches:?}");
    let row = page
        .split("<tr>")
        .find(|r| r.contains(&format!(">{WRONG} [graph]<")))
        .expect("the trial's row");
    assert!(
        row.contains(r#"<span class="failed-runs"><code>c090000</code></span>"#),
        "the failure is shown with its run: {row}"
    );
    // The regressions of every run are failures too.
    let failed_cells = doc.select(&select(".failed-runs")).count();
    assert_eq!(
        failed_cells, 3,
        "the wrong output, the regressed trial, the broken one"
    );

    // One run: no chart whose ticks all read +0.0%.
    let one = scratch("one.sqlite");
    History::open(&one)
        .unwrap()
        .append(&synthetic::run(), &info(0))
        .unwrap();
    let html = scratch("one.html");
    let out = kernelgate(&[
        "history",
        "--db",
        one.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("One run so far"), "{page}");
    assert!(!page.contains("<svg") && !page.contains("+0.0%"));
}

/// `kernelgate lint PATH`, `kernelgate history --db PATH` and `history import` of one more run:
/// each exit code with its standard error.
fn every_reader(path: &Path) -> Vec<(Option<i32>, String)> {
    let db = path.to_str().unwrap();
    let more = "tests/fixtures/results/h200-history-rev2.json";
    [
        vec!["lint", db],
        vec!["history", "--db", db],
        vec!["history", "--db", db, "import", more],
    ]
    .iter()
    .map(|args| {
        let o = kernelgate(args);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    })
    .collect()
}

#[test]
fn a_history_cut_off_or_not_a_history_is_refused_by_every_reader_and_left_as_it_was() {
    // Someone else's SQLite file: never migrated into, refused by lint, history and import.
    let other = scratch("other.db");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    drop(conn);
    for (code, err) in every_reader(&other) {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(
                "it is an SQLite file of something else (tables notes), not a kernelgate history"
            ),
            "{err}"
        );
    }
    let conn = rusqlite::Connection::open(&other).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tables, ["notes"], "nothing written into it");

    // A history whose records are cut off, or point at a run it does not hold, or that lost a
    // table: every reader refuses it, at the row, with no raw SQL error; import adds nothing.
    for (name, damage, says) in [
        ("cut.db", "UPDATE trials SET record = substr(record, 1, 40) WHERE rowid = 3", "`trials row 3, column record` is not the trial's record as kernelgate writes it (JSON cut off or edited)"),
        ("dangling.db", "UPDATE trials SET run_id = 99 WHERE rowid = 5", "`trials row 5, column run_id` is run 99, which `runs` does not hold: the file is cut off or was edited"),
        ("no_runs.db", "DROP TABLE runs", "it has no `runs` table: it is not a kernelgate history, or one cut off"),
    ] {
        let path = scratch(name);
        build(&path, 2, 99);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA foreign_keys = OFF; {damage}"))
            .unwrap();
        let runs = |conn: &rusqlite::Connection| {
            conn.query_row("SELECT count(*) FROM trials", [], |r| r.get::<_, i64>(0))
                .unwrap()
        };
        let before = runs(&conn);
        for (code, err) in every_reader(&path) {
            assert_eq!(code, Some(2), "{name}: {err}");
            assert!(err.contains(says), "{name}: {err}");
            assert!(!err.contains("no such table"), "{name}: {err}");
        }
        assert_eq!(runs(&conn), before, "{name}: import added nothing");
    }
}
