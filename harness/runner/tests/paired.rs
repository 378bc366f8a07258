//! Paired mode through the runner: trials timed against their base (the executor's spec says
//! which kernel), judged on per-round ratios, new / changed / gone trials listed, re-measures
//! timed against the base again.

use super::*;

/// A stop no signal sets.
static NEVER: crate::stop::Stop = crate::stop::Stop::new();

/// Paired mode: the executor's "reference" samples are the base kernel's.
pub(super) fn paired_measured(cand: f64, base: f64, n: usize, spread: f64) -> Outcome {
    let mut s = samples(cand, n, spread);
    s.reference = times(base, n, spread / 4.0);
    Outcome::Measured(Box::new(Measured {
        ordinal: 0,
        samples: s,
        footprint: footprint(1000),
        base_footprint: Some(footprint(1000)),
        seconds: 0.5,
        counters: None,
    }))
}

/// A quiet runner of `suites` through `executor`, paired with `base`.
pub(super) fn runner<'a>(
    config: &'a Config,
    suites: &'a [Suite],
    executor: &'a dyn Executor,
    base: &'a crate::paired::Base,
) -> Runner<'a> {
    Runner {
        config,
        suites,
        executor,
        progress: crate::runner::Progress::Off,
        base: Some(base),
        stop: &NEVER,
    }
}

/// Runs suite `t` in paired mode against a base that has the same suite (edited by
/// `edit_base`).
fn run_paired(
    name: &str,
    script: Vec<(&str, u32, Outcome)>,
    edit_base: impl FnOnce(&mut Suite),
) -> (crate::report::results::Results, Vec<TrialSpec>) {
    run_paired_with(name, script, edit_base, (|_: &Suite| None, false))
}

/// [`run_paired`] with each side's code made by `code` (applied to the candidate's suite,
/// then the base's), and `KERNELGATE_TIME_IDENTICAL` as `time_identical`.
pub(super) fn run_paired_with(
    name: &str,
    script: Vec<(&str, u32, Outcome)>,
    edit_base: impl FnOnce(&mut Suite),
    (code, time_identical): (impl Fn(&Suite) -> Option<crate::code::SuiteCode>, bool),
) -> (crate::report::results::Results, Vec<TrialSpec>) {
    let dir = scratch(name);
    let suites = vec![suite(&dir)];
    let mut base_suite = suites[0].clone();
    edit_base(&mut base_suite);
    let base = crate::paired::Base {
        rev: "HEAD~1".into(),
        commit: "0123456789abcdef".into(),
        suites: vec![base_suite],
    };
    let config = Config {
        time_identical,
        ..config(&dir, Mode::Gate)
    };
    let plan = plan(&suites);
    let codes = [&suites[0], &base.suites[0]]
        .into_iter()
        .filter_map(|s| code(s).map(std::sync::Arc::new))
        .collect();
    let executor = Spying::new(Scripted::new(&plan, script), codes);
    let runner = runner(&config, &suites, &executor, &base);
    let selected: Vec<usize> = (0..plan.len()).collect();
    let report = runner.run(&plan, &selected);
    let _ = std::fs::remove_dir_all(&dir);
    (report.results, executor.specs.into_inner().unwrap())
}

