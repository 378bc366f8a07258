//! Hardware counters through the runner: a confirmed slowdown of the baseline's own trial with
//! every exact counter equal is the machine's (`machine-slower`, failing only under
//! `KERNELGATE_STRICT_TIME`); a moved exact counter keeps the regression and is named; the
//! instruction gate fails growth without statistics; counters are read after all timing.

use super::*;
use crate::measure::counters::{Counter, CounterReport, TrialCounters};

/// Counters with `instructions` executed (exact) and a DRAM write count that wanders.
fn values(instructions: f64, written: f64) -> crate::measure::counters::CounterValues {
    [
        (Counter::Instructions, instructions),
        (Counter::DramWriteBytes, written),
    ]
    .into_iter()
    .collect()
}

/// The stored baselines of `t`, every entry with two counter reads of `instructions`.
fn bless_with_counters(dir: &Path, instructions: f64) {
    bless_baselines(dir);
    let fingerprint = crate::baseline::Fingerprint::of(&device());
    let path = baseline::path(dir, &fingerprint, "t");
    let mut file = baseline::load(&path).unwrap().unwrap();
    for e in file.trials.values_mut() {
        e.counters = vec![values(instructions, 10.0), values(instructions, 30.0)];
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
/// instructions; `fast` is measured 5% slower, confirmed so, and reads `instructions`.
fn slower_fast(name: &str, instructions: f64, strict_time: bool) -> (Results, Vec<(String, u32)>) {
    let dir = scratch(name);
    let suites = vec![suite(&dir)];
    let mut config = config(&dir, Mode::Gate);
    config.strict_time = strict_time;
    bless_with_counters(&config.baselines, 1000.0);
    let plan = plan(&suites);
    let executor = Scripted::new(
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
    );
    let runner = Runner {
        config: &config,
        suites: &suites,
        executor: &executor,
        progress: false,
        base: None,
    };
    let selected: Vec<usize> = (0..plan.len()).collect();
    let report = runner.run(&plan, &selected);
    let calls = executor.calls();
    let _ = std::fs::remove_dir_all(&dir);
    (report.results, calls)
}

use crate::report::results::Results;

#[test]
fn a_confirmed_slowdown_with_equal_exact_counters_is_the_machines() {
    let (results, calls) = slower_fast("machine-slower", 1000.0, false);
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
fn strict_time_fails_the_machines_slowdown() {
    let (results, _) = slower_fast("machine-strict", 1000.0, true);
    let fast = record(&results, "t::fast");
    assert_eq!(fast.verdict.unwrap().verdict, Verdict::MachineSlower);
    assert_eq!(fast.status, Status::Failed);
    assert_eq!(fast.failure, Some(FailKind::Performance));
}

#[test]
fn a_moved_exact_counter_keeps_the_regression_and_names_it() {
    let (results, _) = slower_fast("counter-moved", 1020.0, false);
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
            && note.ends_with(" — instructions +2.0% (1.00 k → 1.02 k)"),
        "{note}"
    );
    let why = crate::report::terminal::failure(fast);
    assert!(
        why.contains("\n  counters: instructions +2.0% (1.00 k → 1.02 k)"),
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
    bless_with_counters(&config.baselines, 1000.0);
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
    let runner = Runner {
        config: &config,
        suites: &suites,
        executor: &executor,
        progress: false,
        base: None,
    };
    let selected: Vec<usize> = (0..plan.len()).collect();
    let results = runner.run(&plan, &selected).results;
    let _ = std::fs::remove_dir_all(&dir);
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
