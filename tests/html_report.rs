//! The HTML report checked as a parser sees it: every trial present, the plots present, no
//! external URL and no script; rendered from the synthetic run and from the committed results
//! file that CI renders.

mod common;

use common::synthetic;
use kernelgate::html::{page::anchor, render};
use kernelgate::report::results::Results;
use scraper::{Html, Selector};

const FIXTURE: &str = "tests/fixtures/results/example.json";

fn select<'a>(doc: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// Everything a person needs is there, and nothing is fetched from elsewhere.
fn check_structure(results: &Results, html: &str) {
    let doc = Html::parse_document(html);
    assert!(
        doc.errors.is_empty() || doc.errors.iter().all(|e| !e.contains("Unexpected token")),
        "{:?}",
        doc.errors
    );
    for t in &results.trials {
        let id = anchor("t", &t.name);
        assert_eq!(
            select(&doc, &format!("#{id}")).len(),
            1,
            "trial `{}` is not in the report once",
            t.name
        );
        assert!(
            !select(&doc, &format!("#{}", anchor("suite", &t.suite))).is_empty(),
            "no section for suite `{}`",
            t.suite
        );
    }
    // One strip chart per compared trial, named for it.
    for t in results
        .trials
        .iter()
        .filter(|t| t.verdict.is_some() && t.measurement.is_some())
    {
        let figure = select(&doc, &format!("#{} svg", anchor("cmp", &t.name)));
        assert_eq!(figure.len(), 1, "no distributions for `{}`", t.name);
    }
    assert!(select(&doc, "script").is_empty(), "a script");
    assert!(select(&doc, "link").is_empty(), "a linked resource");
    for e in select(&doc, "[src], [href]") {
        for attr in ["src", "href"] {
            if let Some(v) = e.value().attr(attr) {
                assert!(v.starts_with('#'), "`{attr}={v}` leaves the file");
            }
        }
    }
    assert!(
        !html.contains("url(") && !html.contains("@import"),
        "a style that fetches"
    );
    // Every summary's attention row carries the command that reruns it.
    for row in select(&doc, "table.attention tbody tr") {
        let text: String = row.text().collect();
        assert!(
            text.contains("rerun: cargo test --test perf -- --exact"),
            "{text}"
        );
    }
}

#[test]
fn synthetic_run_renders_every_trial_and_plot() {
    let results = synthetic::run();
    let html = render(&results);
    check_structure(&results, &html);
    let doc = Html::parse_document(&html);
    // Two swept suites × (time, bandwidth, FLOP rate, speedup) charts.
    for suite in ["saxpy", "matmul"] {
        let charts = select(&doc, &format!("#{} .charts svg", anchor("suite", suite)));
        let compared = results
            .trials
            .iter()
            .filter(|t| t.suite == suite && t.verdict.is_some())
            .count();
        assert_eq!(charts.len(), 4 + compared, "suite {suite}");
    }
    // Needs attention, worst first: the regression, the wrong result, then the unreliable trial.
    let attention: Vec<String> = select(&doc, "table.attention tbody tr td:first-child")
        .iter()
        .map(|e| e.text().collect())
        .collect();
    assert_eq!(
        attention.first().map(String::as_str),
        Some("conv2d::tiled::h=200,w=200"),
        "{attention:?}"
    );
    assert!(
        attention.contains(&"saxpy::vec4::n=16777216".to_string()),
        "{attention:?}"
    );
    assert!(
        attention.contains(&"matmul::tiled::n=2048".to_string()),
        "{attention:?}"
    );
    assert!(html.contains(
        "KERNELGATE_BLESS=1 cargo test --test perf -- --exact &#39;saxpy::vec4::n=16777216&#39;"
    ));
    assert!(html.contains("GPU-5b1f0c3e"), "the GPU's UUID");
}

#[test]
fn the_committed_results_file_renders() {
    if std::env::var_os("BLESS").is_some() {
        synthetic::run().save(FIXTURE.as_ref()).unwrap();
    }
    let results = Results::load(FIXTURE.as_ref()).unwrap();
    check_structure(&results, &render(&results));
}

#[test]
fn a_run_without_gpu_or_baselines_still_renders() {
    let mut results = synthetic::run();
    results.device = None;
    results.device_info = None;
    for t in &mut results.trials {
        t.verdict = None;
        if let Some(m) = &mut t.measurement {
            m.baseline_samples.clear();
            m.bytes = None;
        }
    }
    let html = render(&results);
    check_structure(&results, &html);
    assert!(html.contains("No GPU was used"));
    assert!(!html.contains("Baseline against this run"));
}

/// `KERNELGATE_HTML` and `KERNELGATE_HISTORY` during a run, on a machine without a GPU: the
/// report shows every trial (ignored, with the reason), the history gets the run.
#[test]
fn a_run_writes_the_report_and_appends_to_the_history() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-reports");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (html, db, results) = (
        dir.join("report.html"),
        dir.join("history.sqlite"),
        dir.join("results.json"),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .arg("run")
        .env_remove("KERNELGATE_REQUIRE_GPU")
        .env_remove("KERNELGATE_REQUIRE_NVRTC")
        .env("KERNELGATE_CACHE", dir.join("cache"))
        .env("KERNELGATE_SUITES", "suites")
        .env("KERNELGATE_HTML", &html)
        .env("KERNELGATE_HISTORY", &db)
        .env("KERNELGATE_RESULTS", &results)
        .env("KERNELGATE_COMMIT", "0123456789abcdef")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = Results::load(&results).unwrap();
    assert!(!results.trials.is_empty());
    check_structure(&results, &std::fs::read_to_string(&html).unwrap());
    let runs = kernelgate::history::History::open(&db)
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].info.commit, "0123456789abcdef");
}

#[test]
fn report_command_bad_input_exits_2() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["report", "no-such.json", "--html", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: cannot read `no-such.json`"));
    let out = run(&["report", FIXTURE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("say where to write the report with `--html OUT.html`"));
    let out = run(&["report", FIXTURE, FIXTURE, "--html", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2), "one trial twice");
}
