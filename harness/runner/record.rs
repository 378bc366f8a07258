//! `record`: one typed record per trial — how it ended, its measurements, the gate's note and
//! verdict, limit breaches, and the commands that re-run, profile and re-bless it. Every
//! reporter renders these records and nothing else; nothing here writes prose.

use super::trial::{Judged, State, Trial};
use super::{Outcome, Planned, Runner};
use crate::baseline::Stored;
use crate::code::CodeChange;
use crate::config::Mode;
use crate::failure::FailKind;
use crate::gate::Verdict;
use crate::measure::Footprint;
use crate::report::results::{Breach, GateNote, Measurement, ResourceChange, Status, TrialRecord};
use crate::suite::Suite;

/// Breaches of the kernel's declared limits: memory budget, registers, spills.
pub fn limit_breaches(suite: &Suite, kernel: usize, f: &Footprint) -> Vec<Breach> {
    let limits = &suite.kernels[kernel].limits;
    let mut out = Vec::new();
    if let Some(fp64) = &f.fp64 {
        out.extend(
            crate::mix::fp64_breach(&suite.kernels[kernel].name, limits.forbid_fp64, fp64)
                .map(|message| Breach::Fp64 { message }),
        );
    }
    if let Some(budget) = limits.memory_budget.filter(|b| f.pool_peak > *b) {
        out.push(Breach::MemoryBudget {
            peak: f.pool_peak,
            budget,
        });
    }
    for l in &f.launches {
        if let Some(max) = limits.max_registers.filter(|m| l.registers as u32 > *m) {
            out.push(Breach::Registers {
                entry: l.entry.clone(),
                registers: l.registers,
                max,
            });
        }
        if limits.forbid_spills && l.local_bytes > 0 {
            out.push(Breach::Spills {
                entry: l.entry.clone(),
                local_bytes: l.local_bytes,
            });
        }
    }
    out
}

/// Registers or local memory that changed since the baseline (or the paired base).
pub fn resource_changes(f: &Footprint, old: Option<&Footprint>) -> Vec<ResourceChange> {
    let Some(old) = old else {
        return Vec::new();
    };
    if let (Some(was), Some(now)) = (&old.library, &f.library) {
        // The library's kernels follow from its algorithm: a change of algorithm says it all.
        return (was != now)
            .then(|| ResourceChange {
                entry: "library call".into(),
                registers: [0; 2],
                local_bytes: [0; 2],
                algorithm: Some([was.clone(), now.clone()]),
            })
            .into_iter()
            .collect();
    }
    f.launches
        .iter()
        .zip(&old.launches)
        .filter(|(n, o)| n.registers != o.registers || n.local_bytes != o.local_bytes)
        .map(|(n, o)| ResourceChange {
            entry: n.entry.clone(),
            registers: [o.registers, n.registers],
            local_bytes: [o.local_bytes, n.local_bytes],
            algorithm: None,
        })
        .collect()
}

/// Peak memory growth over the baseline (or the paired base) beyond the suite's
/// `memory_growth`.
pub fn memory_growth(suite: &Suite, f: &Footprint, old: Option<&Footprint>) -> Option<Breach> {
    let old_footprint = old?;
    let allowed = suite.bench.memory_growth;
    ((f.pool_peak as f64) > old_footprint.pool_peak as f64 * (1.0 + allowed)).then(|| {
        Breach::MemoryGrowth {
            old: old_footprint.pool_peak,
            new: f.pool_peak,
            allowed,
            changes: resource_changes(f, old),
        }
    })
}

