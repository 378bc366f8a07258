//! The CI reports on a synthetic run: JUnit XML parsed and checked against the structure CI
//! tools read, the Markdown summary as a snapshot (`BLESS=1` rewrites it), the 1 MiB cap, and
//! GitHub annotations.

use kernelgate::baseline::{Fingerprint, Stored};
use kernelgate::gate::{Comparison, TrialVerdict, Verdict};
use kernelgate::measure::{Footprint, Resources};
use kernelgate::report::results::{
    BaselineRef, Commands, Compiled, FailKind, GateNote, Measurement, Results, Status,
    TrialFailure, TrialRecord, FORMAT,
};
use kernelgate::report::{annotations, junit, markdown};

fn measured(median: f64, speedup: Option<f64>) -> Measurement {
    Measurement {
        regime: kernelgate::measure::Regime::Cold,
        batch: [1, 1],
        launch_floor: 4.3e-6,
        time: Stored {
            median,
            low: median * 0.99,
            high: median * 1.01,
        },
        time_samples: vec![median; 16],
        speedup: speedup.map(|s| Stored {
            median: s,
            low: s * 0.99,
            high: s * 1.01,
        }),
        speedup_samples: speedup.map(|s| vec![s; 16]).unwrap_or_default(),
        max_slowdown: 0.03,
        precision: None,
        hit_time_cap: false,
        l2_flush: None,
        clocks: Default::default(),
        reference: None,
        footprint: Footprint {
            pool_peak: 128 << 20,
            free_drop: 0,
            local_reservation: 0,
            fp64: None,
            library: None,
            launches: vec![Resources {
                entry: "k".into(),
                registers: 32,
                static_shared: 0,
                dynamic_shared: 0,
                local_bytes: 0,
                max_threads: 1024,
                block_threads: 256,
                blocks_per_sm: 8,
            }],
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
    }
}

fn verdict(v: Verdict, slowdown: f64) -> TrialVerdict {
    let c = Comparison {
        slowdown,
        low: slowdown - 0.01,
        high: slowdown + 0.01,
        p: 1e-6,
        p_adjusted: 2e-6,
    };
    TrialVerdict {
        verdict: v,
        time: c,
        speedup: None,
        basis: Default::default(),
    }
}

fn trial(name: &str, status: Status, failure: Option<FailKind>) -> TrialRecord {
    TrialRecord {
        name: name.into(),
        suite: name.split("::").next().unwrap().into(),
        file: format!("suites/{}.toml", name.split("::").next().unwrap()),
        line: 20,
        status,
        failure,
        device_ordinal: Some(0),
        ignored: None,
        measurement: None,
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

/// Compared with a stored baseline whose median was `median`.
fn compared(median: f64) -> Option<GateNote> {
    Some(GateNote::Compared {
        baseline: BaselineRef::for_tests("baselines/h200/x.json", median),
        remeasured: false,
        family: 3,
    })
}

fn run() -> Results {
    let mut compile = trial("saxpy::compile", Status::Passed, None);
    compile.compiled = Some(Compiled {
        sources: 1,
        fresh: 0,
        built: 0,
        arch: "sm_90".into(),
        fp64: String::new(),
    });
    let mut unchanged = trial("saxpy::vec4::n=4096", Status::Passed, None);
    unchanged.measurement = Some(measured(51.2e-6, Some(1.25)));
    unchanged.verdict = Some(verdict(Verdict::Unchanged, 1.001));
    unchanged.gate = compared(51.15e-6);
    let mut regressed = trial(
        "matmul::tiled::n=1000",
        Status::Failed,
        Some(FailKind::Performance),
    );
    regressed.measurement = Some(measured(334.7e-6, Some(1.03)));
    regressed.verdict = Some(verdict(Verdict::Regressed, 1.245));
    regressed.gate = compared(268.6e-6);
    regressed.commands = Some(Commands {
        rerun: "cargo test --test perf -- --exact 'matmul::tiled::n=1000'".into(),
        profile: None,
        rebless: Some(
            "KERNELGATE_BLESS=1 cargo test --test perf -- --exact 'matmul::tiled::n=1000'".into(),
        ),
        invocation: None,
    });
    let mut improved = trial("reduce::shuffle::n=65536", Status::Passed, None);
    improved.measurement = Some(measured(4.1e-6, Some(30.0)));
    improved.verdict = Some(verdict(Verdict::Improved, 0.88));
    improved.gate = compared(4.66e-6);
    let mut reference = trial("saxpy::naive::n=4096", Status::Passed, None);
    reference.measurement = Some(measured(64.0e-6, None));
    reference.gate = Some(GateNote::NoBaseline {
        elsewhere: Vec::new(),
        added: None,
    });
    let mut wrong = trial(
        "conv2d::tiled::h=200,w=200",
        Status::Failed,
        Some(FailKind::Correctness),
    );
    wrong.failure_detail = Some(TrialFailure::WrongOutput(
        "output `out` of `tiled` differs from the reference `naive`: 3 of 40000 elements differ; worst at index 7: got 1e0, expected <2> & \"3\"".into(),
    ));
    let mut broken = trial(
        "softmax::online::rows=4096,cols=128",
        Status::Failed,
        Some(FailKind::Infrastructure),
    );
    broken.gate = Some(GateNote::BaselineError {
        message: "baseline `x.json` is not valid JSON".into(),
    });
    let mut ignored = trial("transpose::tiled::n=1000", Status::Ignored, None);
    ignored.ignored = Some("no CUDA driver: libcuda could not be loaded".into());
    Results {
        format: FORMAT,
        kernelgate: "0.1.0".into(),
        date: "2026-11-21".into(),
        device: Some(Fingerprint {
            name: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: 132,
            memory_gib: 140,
            driver: "580.159.04".into(),
            cuda: "13.0".into(),
        }),
        device_info: None,
        trials: vec![
            compile, reference, unchanged, regressed, improved, wrong, broken, ignored,
        ],
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

#[test]
fn junit_has_the_structure_ci_tools_read() {
    let xml = junit::render(&run());
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let attr = |n: roxmltree::Node, a: &str| {
        n.attribute(a)
            .unwrap_or_else(|| panic!("{a} on {:?}", n.tag_name()))
            .to_string()
    };
    assert_eq!(
        (
            attr(root, "tests"),
            attr(root, "failures"),
            attr(root, "errors"),
            attr(root, "skipped")
        ),
        ("8".into(), "2".into(), "1".into(), "1".into())
    );
    let mut cases = 0;
    let mut sum_tests = 0;
    for suite in root.children().filter(|n| n.is_element()) {
        assert_eq!(suite.tag_name().name(), "testsuite");
        // The run's mode travels as JUnit properties: `kernelgate.mode` (and, paired, the base).
        let properties: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("properties"))
            .flat_map(|p| p.children().filter(|n| n.is_element()))
            .map(|p| (attr(p, "name"), attr(p, "value")))
            .collect();
        assert_eq!(
            properties,
            [(
                "kernelgate.mode".to_string(),
                "against stored baselines".to_string()
            )]
        );
        let testcases = || {
            suite
                .children()
                .filter(|n| n.is_element() && n.has_tag_name("testcase"))
        };
        let counted = testcases().count();
        assert_eq!(attr(suite, "tests").parse::<usize>().unwrap(), counted);
        sum_tests += counted;
        for case in testcases() {
            assert_eq!(case.tag_name().name(), "testcase");
            assert!(!attr(case, "name").is_empty() && !attr(case, "classname").is_empty());
            for child in case.children().filter(|n| n.is_element()) {
                assert!(
                    ["failure", "error", "skipped", "system-out"]
                        .contains(&child.tag_name().name()),
                    "{:?}",
                    child.tag_name()
                );
            }
            cases += 1;
        }
    }
    assert_eq!((cases, sum_tests), (8, 8));
    let conv = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("conv2d::tiled::h=200,w=200"))
        .unwrap();
    let failure = conv.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(failure.attribute("type"), Some("correctness"));
    assert!(
        failure.text().unwrap().contains("expected <2> & \"3\""),
        "escaped and read back intact"
    );
    let regressed = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("matmul::tiled::n=1000"))
        .unwrap();
    assert_eq!(
        regressed
            .children()
            .find(|n| n.has_tag_name("failure"))
            .unwrap()
            .attribute("type"),
        Some("performance")
    );
    let broken = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("softmax::online::rows=4096,cols=128"))
        .unwrap();
    assert!(broken.children().any(|n| n.has_tag_name("error")));
    let ignored = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("transpose::tiled::n=1000"))
        .unwrap();
    assert!(ignored.children().any(|n| n.has_tag_name("skipped")));
}

