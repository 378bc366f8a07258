//! The trials' code through the runner: paired mode skips a trial whose code is identical at
//! the base (or times it as an A/A pair under `KERNELGATE_TIME_IDENTICAL`), says what changed
//! in the others; stored mode blesses the code with the baseline and says "same code" or what
//! changed against it. The executor's code is made up (`code::trial_tests::code`).

use super::paired::{paired_measured, run_paired_with, runner};
use super::*;
use crate::code::trial_tests::code as made_up;
use crate::code::{Change, CodeChange, KernelPart, Role};
use crate::report::results::{Results, SavedFrom};
use crate::sass::change::SassText;
use std::sync::Arc;

/// Paired: suite `t` against a base whose `salted` kernels' code differs; returns the results
/// and the specs executed.
fn paired(
    name: &str,
    salted: &[&str],
    time_identical: bool,
    script: Vec<(&str, u32, Outcome)>,
) -> (Results, Vec<TrialSpec>) {
    // The first suite asked for is the candidate's: its `salted` kernels changed.
    let asked = std::cell::Cell::new(0);
    let code = |s: &Suite| {
        asked.set(asked.get() + 1);
        let salted = if asked.get() == 1 { salted } else { &[] };
        Some(made_up(s, "sm_90", salted))
    };
    run_paired_with(name, script, |_| {}, (code, time_identical))
}

#[test]
fn a_paired_trial_with_identical_code_is_not_run_and_passes() {
    // `fast` changed; `naive`, the reference, did not — but `fast`'s trial checks against
    // `naive`, and `naive`'s own trial is identical.
    let (results, specs) = paired(
        "identical",
        &["fast"],
        false,
        vec![("t::fast", 1, paired_measured(11e-6, 10e-6, 32, 0.01))],
    );
    let kernels: Vec<&TrialSpec> = specs.iter().filter(|s| s.kind != Kind::Compile).collect();
    assert!(
        !kernels.is_empty()
            && kernels
                .iter()
                .all(|s| s.kind == Kind::Kernel { case: 0, kernel: 1 }),
        "only the changed trial runs (timed, confirmed, counted): {specs:?}"
    );
    let naive = record(&results, "t::naive");
    assert_eq!(naive.status, Status::Passed);
    assert_eq!(naive.decided(), Some(Verdict::IdenticalCode));
    assert!(naive.measurement.is_none() && naive.verdict.is_none());
    assert!(matches!(
        naive.gate,
        Some(GateNote::IdenticalCode { timed: false, .. })
    ));
    assert_eq!(naive.code, naive.base_code, "both sides' code is kept");
    assert!(naive.code_change.as_ref().is_some_and(CodeChange::is_same));
    let said =
        "identical code to base 0123456: not timed, correctness not run (the base passed it)";
    assert_eq!(
        crate::report::terminal::line(naive, None),
        said,
        "the line, with no figures: nothing was timed"
    );
    assert_eq!(crate::report::terminal::headline(naive), said);
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert_eq!(
        fast.code_change,
        Some(CodeChange::Changed {
            changes: vec![Change::Kernel {
                role: Role::Kernel,
                kernel: "fast".into(),
                parts: vec![KernelPart::Code]
            }],
            toolchain: Vec::new()
        })
    );
    let identical = results.identical.as_ref().unwrap();
    assert_eq!((identical.skipped, identical.timed), (1, 0));
    assert_eq!(
        identical.saved_seconds,
        Some(0.5),
        "fast's time, this run's mean"
    );
    assert_eq!(identical.saved_from, Some(SavedFrom::ThisRun));
    // The changed kernel's diff, once: its made-up code has no module to disassemble.
    assert_eq!(results.sass.len(), 1);
    let d = &results.sass[0];
    assert_eq!((d.suite.as_str(), d.kernel.as_str()), ("t", "fast"));
    assert!(
        matches!(&d.entries[0].sass, SassText::Failed { error } if error.contains("not compiled")),
        "{d:?}"
    );
    // Made while the trials ran, and profiled.
    let totals = results.totals.as_ref().unwrap();
    assert!(totals.sass_seconds.is_some_and(|s| s >= 0.0), "{totals:?}");
}