/// A passed trial's record before anything happened to it: its name, place and commands.
fn blank(run: &Runner, trial: &Planned) -> TrialRecord {
    let suite = &run.suites[trial.suite];
    let line = trial
        .case_kernel()
        .and_then(|(_, k)| suite.kernel_lines.get(k).copied())
        .unwrap_or(1);
    TrialRecord {
        name: trial.name.clone(),
        suite: suite.name.clone(),
        file: suite.path.display().to_string(),
        line,
        commands: Some(super::commands::commands(
            &trial.name,
            suite,
            trial,
            run.config,
            // The base's commit, so a later rerun compares with the same code (a folder: as given).
            run.base.map(|b| match b.commit.as_str() {
                "folder" => b.rev.as_str(),
                commit => commit,
            }),
        )),
        ..TrialRecord::default()
    }
}

/// The record of one trial that ran, or was decided without running (its code identical at
/// the base), with its code, its base's, and what changed since the code it was compared with
/// (the baseline's, or the base's); `None` for a trial that did not run.
pub(super) fn record(run: &Runner, plan: &Planned, trial: &Trial) -> Option<TrialRecord> {
    let mut r = match trial.state {
        State::Planned => return None,
        _ => blank(run, plan),
    };
    let mut judged = None;
    match &trial.state {
        State::Planned => {}
        State::Identical => {
            let base = run.base.expect("identical code is a paired verdict");
            r.gate = Some(GateNote::IdenticalCode {
                rev: base.rev.clone(),
                commit: base.commit.clone(),
                timed: false,
            });
        }
        State::Ended(Outcome::Compiled(c)) => r.compiled = Some(c.clone()),
        State::Ended(Outcome::Ignored(reason)) => {
            r.status = Status::Ignored;
            r.ignored = Some(reason.clone());
        }
        State::Ended(Outcome::Failed(f)) => {
            r.status = Status::Failed;
            r.failure = Some(f.kind());
            r.failure_detail = Some(f.clone());
        }
        State::Ended(Outcome::Measured(_)) => unreachable!("a measured trial is State::Measured"),
        State::Measured(m, j) => {
            judged = j.as_deref();
            measured(run, plan, m, judged, &mut r);
        }
    }
    r.code = trial.code.code.clone();
    r.base_code = trial.code.base.clone();
    if let Some(code) = &trial.code.code {
        r.code_change = match (&r.gate, judged) {
            (Some(GateNote::Compared { .. }), Some(j)) => {
                Some(CodeChange::between(j.old_code.as_ref(), code))
            }
            (Some(GateNote::Paired { .. } | GateNote::IdenticalCode { .. }), _) => (trial.code)
                .base
                .as_ref()
                .map(|b| CodeChange::between(Some(b), code)),
            _ => None,
        };
    }
    Some(r)
}

/// What a measured trial records: its samples and summaries, the footprint, clocks, rates, and
/// the baseline samples it was compared with (when it was).
fn measurement(
    run: &Runner,
    suite: &crate::suite::Suite,
    (case, kernel): (usize, usize),
    m: &super::Measured,
    judged: Option<&Judged>,
) -> Option<Measurement> {
    let samples = &m.samples;
    samples.kernel_summary().map(|time| Measurement {
        regime: samples.regime,
        batch: samples.batch,
        launch_floor: samples.launch_floor,
        time: Stored::from(time),
        time_samples: samples.kernel.clone(),
        speedup: samples.speedup().map(Stored::from),
        speedup_samples: samples.ratios(),
        max_slowdown: suite.bench.max_slowdown,
        precision: Some(suite.bench.precision),
        hit_time_cap: samples.hit_time_cap,
        l2_flush: Some(suite.bench.l2_flush),
        footprint: m.footprint.clone(),
        clocks: samples.clocks.clone(),
        bytes: suite.cases[case].bytes,
        flops: suite.cases[case].flops,
        reference: run.base.map(|base| base.short()).or_else(|| {
            (kernel != suite.reference).then(|| suite.kernels[suite.reference].name.clone())
        }),
        baseline_samples: match judged {
            Some(j) if j.verdict.is_some() => j.baseline_samples.clone(),
            _ => Vec::new(),
        },
        baseline_footprint: judged.and_then(|j| j.baseline_footprint.clone()),
        trial_seconds: Some(m.seconds),
        units: samples.units.clone(),
        counters: m.counters.clone(),
        baseline_counters: baseline_counters(run, m, judged),
        counter_changes: counter_changes(m, baseline_counters(run, m, judged).as_ref()),
        counter_gate: counter_gate_note(run, suite, m, judged),
        flops_type: suite.bench.flops_type,
        roofline: None,
        declared_work: suite.cases[case].bytes.and_then(|declared| {
            let now = m.counters.as_ref()?.collected()?;
            crate::measure::counters::WorkMismatch::check(declared, &now.kernel)
        }),
    })
}