#[test]
fn markdown_summary_snapshot() {
    let text = markdown::render(&run());
    let path = "tests/snapshots/summary.md";
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(
        text, expected,
        "the summary changed (BLESS=1 rewrites {path}); it is now:\n{text}"
    );
    let attention = text.find("### Needs attention").unwrap();
    let all = text.find("### All trials").unwrap();
    assert!(attention < all, "what needs attention comes first");
}

#[test]
fn markdown_stays_under_the_step_summary_cap() {
    let mut big = run();
    let template = big.trials[2].clone();
    big.trials = (0..20_000)
        .map(|i| {
            let mut t = template.clone();
            t.name = format!("saxpy::vec4::n={i}");
            t
        })
        .collect();
    let text = markdown::render(&big);
    assert!(text.len() <= markdown::MAX_BYTES, "{}", text.len());
    assert!(text.contains("of 20000 trials shown"), "says it was cut");
}

#[test]
fn annotations_point_at_the_suite_and_are_capped() {
    let lines = annotations::render(&run());
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("::error file=suites/matmul.toml,line=20,title=kernelgate%3A matmul%3A%3Atiled%3A%3An=1000::regressed"), "{}", lines[0]);
    assert!(
        lines[0].contains("%0A  rerun%3A") || lines[0].contains("%0A  rerun:"),
        "newlines escaped: {}",
        lines[0]
    );
    let mut many = run();
    let failing = many.trials[3].clone();
    many.trials = (0..12).map(|_| failing.clone()).collect();
    let lines = annotations::render(&many);
    assert_eq!(lines.len(), annotations::MAX + 1);
    assert!(lines.last().unwrap().contains("2 more failing trial(s)"));
}

