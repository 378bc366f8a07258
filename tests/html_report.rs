//! The HTML report checked as a parser sees it: every trial present, the plots present, no
//! external URL and no script; rendered from the synthetic run and from the committed results
//! file that CI renders.

mod common;
#[path = "common/html.rs"]
mod html;
#[path = "common/paired.rs"]
mod paired;

use common::synthetic;
use html::{attention_rows, check_colours, check_structure, select};
use kernelgate::html::{page::anchor, render};
use kernelgate::report::results::Results;
use scraper::{Html, Selector};

const FIXTURE: &str = "tests/fixtures/results/example.json";
/// A real stored run on an H200, with regressions against its baselines.
const H200: &str = "tests/fixtures/results/h200-run.json";
/// A paired run derived from it (`paired::derive`).
const PAIRED: &str = "tests/fixtures/results/h200-paired.json";

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
    // Needs attention, worst first: the wrong result, the regression, the unreliable trial.
    let attention: Vec<Vec<String>> = attention_rows(&doc);
    assert_eq!(
        attention,
        [
            vec!["conv2d::tiled::h=200,w=200".to_string()],
            vec!["saxpy::vec4::n=16777216".to_string()],
            vec!["matmul::tiled::n=2048".to_string()],
        ]
    );
    assert!(html.contains(
        "KERNELGATE_BLESS=1 cargo test --test perf -- --exact &#39;saxpy::vec4::n=16777216&#39;"
    ));
    assert!(html.contains("GPU-5b1f0c3e"), "the GPU's UUID");
    let mode = select(&doc, "#mode");
    assert_eq!(mode[0].value().attr("data-mode"), Some("stored"));
    // Results from before the flush was recorded say nothing of it; a recorded one is named in
    // its suite's section, which time the numbers are.
    assert!(!html.contains("l2_flush"));
    let mut clean = results.clone();
    for t in clean.trials.iter_mut().filter(|t| t.suite == "saxpy") {
        if let Some(m) = t.measurement.as_mut() {
            m.l2_flush = Some(kernelgate::suite::Flush::Clean);
        }
    }
    let html = render(&clean);
    let doc = Html::parse_document(&html);
    let notes = select(&doc, &format!("#{} p.note", anchor("suite", "saxpy")));
    assert!(
        notes.iter().any(|n| n.text().collect::<String>()
            == "Each sample timed after an L2 flush left clean (l2_flush = \"clean\", as Nsight Compute's --cache-control all)."),
        "{html}"
    );
}

/// The real stored run on an H200: stored mode in the header, no base anywhere, one colour per
/// kernel, failures grouped by kernel with their sizes, rebless offered for regressions.
#[test]
fn the_stored_h200_run_reads_as_stored_with_failures_grouped() {
    let results = Results::load(H200.as_ref()).unwrap();
    let html = render(&results);
    check_structure(&results, &html);
    let doc = Html::parse_document(&html);
    assert_eq!(
        select(&doc, "#mode")[0].value().attr("data-mode"),
        Some("stored")
    );
    assert!(
        !html.contains("paired") && !html.contains("candidate"),
        "no paired wording"
    );
    for suite in ["saxpy", "reduce", "matmul", "affine"] {
        check_colours(&doc, suite);
    }
    let rows = attention_rows(&doc);
    let naive: Vec<String> = ["n=4096", "n=1048576", "n=1000003"]
        .iter()
        .map(|n| format!("saxpy::naive::{n}"))
        .collect();
    assert!(
        rows.contains(&naive),
        "saxpy::naive's three regressions in one row: {rows:?}"
    );
    assert_eq!(
        rows.iter().map(Vec::len).sum::<usize>(),
        results
            .trials
            .iter()
            .filter(|t| t.status == kernelgate::report::results::Status::Failed)
            .count(),
        "every failure in one row"
    );
    let naive_row = select(&doc, "table.attention tbody tr")
        .into_iter()
        .find(|r| r.text().collect::<String>().contains("saxpy::naive"))
        .unwrap()
        .text()
        .collect::<String>();
    assert!(
        naive_row.contains("rerun: cargo test --test perf -- 'saxpy::naive::'")
            && naive_row
                .contains("rebless: KERNELGATE_BLESS=1 cargo test --test perf -- 'saxpy::naive::'"),
        "{naive_row}"
    );
}