#[test]
fn the_kernels_to_diff_are_known_before_anything_runs() {
    let dir = scratch("expected-diffs");
    let suites = vec![suite(&dir)];
    let base = crate::paired::Base {
        rev: "HEAD~1".into(),
        commit: "0123456789abcdef".into(),
        suites: suites.clone(),
    };
    let config = config(&dir, Mode::Gate);
    let plan = plan(&suites);
    let codes = vec![
        Arc::new(made_up(&suites[0], "sm_90", &["fast"])),
        Arc::new(made_up(&base.suites[0], "sm_90", &[])),
    ];
    let executor = Spying::new(Scripted::new(&plan, Vec::new()), codes);
    let runner = runner(&config, &suites, &executor, &base);
    let pairing: Vec<_> = plan
        .iter()
        .map(|p| crate::paired::pair(&suites, &base, p))
        .collect();
    let all: Vec<usize> = (0..plan.len()).collect();
    let codes = super::super::code::trial_codes(&runner, &plan, &all, Some(&pairing));
    let expected = |timed: &[usize]| {
        let changes = super::super::sass::expected(timed, &pairing, &codes);
        super::super::sass::changed_kernels(&runner, &plan, &pairing, &changes)
    };
    let fast = suites[0]
        .kernels
        .iter()
        .position(|k| k.name == "fast")
        .unwrap();
    assert_eq!(expected(&all), [((0, fast), (0, fast))], "fast, once");
    let naive = plan.iter().position(|p| p.name == "t::naive").unwrap();
    assert!(
        expected(&[naive]).is_empty(),
        "naive's trial is identical: nothing to diff"
    );
    assert!(executor.specs.lock().unwrap().is_empty(), "nothing ran");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_kernel_whose_trial_fails_has_no_sass_diff() {
    let failed = Outcome::Failed(TrialFailure::Harness("the worker went away".into()));
    let (results, _) = paired(
        "failed-changed",
        &["fast"],
        false,
        vec![("t::fast", 1, failed)],
    );
    assert_eq!(record(&results, "t::fast").status, Status::Failed);
    assert!(
        results.sass.is_empty() && results.sass_note.is_none(),
        "only a compared trial's kernels are diffed, as before: {:?}",
        results.sass
    );
    let totals = results.totals.as_ref().unwrap();
    assert!(
        totals.sass_seconds.is_some(),
        "paired: profiled: {totals:?}"
    );
}

#[test]
fn time_identical_times_them_as_a_a_pairs_outside_the_family() {
    let (results, specs) = paired(
        "time-identical",
        &["fast"],
        true,
        vec![
            // The A/A pair shows a 6% "change": noise, never a regression.
            ("t::naive", 1, paired_measured(10.6e-6, 10e-6, 32, 0.01)),
            ("t::fast", 1, paired_measured(10e-6, 10e-6, 32, 0.01)),
        ],
    );
    assert_eq!(specs.iter().filter(|s| s.kind != Kind::Compile).count(), 2);
    let naive = record(&results, "t::naive");
    let v = naive.verdict.unwrap();
    assert_eq!(v.verdict, Verdict::IdenticalCode);
    assert!(v.time.slowdown > 1.05, "{v:?}");
    assert_eq!(naive.status, Status::Passed, "identical code passes");
    assert!(matches!(
        naive.gate,
        Some(GateNote::IdenticalCode { timed: true, .. })
    ));
    let fast = record(&results, "t::fast");
    assert!(
        matches!(fast.gate, Some(GateNote::Paired { family: 1, .. })),
        "the A/A pair is not in the gate's family: {:?}",
        fast.gate
    );
    let identical = results.identical.as_ref().unwrap();
    assert_eq!((identical.skipped, identical.timed), (0, 1));
    let noise = identical.noise.as_ref().unwrap();
    assert_eq!(noise.trial, "t::naive");
    assert_eq!(
        noise.regressed, 1,
        "the gate alone would have called it regressed"
    );
    assert!(crate::report::terminal::headline(naive).starts_with(
        "identical code to base 0123456, timed anyway (KERNELGATE_TIME_IDENTICAL): +6.0%"
    ));
}

/// Stored mode with code: blesses both trials (with code), then gates with `salted` kernels'
/// code changed.
fn stored(name: &str, salted: &[&str]) -> Results {
    let dir = scratch(name);
    let suites = vec![suite(&dir)];
    let plan = plan(&suites);
    let script = || {
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, measured(10e-6, 32, 0.01, 1000)),
        ]
    };
    let run = |mode: Mode, salted: &[&str]| {
        let config = config(&dir, mode);
        let executor = Spying::new(
            Scripted::new(&plan, script()),
            vec![Arc::new(made_up(&suites[0], "sm_90", salted))],
        );
        run_all(&config, &suites, &plan, &executor).results
    };
    run(Mode::Bless, &[]);
    let stored = baseline::load(&baseline::path(
        &dir.join("baselines"),
        &crate::baseline::Fingerprint::of(&device()),
        "t",
    ))
    .unwrap()
    .unwrap();
    let entry = &stored.trials["t::fast"];
    assert!(entry.code.is_some(), "blessed with its code");
    assert_eq!(entry.trial_seconds, Some(0.5));
    let results = run(Mode::Gate, salted);
    let _ = std::fs::remove_dir_all(&dir);
    results
}

#[test]
fn a_stored_verdict_says_same_code_or_what_changed() {
    let same = stored("stored-same", &[]);
    let totals = same.totals.as_ref().unwrap();
    assert_eq!(totals.sass_seconds, None, "no base, no SASS diffs");
    let fast = record(&same, "t::fast");
    assert!(fast.code_change.as_ref().is_some_and(CodeChange::is_same));
    let line = crate::report::terminal::note(fast);
    assert!(line.ends_with("· same code as the baseline"), "{line}");
    let changed = stored("stored-changed", &["naive"]);
    let fast = record(&changed, "t::fast");
    assert_eq!(
        fast.code_change.as_ref().unwrap().changed_kernels(),
        [(Role::Reference, "naive")]
    );
    let line = crate::report::terminal::note(fast);
    assert!(
        line.ends_with("· changed since the baseline: reference `naive` (code)"),
        "{line}"
    );
}