/// The counters a trial is compared with: in paired mode the base kernel's, read on the same
/// allocations (exact where equal across them); else the stored baseline's.
fn baseline_counters(
    run: &Runner,
    m: &super::Measured,
    judged: Option<&Judged>,
) -> Option<crate::baseline::StoredCounters> {
    use crate::measure::counters::CounterValues;
    if run.base.is_none() {
        return judged.and_then(|j| j.baseline_counters.clone());
    }
    let base: Vec<&CounterValues> = m
        .counters
        .as_ref()?
        .allocations()
        .iter()
        .filter_map(|a| a.against.as_ref())
        .collect();
    crate::baseline::StoredCounters::of(base)
}

/// Why a suite's counter gate could not apply to this trial (`not applied: …`), if it has one.
fn counter_gate_note(
    run: &Runner,
    suite: &crate::suite::Suite,
    m: &super::Measured,
    judged: Option<&Judged>,
) -> Option<String> {
    use crate::measure::counters::{Counter, CounterReport};
    if !suite.bench.has_counter_gate() || run.config.mode != Mode::Gate {
        return None;
    }
    match &m.counters {
        None => Some("not applied: counters were not read (KERNELGATE_COUNTERS=0)".into()),
        Some(CounterReport::NotCollected { why }) => Some(format!("not applied: {why}")),
        Some(CounterReport::Collected(_)) => match baseline_counters(run, m, judged) {
            None => Some("not applied: the baseline holds no counters (re-bless)".into()),
            Some(old)
                if suite.bench.max_instruction_growth.is_some()
                    && !old.stable.contains(&Counter::Instructions) =>
            {
                Some(format!(
                    "not applied to instructions: not exact across the baseline's {} unit(s)",
                    old.runs
                ))
            }
            Some(_) => None,
        },
    }
}

/// The suite's counter gates against the baseline's (or base's) counters: instructions only
/// where exact across its units; DRAM reads with at least `DRAM_READ_TOLERANCE`. Under
/// `KERNELGATE_REQUIRE_COUNTERS`, a gate that cannot apply is a breach too.
fn counter_breaches(
    run: &Runner,
    suite: &crate::suite::Suite,
    m: &super::Measured,
    judged: Option<&Judged>,
) -> Vec<Breach> {
    use crate::measure::counters::{Counter, CounterReport, DRAM_READ_TOLERANCE};
    let bench = &suite.bench;
    if !bench.has_counter_gate() {
        return Vec::new();
    }
    let now = match &m.counters {
        Some(CounterReport::NotCollected { why }) if run.config.require_counters => {
            return vec![Breach::CountersUnavailable { why: why.clone() }]
        }
        c => c.as_ref().and_then(CounterReport::collected),
    };
    let (Some(now), Some(old)) = (now, baseline_counters(run, m, judged)) else {
        return Vec::new();
    };
    let gates = [
        (Counter::Instructions, bench.max_instruction_growth, true),
        (
            Counter::DramReadBytes,
            bench
                .max_dram_read_growth
                .map(|g| g.max(DRAM_READ_TOLERANCE)),
            false,
        ),
    ];
    gates
        .into_iter()
        .filter_map(|(counter, allowed, exact)| {
            let allowed = allowed?;
            // Exact counters against their one value; the others against the highest of the
            // baseline's reads (small cases read DRAM differently launch to launch).
            let (o, n) = (old.highest(counter)?, *now.kernel.get(&counter)?);
            if exact && !old.stable.contains(&counter) {
                return None;
            }
            (n > o * (1.0 + allowed)).then_some(Breach::CounterGrowth {
                counter,
                old: o,
                new: n,
                allowed,
            })
        })
        .collect()
}