/// The paired fixture: the mode and the base in the header and on every paired chart and
/// strip; base against candidate resources with the launch change marked; no bless; new,
/// changed and gone trials named as such.
#[test]
fn the_paired_run_names_its_base_everywhere_and_offers_no_bless() {
    if std::env::var_os("BLESS").is_some() {
        let stored = Results::load(H200.as_ref()).unwrap();
        paired::derive(&stored).save(PAIRED.as_ref()).unwrap();
    }
    let results = Results::load(PAIRED.as_ref()).unwrap();
    let html = render(&results);
    check_structure(&results, &html);
    let doc = Html::parse_document(&html);
    let text = |e: &scraper::ElementRef| e.text().collect::<String>();
    let mode = &select(&doc, "#mode")[0];
    assert_eq!(mode.value().attr("data-mode"), Some("paired"));
    assert!(
        text(mode).contains("paired against base c7b4c3e"),
        "{}",
        text(mode)
    );
    assert!(
        !html.contains("KERNELGATE_BLESS"),
        "bless is refused in paired mode"
    );
    assert!(!html.contains("rebless"));
    // Every strip names the base, in its caption and in the chart.
    let strips = select(&doc, "figure.compared");
    assert_eq!(
        strips.len(),
        results
            .trials
            .iter()
            .filter(|t| t.verdict.is_some())
            .count()
    );
    for f in &strips {
        let caption = text(
            &f.select(&Selector::parse("figcaption").unwrap())
                .next()
                .unwrap(),
        );
        assert!(caption.contains("against base c7b4c3e"), "{caption}");
        assert!(f.html().contains("base c7b4c3e (n = "), "the strip's label");
        assert!(
            !f.html().contains("baseline"),
            "a paired strip says base, not baseline"
        );
    }
    // Every speedup chart is over the base.
    for f in select(&doc, "figure.chart") {
        if f.html().contains("speedup") {
            assert!(
                f.html().contains("speedup over base c7b4c3e (paired)"),
                "{}",
                text(&f)
            );
            assert!(!f.html().contains("reference"), "{}", text(&f));
        }
    }
    for suite in ["saxpy", "reduce", "matmul", "affine"] {
        check_colours(&doc, suite);
    }
    // The regression, with its launch change beside it.
    let evidence = select(
        &doc,
        &format!(
            "#{} table.evidence tr.differs",
            anchor("cmp", paired::REGRESSED)
        ),
    );
    let differs: Vec<String> = evidence.iter().map(text).collect();
    assert!(
        differs.contains(&"block threads25632".to_string())
            && differs.contains(&"threads / SM20481024".to_string()),
        "{differs:?}"
    );
    let marked = select(&doc, "table.resources mark");
    assert!(
        marked.iter().any(|m| text(m) == "256 → 32"),
        "resources base → candidate"
    );
    // New, changed and gone, named as such.
    let state_of = |name: &str| {
        let cell = select(&doc, &format!("#{}", anchor("t", name)))[0];
        let row = cell
            .ancestors()
            .find(|a| a.value().as_element().is_some_and(|e| e.name() == "tr"))
            .unwrap();
        scraper::ElementRef::wrap(row)
            .unwrap()
            .select(&Selector::parse(".badge").unwrap())
            .next()
            .map(|b| text(&b))
            .unwrap()
    };
    assert_eq!(state_of("bfloat::scalar::n=1048576"), "new");
    assert_eq!(state_of("half::half2::n=1000003"), "changed");
    assert_eq!(state_of(paired::REGRESSED), "regressed");
    let gone = text(&select(&doc, "#gone")[0]);
    assert!(
        gone.contains("softmax::two_pass::rows=4096,cols=128"),
        "{gone}"
    );
    assert_eq!(
        attention_rows(&doc),
        [vec![paired::REGRESSED.to_string()]],
        "the one regression needs attention"
    );
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
        .contains("the following required arguments were not provided:\n  <--html <OUT.html>|--markdown <OUT.md>|--junit <OUT.xml>>"));
    let out = run(&["report", FIXTURE, FIXTURE, "--html", "/dev/null"]);
    assert_eq!(out.status.code(), Some(2), "one trial twice");
}

/// A made-up trial code with identity `identity`.
fn trial_code(identity: &str) -> kernelgate::code::TrialCode {
    serde_json::from_value(serde_json::json!({
        "identity": identity, "arch": "sm_90", "toolchain": {"kernelgate": "0.1.0"},
        "kernels": [{"role": "kernel", "kernel": "vec4", "entries": []}],
        "parts": {"launches": "1", "inputs": "2", "check": "3", "bench": "4"}
    }))
    .unwrap()
}