#[test]
fn paired_trials_are_timed_against_their_base_and_judged_on_ratios() {
    let (results, specs) = run_paired(
        "paired",
        vec![
            // The machine is 8% slower in this run: both sides, so nothing changed.
            ("t::naive", 1, paired_measured(10.8e-6, 10.8e-6, 32, 0.01)),
            // A real 10% slowdown of the candidate against its base.
            ("t::fast", 1, paired_measured(11e-6, 10e-6, 32, 0.01)),
        ],
        |_| {},
    );
    let kernel_specs: Vec<&TrialSpec> = specs.iter().filter(|s| s.kind != Kind::Compile).collect();
    assert!(
        kernel_specs
            .iter()
            .all(|s| s.base.is_some() && s.regime.is_none()),
        "{specs:?}"
    );
    assert_eq!(
        kernel_specs[0].base.unwrap().at(),
        crate::worker::protocol::SuiteRef::Base(0),
        "the base's own first suite"
    );
    let naive = record(&results, "t::naive");
    assert_eq!(naive.verdict.unwrap().verdict, Verdict::Unchanged);
    assert!(
        matches!(&naive.gate, Some(GateNote::Paired { commit, family: 2, .. }) if commit == "0123456789abcdef")
    );
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert_eq!(fast.failure, Some(FailKind::Performance));
    let message = said(fast);
    assert!(
        message.starts_with("regressed against the base revision"),
        "{message}"
    );
    assert!(
        message.contains("base: KERNELGATE_BASE=HEAD~1 (0123456789abcdef)"),
        "{message}"
    );
    // Its commands repeat the paired experiment against the same base (the variables before
    // `ncu`, which runs the rest as it is), never a stored-mode run.
    assert!(
        message.contains("rerun:   KERNELGATE_BASE=0123456789abcdef KERNELGATE_SUITES="),
        "{message}"
    );
    assert!(
        message.contains("profile: KERNELGATE_BASE=0123456789abcdef KERNELGATE_SUITES=")
            && message.contains(" KERNELGATE_TIMEOUT=600 ncu "),
        "{message}"
    );
    // Bless is refused in paired mode: no record offers it.
    assert!(!message.contains("KERNELGATE_BLESS"), "{message}");
    assert!(results
        .trials
        .iter()
        .all(|t| t.commands.as_ref().is_none_or(|c| c.rebless.is_none())));
    // Both footprints travel in the record: the candidate's and the base kernel's.
    assert!(fast
        .measurement
        .as_ref()
        .unwrap()
        .baseline_footprint
        .is_some());
    assert_eq!(
        fast.measurement.as_ref().unwrap().reference.as_deref(),
        Some("base 0123456")
    );
    let line = crate::report::terminal::line(fast, None);
    assert!(line.contains("REGRESSED +10.0%"), "{line}");
    assert!(line.contains("vs base 0123456 (paired)"), "{line}");
    assert_eq!(results.base.as_ref().unwrap().rev, "HEAD~1");
}

#[test]
fn paired_new_changed_and_gone_trials_are_listed_not_compared() {
    let (results, specs) = run_paired(
        "paired-changed",
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, measured(10e-6, 32, 0.01, 1000)),
        ],
        |base| {
            // At the base, `fast` did not exist, another kernel did, and `y` was longer.
            base.kernels[1].name = "old_kernel".into();
            base.cases[0].lens[1] = 2048;
        },
    );
    assert!(
        specs.iter().all(|s| s.base.is_none()),
        "nothing is paired: {specs:?}"
    );
    let naive = record(&results, "t::naive");
    assert!(
        matches!(&naive.gate, Some(GateNote::Changed { why }) if why.contains("buffers changed")),
        "{:?}",
        naive.gate
    );
    assert_eq!(naive.status, Status::Passed);
    assert_eq!(record(&results, "t::fast").gate, Some(GateNote::New));
    assert_eq!(results.gone, ["t::old_kernel"]);
}

#[test]
fn a_paired_remeasure_is_timed_against_the_base_again() {
    let (results, specs) = run_paired(
        "paired-remeasure",
        vec![
            ("t::naive", 1, paired_measured(10e-6, 10e-6, 32, 0.01)),
            ("t::fast", 1, paired_measured(10.4e-6, 10e-6, 12, 0.12)),
            (
                "t::fast",
                REMEASURE_EFFORT,
                paired_measured(10.05e-6, 10e-6, 64, 0.01),
            ),
        ],
        |_| {},
    );
    let again: Vec<&TrialSpec> = specs
        .iter()
        .filter(|s| s.effort == REMEASURE_EFFORT)
        .collect();
    assert_eq!(again.len(), 1, "{specs:?}");
    assert!(again[0].base.is_some());
    let fast = record(&results, "t::fast");
    assert!(
        matches!(
            fast.gate,
            Some(GateNote::Paired {
                remeasured: true,
                ..
            })
        ),
        "{:?}",
        fast.gate
    );
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Unchanged);
}