/// The kernel's counters that changed against `old`, when both were read.
fn counter_changes(
    m: &super::Measured,
    old: Option<&crate::baseline::StoredCounters>,
) -> Vec<crate::measure::counters::CounterChange> {
    let (Some(old), Some(now)) = (old, m.counters.as_ref().and_then(|c| c.collected())) else {
        return Vec::new();
    };
    crate::measure::counters::changes(old, &now.kernel)
}

/// Fills `r` for a trial that was measured: its measurement, resource changes and limit breaches,
/// the gate's verdict and note, and the worst failure among them.
fn measured(
    run: &Runner,
    trial: &Planned,
    m: &super::Measured,
    judged: Option<&Judged>,
    r: &mut TrialRecord,
) {
    let suite = &run.suites[trial.suite];
    let (case, kernel) = trial.case_kernel().expect("kernel trials are measured");
    r.device_ordinal = Some(m.ordinal);
    r.measurement = measurement(run, suite, (case, kernel), m, judged);
    let baseline = judged.and_then(|j| j.baseline_footprint.as_ref());
    r.resource_changes = resource_changes(&m.footprint, baseline);
    r.breaches = limit_breaches(suite, kernel, &m.footprint);
    let gating = run.config.mode == Mode::Gate;
    if gating {
        r.breaches
            .extend(memory_growth(suite, &m.footprint, baseline));
        r.breaches.extend(counter_breaches(run, suite, m, judged));
    }
    let mut kinds: Vec<FailKind> = Vec::new();
    if !r.breaches.is_empty() {
        kinds.push(FailKind::Performance);
    }
    if let Some(j) = judged {
        r.verdict = j.verdict;
        r.evidence = j.evidence.clone();
        r.gate = Some(match &j.gate {
            GateNote::BaselineError { .. } => j.gate.clone(),
            _ if !gating => GateNote::Blessed,
            other => other.clone(),
        });
        if let Some(f) = &j.remeasure_failure {
            kinds.push(f.kind());
            r.failure_detail = Some(f.clone());
        }
        kinds.extend(gate_failure(run, &j.gate, j.verdict.map(|v| v.verdict)));
    }
    if let Some(worst) = kinds.into_iter().max() {
        r.status = Status::Failed;
        r.failure = Some(worst);
    }
}

/// Whether the gate fails a trial, and how: a verdict that fails ([`Verdict::fails`]: a
/// regression; under `KERNELGATE_STRICT` an inconclusive trial, under `KERNELGATE_STRICT_TIME`
/// a machine-slower one), an unusable baseline, or a missing one under
/// `KERNELGATE_REQUIRE_BASELINE`. When blessing, only an unusable baseline fails.
fn gate_failure(run: &Runner, gate: &GateNote, verdict: Option<Verdict>) -> Option<FailKind> {
    match gate {
        GateNote::BaselineError { .. } => Some(FailKind::Infrastructure),
        _ if run.config.mode == Mode::Bless => None,
        GateNote::NoBaseline { .. } | GateNote::OtherRegime { .. }
            if run.config.require_baseline =>
        {
            Some(FailKind::Infrastructure)
        }
        // A shard's verdicts are `merge`'s to decide, over every shard (`gate::settle_again`).
        GateNote::Compared { .. } | GateNote::Paired { .. } if run.config.shard.is_some() => None,
        GateNote::Compared { .. } | GateNote::Paired { .. } => verdict
            .filter(|v| v.fails(run.config.strictness()))
            .map(|_| FailKind::Performance),
        _ => None,
    }
}