/// The paired run with `affine` identical at the base (not timed) and `saxpy::vec4`'s code
/// changed, its SASS diff carried in the file (`sass_note`: why there is no SASS, if so).
fn paired_with_code(sass_note: Option<&str>) -> Results {
    use kernelgate::code::{Change, CodeChange, KernelPart, Role};
    use kernelgate::report::results::{GateNote, Identical, SavedFrom};
    use kernelgate::sass::change::{EntryDiff, KernelDiff, SassText};
    use kernelgate::sass::mix::MixDelta;
    let mut results = Results::load(PAIRED.as_ref()).unwrap();
    let mut skipped = 0;
    for t in &mut results.trials {
        if t.suite == "affine" && t.compiled.is_none() {
            t.gate = Some(GateNote::IdenticalCode {
                rev: "origin/main".into(),
                commit: paired::BASE.into(),
                timed: false,
            });
            t.measurement = None;
            t.verdict = None;
            t.code = Some(trial_code("aa11"));
            t.base_code = t.code.clone();
            t.code_change = Some(CodeChange::Same {
                toolchain: Vec::new(),
            });
            skipped += 1;
        } else if t.name.starts_with("saxpy::vec4::") {
            t.code = Some(trial_code("bb22"));
            t.base_code = Some(trial_code("cc33"));
            t.code_change = Some(CodeChange::Changed {
                changes: vec![
                    Change::Kernel {
                        role: Role::Kernel,
                        kernel: "vec4".into(),
                        parts: vec![KernelPart::Code],
                    },
                    Change::Launches,
                ],
                toolchain: Vec::new(),
            });
        }
    }
    results.identical = Some(Identical {
        skipped,
        timed: 0,
        saved_seconds: Some(12.5),
        saved_from: Some(SavedFrom::ThisRun),
        noise: None,
    });
    let sass = match sass_note {
        None => SassText::Diff {
            text: "--- base\n+++ head\n@@ -1,3 +1,3 @@\n LDG.E.128 R8, desc[UR4][R2.64]\n-FFMA R11, R11, UR6, R15\n+FFMA R11, R11, UR6, -R15\n STG.E.128 desc[UR4][R4.64], R8\n".into(),
        },
        Some(why) => SassText::Unavailable { why: why.into() },
    };
    results.sass = vec![KernelDiff {
        suite: "saxpy".into(),
        kernel: "vec4".into(),
        arch: "sm_90".into(),
        launches: None,
        launched: 1,
        entries: vec![EntryDiff {
            name: "saxpy_vec4".into(),
            was: None,
            hashes: ["96b2e151c37b7bba".into(), "0054c2919da3aaaa".into()],
            what: "code".into(),
            resources: Some("regs 18 → 24".into()),
            mix: vec![MixDelta {
                class: "FP32".into(),
                old: 4,
                new: 5,
            }],
            sass,
        }],
    }];
    results.sass_note = sass_note.map(str::to_string);
    results
}

#[test]
fn identical_trials_and_the_changed_kernels_sass_diff_are_shown() {
    let results = paired_with_code(None);
    let html = render(&results);
    check_structure(&results, &html);
    let doc = Html::parse_document(&html);
    let text = |e: &scraper::ElementRef| e.text().collect::<String>();
    let summary = text(&select(&doc, "#summary")[0]);
    assert!(
        summary.contains("identical code 4")
            && summary.contains("4 trial(s) skipped as identical code (not timed, correctness not run: the base passed it), about 12.50 s of GPU time saved (an estimate, from the time per trial this run took to time the others)"),
        "{summary}"
    );
    let anchor_id = "sass-saxpy--vec4";
    let diff = select(&doc, &format!("#{anchor_id}"));
    assert_eq!(diff.len(), 1, "one diff per changed kernel");
    let diff = &diff[0];
    assert_eq!(
        diff.select(&Selector::parse("pre.diff .del").unwrap())
            .map(|e| text(&e))
            .collect::<Vec<_>>(),
        ["-FFMA R11, R11, UR6, R15"]
    );
    assert_eq!(
        diff.select(&Selector::parse("pre.diff .add").unwrap())
            .map(|e| text(&e))
            .collect::<Vec<_>>(),
        ["+FFMA R11, R11, UR6, -R15"]
    );
    assert!(text(diff).contains("regs 18 → 24"));
    let mix = text(
        &diff
            .select(&Selector::parse("table.mix").unwrap())
            .next()
            .unwrap(),
    );
    assert!(mix.contains("FP32") && mix.contains("+1"), "{mix}");
    // The regressed trial's evidence links to it and says what changed.
    let figure = &select(&doc, &format!("#{}", anchor("cmp", paired::REGRESSED)))[0];
    let links: Vec<&str> = figure
        .select(&Selector::parse("p.code a").unwrap())
        .filter_map(|a| a.value().attr("href"))
        .collect();
    assert_eq!(links, [format!("#{anchor_id}").as_str()]);
    let code = text(
        &figure
            .select(&Selector::parse("p.code").unwrap())
            .next()
            .unwrap(),
    );
    assert!(
        code.starts_with("Code: changed since base c7b4c3e: kernel `vec4` (code), launches"),
        "{code}"
    );
    let identity = figure
        .select(&Selector::parse("table.evidence tr.differs").unwrap())
        .map(|r| text(&r))
        .find(|r| r.starts_with("trial identity"));
    assert_eq!(
        identity.as_deref(),
        Some("trial identity (code, launches, inputs, settings)cc33bb22")
    );
    // An identical trial's row says so, with no figures.
    let row = select(&doc, &format!("#{}", anchor("t", "affine::naive::n=65536")))[0];
    let row = scraper::ElementRef::wrap(
        row.ancestors()
            .find(|a| a.value().as_element().is_some_and(|e| e.name() == "tr"))
            .unwrap(),
    )
    .unwrap();
    assert!(
        text(&row).contains("identical code to base c7b4c3e: not timed"),
        "{}",
        text(&row)
    );
}

