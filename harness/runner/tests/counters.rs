//! Hardware counters through the runner: a confirmed slowdown of the baseline's own trial with
//! every exact counter equal is the machine's (`machine-slower`, failing only under
//! `KERNELGATE_STRICT_TIME`); a moved exact counter keeps the regression and is named; the
//! instruction gate fails growth without statistics; counters are read after all timing, and
//! not for a re-measure that settled on `unchanged`.

use super::*;
use crate::code::SuiteCode;
use crate::measure::counters::{Counter, CounterReport, TrialCounters};
use std::sync::Arc;

/// The scripted executor, noting how many trials each counters request carried.
struct Batching(Scripted, Mutex<Vec<usize>>);

impl Executor for Batching {
    fn slots(&self) -> usize {
        1
    }
    fn device(&self) -> Option<DeviceInfo> {
        self.0.device()
    }
    fn execute(&self, slot: usize, spec: &TrialSpec) -> Outcome {
        self.0.execute(slot, spec)
    }
    fn execute_counters(&self, slot: usize, specs: &[TrialSpec]) -> Vec<Outcome> {
        self.1.lock().unwrap().push(specs.len());
        specs.iter().map(|s| self.0.execute(slot, s)).collect()
    }
}

/// Counters with `instructions` executed (exact) and a DRAM write count that wanders.
fn values(instructions: f64, written: f64) -> crate::measure::counters::CounterValues {
    [
        (Counter::Instructions, instructions),
        (Counter::DramWriteBytes, written),
    ]
    .into_iter()
    .collect()
}

/// The code the executor gives suite `t`: its kernels as `code::trial_tests::code` makes them
/// up, those in `salted` changed.
fn code_of(suite: &Suite, salted: &[&str]) -> Arc<crate::code::SuiteCode> {
    Arc::new(crate::code::trial_tests::code(suite, "sm_90", salted))
}

/// The stored baselines of `suite` (`t`), every entry with two counter reads of `instructions`
/// and the code of its trial at `code`, as a bless of that code stores it (none: as a format-2
/// file has it).
fn bless_with_counters(dir: &Path, suite: &Suite, instructions: f64, code: Option<&SuiteCode>) {
    bless_baselines(dir);
    let fingerprint = crate::baseline::Fingerprint::of(&device());
    let path = baseline::path(dir, &fingerprint, "t");
    let mut file = baseline::load(&path).unwrap().unwrap();
    for p in plan(std::slice::from_ref(suite)) {
        let (Some((case, kernel)), Some(e)) = (p.case_kernel(), file.trials.get_mut(&p.name))
        else {
            continue;
        };
        e.counters = vec![values(instructions, 10.0), values(instructions, 30.0)];
        e.code = code.map(|c| crate::code::trial_code(suite, case, kernel, None, c));
    }
    baseline::save(&path, &file).unwrap();
}

/// A counters-only outcome reading `instructions` on two allocations.
fn counted(instructions: f64) -> Outcome {
    let read = TrialCounters {
        kernel: values(instructions, 20.0),
        against: Some(values(1000.0, 20.0)),
    };
    Outcome::Measured(Box::new(Measured {
        ordinal: 0,
        samples: crate::measure::Samples::none(),
        footprint: footprint(1000),
        base_footprint: None,
        seconds: 0.5,
        counters: Some(CounterReport::Collected(vec![read.clone(), read])),
    }))
}

/// Runs `t` (gating, `strict_time` as given) against baselines with counters of 1000
/// instructions, blessed with the code of `t` with the kernels in `blessed` changed (`&[]`: the
/// code this run has; `None`: no code, as format 2); `fast` is measured 5% slower, confirmed
/// so, and reads `instructions`.
fn slower_fast(
    name: &str,
    instructions: f64,
    strict_time: bool,
    blessed: Option<&[&str]>,
) -> (Results, Vec<(String, u32)>) {
    let dir = scratch(name);
    let suites = vec![suite(&dir)];
    let mut config = config(&dir, Mode::Gate);
    config.strict_time = strict_time;
    let old = blessed.map(|b| code_of(&suites[0], b));
    bless_with_counters(&config.baselines, &suites[0], 1000.0, old.as_deref());
    let plan = plan(&suites);
    let executor = Spying::new(
        Scripted::new(
            &plan,
            vec![
                ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
                ("t::fast", 1, measured(10.5e-6, 32, 0.01, 1000)),
                (
                    "t::fast (fresh)",
                    REMEASURE_EFFORT,
                    measured(10.5e-6, 64, 0.01, 1000),
                ),
                ("t::fast (counters)", 1, counted(instructions)),
            ],
        ),
        vec![code_of(&suites[0], &[])],
    );
    let report = run_all(&config, &suites, &plan, &executor);
    let calls = executor.inner.calls();
    let _ = std::fs::remove_dir_all(&dir);
    (report.results, calls)
}

use crate::report::results::Results;

#[test]
fn a_confirmed_slowdown_with_equal_exact_counters_is_the_machines() {
    let (results, calls) = slower_fast("machine-slower", 1000.0, false, Some(&[]));
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::MachineSlower);
    assert_eq!(fast.status, Status::Passed, "the machine's change passes");
    let line = crate::report::terminal::headline(fast);
    assert!(line.contains("machine-slower +5.0%"), "{line}");
    assert!(line.contains("confirmed in a fresh worker"), "{line}");
    assert!(line.contains("instructions equal"), "{line}");
    assert_eq!(
        calls,
        [
            ("t::naive".to_string(), 1),
            ("t::fast".to_string(), 1),
            ("t::fast (fresh)".to_string(), REMEASURE_EFFORT),
            ("t::fast (counters)".to_string(), 1),
        ],
        "confirmed in a fresh worker, then counters read after all timing; the unchanged \
         reference reads none"
    );
}

