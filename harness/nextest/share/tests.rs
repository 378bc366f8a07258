//! `share`'s tests: one run shared by several callers in one process, as by a run's processes.

use super::*;

fn run(name: &str) -> NextestRun {
    let dir = std::env::temp_dir()
        .join(format!("kernelgate-share-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    NextestRun {
        id: name.into(),
        dir,
    }
}

fn results(names: &[&str]) -> Results {
    let mut r: Results = serde_json::from_str(
        r#"{"format":1,"kernelgate":"0","date":"2026-01-01","device":null,"device_info":null,"trials":[]}"#,
    )
    .unwrap();
    r.trials = names
        .iter()
        .map(|n| {
            serde_json::from_value(serde_json::json!({
                "name": n, "suite": "s", "file": "s.toml", "line": 1,
                "status": "ignored", "message": "no CUDA driver"
            }))
            .unwrap()
        })
        .collect();
    r
}

#[test]
fn the_first_runs_and_the_rest_read() {
    let r = run("first");
    let mut calls = 0;
    let first = r
        .share("s::a", Duration::from_secs(1), || {
            calls += 1;
            Ok::<_, &str>((results(&["s::a", "s::b"]), "ran"))
        })
        .unwrap();
    assert_eq!(first.ran, Some("ran"));
    assert!(
        first.note.contains("this process ran all 2 trials"),
        "{}",
        first.note
    );
    let second = r
        .share(
            "s::b",
            Duration::from_secs(1),
            || -> Result<(Results, ()), &str> { panic!("the run already ran") },
        )
        .unwrap();
    assert_eq!(calls, 1);
    assert_eq!(second.ran, None);
    assert_eq!(second.results.trials.len(), 2);
    assert!(
        second.note.contains("`s::b` answered at"),
        "{}",
        second.note
    );
    assert!(
        second.note.contains("started for `s::a`"),
        "{}",
        second.note
    );
}

#[test]
fn a_stopped_run_stops_every_process_with_its_message() {
    let r = run("stopped");
    let err = r
        .share(
            "s::a",
            Duration::from_secs(1),
            || -> Result<(Results, ()), &str> { Err("GPUs of different kinds") },
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "GPUs of different kinds");
    let err = r
        .share(
            "s::b",
            Duration::from_secs(1),
            || -> Result<(Results, ()), &str> { panic!("not again") },
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "GPUs of different kinds");
}

#[test]
fn a_run_whose_runner_died_is_not_run_twice() {
    let r = run("died");
    std::fs::create_dir_all(&r.dir).unwrap();
    r.write(&State::Running {
        pid: 4242,
        trial: "s::a".into(),
        started: 0.0,
    })
    .unwrap();
    let err = r
        .share(
            "s::b",
            Duration::from_secs(1),
            || -> Result<(Results, ()), &str> { panic!("not again") },
        )
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "process 4242, which ran this nextest run's trials (nextest started it for `s::a`), ended without writing their results"
        ),
        "{err}"
    );
}

#[test]
fn a_held_lock_times_out_naming_the_holder() {
    let r = run("held");
    std::fs::create_dir_all(&r.dir).unwrap();
    r.write(&State::Running {
        pid: 77,
        trial: "s::a".into(),
        started: 0.0,
    })
    .unwrap();
    // flock locks belong to an open file, so a second open in this process conflicts
    // as another process's would.
    let held = File::create(r.dir.join("lock")).unwrap();
    held.lock().unwrap();
    let start = Instant::now();
    let err = r
        .share(
            "s::b",
            Duration::from_millis(200),
            || -> Result<(Results, ()), &str> { panic!("locked") },
        )
        .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(200));
    assert!(
        err.to_string()
            .starts_with("waited 0 s for process 77, which runs this nextest run's trials (nextest started it for `s::a`)"),
        "{err}"
    );
}

#[test]
fn clock_reads_utc() {
    assert_eq!(clock(86_400.0 * 3.0 + 3_723.456), "01:02:03.456");
}