#[test]
fn without_nvdisasm_the_report_says_why_there_is_no_sass() {
    let why = "no `nvdisasm` found (looked in PATH, /usr/local/cuda/bin)";
    let results = paired_with_code(Some(why));
    let html = render(&results);
    check_structure(&results, &html);
    let doc = Html::parse_document(&html);
    let section: String = select(&doc, &format!("#{}", anchor("suite", "saxpy")))[0]
        .text()
        .collect();
    assert!(
        section.contains(&format!("SASS diffs are missing: {why}")),
        "{section}"
    );
    assert!(section.contains(&format!("No SASS: {why}")), "{section}");
    assert!(select(&doc, "pre.diff").is_empty());
}

#[test]
fn markdown_and_junit_say_identical_code_too() {
    let results = paired_with_code(None);
    let md = kernelgate::report::markdown::render(&results);
    let head = md.lines().next().unwrap();
    assert!(head.contains(", 4 identical code, "), "{head}");
    assert!(md.contains("4 trial(s) skipped as identical code"), "{md}");
    assert!(
        md.contains("| `affine::naive::n=65536` | – | – | – | – | identical code | – |"),
        "{md}"
    );
    let regressed = md
        .lines()
        .find(|l| l.starts_with(&format!("| `{}` | **regressed**", paired::REGRESSED)))
        .unwrap();
    // The cause begins with what changed in the trial.
    assert!(
        regressed.contains(
            "after Benjamini–Hochberg — changed since base c7b4c3e: kernel `vec4` (code), launches |"
        ),
        "{regressed}"
    );
    let xml = kernelgate::report::junit::render(&results);
    assert!(
        xml.contains(r#"<property name="kernelgate.identical.skipped" value="4"/>"#),
        "{xml}"
    );
}

/// Two kernels of a real run renamed as variants of one (`cub[algo=1]`, `cub[algo=2]`): the
/// report names the fastest per case at its top and plots the variants against their axis.
#[test]
fn variants_are_compared_at_the_top_and_plotted_against_their_axis() {
    let mut results = Results::load(H200.as_ref()).unwrap();
    for t in &mut results.trials {
        t.name = t
            .name
            .replace("::cub_warp_reductions::", "::cub[algo=1]::")
            .replace("::cub_raking::", "::cub[algo=2]::");
    }
    let html = render(&results);
    check_structure(&results, &html);
    let doc = Html::parse_document(&html);
    let tops = select(&doc, "p.variants");
    assert_eq!(tops.len(), 2, "a line per case");
    let top: String = tops[0].text().collect();
    assert!(
        top.starts_with("blockreduce::cub::rows=4096,cols=1024: fastest of 2 variants [algo="),
        "{top}"
    );
    let captions: Vec<String> = select(&doc, "figure.chart figcaption")
        .iter()
        .map(|c| c.text().collect())
        .collect();
    let across = captions
        .iter()
        .filter(|c| c.ends_with("against algo; a line per value of the other axes"))
        .count();
    assert_eq!(across, 2, "a chart per case: {captions:?}");
    assert!(html.contains("blockreduce::cub::rows=4096,cols=8192: its variants against algo"));
}