#[test]
fn a_confirmed_slowdown_of_changed_code_stays_a_regression() {
    // Every exact counter equal, kernelgate and launches the same, but the baseline was
    // blessed with other code for `fast`: another trial identity is the code's change.
    let (results, calls) = slower_fast("code-changed", 1000.0, false, Some(&["fast"]));
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert_eq!(fast.status, Status::Failed);
    let note = crate::report::terminal::note(fast);
    assert!(note.starts_with("REGRESSED +5.0%"), "{note}");
    // The cause starts with what changed in the trial, before any counter.
    assert!(
        note.contains(" — changed since the baseline: kernel `fast` (code); instructions"),
        "{note}"
    );
    assert_eq!(
        calls.len(),
        4,
        "confirmed and counted all the same: {calls:?}"
    );
}

#[test]
fn a_baseline_without_code_is_never_the_machines() {
    // A format-2 baseline: whether the code changed cannot be known.
    let (results, _) = slower_fast("no-code", 1000.0, false, None);
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert_eq!(fast.code_change, Some(crate::code::CodeChange::NotRecorded));
}

#[test]
fn strict_time_fails_the_machines_slowdown() {
    let (results, _) = slower_fast("machine-strict", 1000.0, true, Some(&[]));
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::MachineSlower);
    assert_eq!(fast.status, Status::Failed);
    assert_eq!(fast.failure, Some(FailKind::Performance));
    let why = crate::report::terminal::failure(fast);
    assert!(
        why.starts_with("machine-slower (KERNELGATE_STRICT_TIME is set): confirmed slower")
            && why.contains(" per run, +5.0% ["),
        "{why}"
    );
}

#[test]
fn a_moved_exact_counter_keeps_the_regression_and_names_it() {
    let (results, _) = slower_fast("counter-moved", 1020.0, false, Some(&[]));
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::Regressed);
    assert_eq!(fast.status, Status::Failed);
    let m = fast.measurement.as_ref().unwrap();
    assert_eq!(m.counter_changes.len(), 1, "{:?}", m.counter_changes);
    assert_eq!(m.counter_changes[0].counter, Counter::Instructions);
    assert!(m.counter_changes[0].stable);
    let note = crate::report::terminal::note(fast);
    assert!(
        note.starts_with("REGRESSED +5.0%")
            && note
                .ends_with(" — instructions +2.0% (1.00 k → 1.02 k) · same code as the baseline"),
        "{note}"
    );
    let why = crate::report::terminal::failure(fast);
    assert!(
        why.contains("\n  cause: instructions +2.0% (1.00 k → 1.02 k)"),
        "{why}"
    );
}

#[test]
fn the_instruction_gate_fails_growth_beyond_it_without_statistics() {
    let dir = scratch("instruction-gate");
    let suites = vec![suite_with(
        &dir,
        "\n[bench]\nmax_instruction_growth = \"1%\"\n",
    )];
    let config = config(&dir, Mode::Gate);
    let code = code_of(&suites[0], &[]);
    bless_with_counters(&config.baselines, &suites[0], 1000.0, Some(&code));
    let plan = plan(&suites);
    let executor = Scripted::new(
        &plan,
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::naive (counters)", 1, counted(1000.0)),
            ("t::fast (counters)", 1, counted(1020.0)),
        ],
    );
    let executor = Batching(executor, Mutex::new(Vec::new()));
    let results = run_all(&config, &suites, &plan, &executor).results;
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        *executor.1.lock().unwrap(),
        [2],
        "both trials' counters in one request"
    );
    let fast = record(&results, "t::fast");
    assert_eq!(
        fast.verdict.unwrap().verdict,
        Verdict::Unchanged,
        "time did not move"
    );
    assert_eq!(fast.status, Status::Failed);
    assert_eq!(
        fast.breaches,
        vec![Breach::CounterGrowth {
            counter: Counter::Instructions,
            old: 1000.0,
            new: 1020.0,
            allowed: 0.01,
        }]
    );
    let why = crate::report::terminal::failure(fast);
    assert!(
        why.contains(
            "instructions grew +2.0% (1.00 k → 1.02 k), over the suite's allowed growth of 1%"
        ),
        "{why}"
    );
    assert_eq!(record(&results, "t::naive").status, Status::Passed);
}

#[test]
fn a_remeasure_that_settles_on_unchanged_reads_no_counters() {
    let (results, calls) = run_script(
        "remeasure-unchanged",
        Mode::Gate,
        vec![
            ("t::naive", 1, measured(10e-6, 32, 0.01, 1000)),
            ("t::fast", 1, inconclusive()),
            ("t::fast", REMEASURE_EFFORT, measured(10e-6, 64, 0.01, 1000)),
        ],
    );
    assert_eq!(
        calls,
        [
            ("t::naive".to_string(), 1),
            ("t::fast".to_string(), 1),
            ("t::fast".to_string(), REMEASURE_EFFORT),
        ],
        "its time did not move: nothing to explain with counters"
    );
    assert_eq!(
        record(&results, "t::fast").verdict.unwrap().verdict,
        Verdict::Unchanged
    );
}