/// A paired run's summary names the base, counts new, changed and gone trials, and calls each
/// what it is (never `no baseline`).
#[test]
fn markdown_of_a_paired_run_names_new_changed_and_gone() {
    let results = Results::load("tests/fixtures/results/h200-paired.json".as_ref()).unwrap();
    let text = markdown::render(&results);
    let head = text.lines().next().unwrap();
    assert!(head.ends_with(", 6 new, 2 changed, 2 gone"), "{head}");
    assert!(text.contains("paired against KERNELGATE_BASE=origin/main (c7b4c3e0f1a2)"));
    assert!(text.contains("| speedup over base c7b4c3e |"), "{text}");
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| `{name}` ")))
            .unwrap_or_else(|| panic!("{name}"))
            .to_string()
    };
    assert!(row("bfloat::scalar::n=1048576").contains("| new |"));
    assert!(row("half::half2::n=1000003").contains("| changed |"));
    assert!(row("softmax::two_pass::rows=4096,cols=128").contains("| gone |"));
    assert!(!text.contains("no baseline"));
    assert!(
        text.contains("| `saxpy::vec4::n=1048576` | **regressed** | +16.6% [")
            && text.contains("against base `c7b4c3e`; p = "),
        "{text}"
    );
    // JUnit and annotations, plain text: no rebless in paired mode.
    let xml = junit::render(&results);
    assert!(!xml.contains("KERNELGATE_BLESS"));
    assert!(xml.contains(
        r#"<property name="kernelgate.commit" value="5e1f9d2a7b3c4d5e6f708192a3b4c5d6e7f8091a"/>"#
    ));
    assert!(annotations::render(&results)
        .iter()
        .all(|l| !l.contains("KERNELGATE_BLESS")));
}

/// The machine's verdicts: `machine-slower` passes yet needs attention (a warning) in every
/// report; `machine-faster` passes quietly; both are counted by name.
#[test]
fn the_machines_verdicts_are_counted_and_machine_slower_is_a_warning() {
    let mut results = run();
    let mut slower = trial("saxpy::scalar::n=4096", Status::Passed, None);
    slower.measurement = Some(measured(54e-6, Some(1.0)));
    slower.verdict = Some(verdict(Verdict::MachineSlower, 1.05));
    slower.gate = compared(51.4e-6);
    let mut faster = trial("saxpy::scalar::n=8192", Status::Passed, None);
    faster.measurement = Some(measured(90e-6, Some(1.0)));
    faster.verdict = Some(verdict(Verdict::MachineFaster, 0.95));
    faster.gate = compared(94.7e-6);
    results.trials.extend([slower, faster]);
    let text = markdown::render(&results);
    let head = text.lines().next().unwrap();
    assert!(
        head.contains(" improved, 1 machine-slower, 1 machine-faster, "),
        "{head}"
    );
    let attention = text.split("### Needs attention").nth(1).unwrap();
    let attention = attention.split("\n\n").nth(1).unwrap();
    assert!(
        attention.contains("| `saxpy::scalar::n=4096` | machine-slower | +5.0% ["),
        "{attention}"
    );
    assert!(!attention.contains("n=8192"), "{attention}");
    assert!(
        !markdown::render(&run()).contains("machine-"),
        "no count where there is none"
    );
    let warning = kernelgate::report::closing::machine_warning(&results).unwrap();
    assert!(
        warning.starts_with("kernelgate: WARNING: 1 trial(s) machine-slower")
            && warning.ends_with(": saxpy::scalar::n=4096"),
        "{warning}"
    );
    let html = kernelgate::html::render(&results);
    assert!(
        html.contains(r#"<span class="badge machine-slower">machine-slower</span> 1"#)
            && html.contains(r#"<span class="badge machine-faster">machine-faster</span> 1"#),
        "both counted in the summary"
    );
    let summary = html.split("<h3>Needs attention</h3>").nth(1).unwrap();
    let summary = summary.split("</section>").next().unwrap();
    assert!(summary.contains("machine-slower") && !summary.contains("machine-faster"));
    // JUnit: both pass, saying why.
    let xml = junit::render(&results);
    let case = xml
        .split("<testcase ")
        .find(|c| c.contains("saxpy::scalar::n=4096"))
        .unwrap();
    assert!(
        !case.contains("<failure") && case.contains("machine-slower +5.0%"),
        "{case}"
    );
}
