//! `short`, `explanation`, `matched`: a trial's hardware counters in the words of its line —
//! what was read, which counters moved against the baseline or base (the cause of a code
//! regression), and which exact ones matched (the evidence for `machine-slower`).

use super::results::Measurement;
use crate::measure::counters::{Counter, CounterChange, CounterReport};

/// `inst 590 k · DRAM rd 4.20 MB · occ 0.72`, or `counters not collected: why`; `None` when
/// the run did not read counters for this trial.
pub fn short(m: &Measurement) -> Option<String> {
    match m.counters.as_ref()? {
        CounterReport::NotCollected { why } => Some(format!("counters not collected: {why}")),
        CounterReport::Collected(all) => {
            let c = all.first()?;
            let part = |counter: Counter, name: &str| {
                c.kernel
                    .get(&counter)
                    .map(|v| format!("{name} {}", counter.format(*v)))
            };
            let parts: Vec<String> = [
                part(Counter::Instructions, "inst"),
                part(Counter::DramReadBytes, "DRAM rd"),
                part(Counter::Occupancy, "occ"),
            ]
            .into_iter()
            .flatten()
            .collect();
            Some(parts.join(" · "))
        }
    }
}

/// `declared bytes 25.2 MB, but the counters saw 4.20 MB read from DRAM and 8.39 MB through
/// L2: check [bench] bytes`, where they contradict the suite.
pub fn declared_work(m: &Measurement) -> Option<String> {
    let w = m.declared_work?;
    let b = |v: f64| Counter::DramReadBytes.format(v);
    Some(format!(
        "declared bytes {}, but the counters saw {} read from DRAM and {} through L2: check [bench] bytes",
        b(w.declared),
        b(w.dram_read),
        b(w.through_l2)
    ))
}

/// What moved, for a verdict's line: ` — achieved occupancy 0.98 → 0.49; instructions +0.0%`
/// (at most three changes, the largest first; the instruction count's change, even none, is
/// always said when it was read on both sides). Empty when there is nothing to compare.
pub fn explanation(m: &Measurement) -> String {
    let (Some(old), Some(now)) = (
        &m.baseline_counters,
        m.counters.as_ref().and_then(|c| c.collected()),
    ) else {
        return match &m.counters {
            Some(CounterReport::NotCollected { why }) => {
                format!(" — counters not collected: {why}")
            }
            _ => String::new(),
        };
    };
    // Largest change first, whatever the order stored: a 0.02% move of an exact count is no
    // cause beside occupancy halving (files written before this sorted exact counts first).
    let mut changes: Vec<&CounterChange> = m.counter_changes.iter().collect();
    changes.sort_by(|a, b| CounterChange::larger_first(a, b));
    let mut parts: Vec<String> = changes.iter().take(3).map(|c| c.describe()).collect();
    let said = changes
        .iter()
        .take(3)
        .any(|c| c.counter == Counter::Instructions);
    if let (false, Some(o), Some(n)) = (
        said,
        old.values.get(&Counter::Instructions),
        now.kernel.get(&Counter::Instructions),
    ) {
        let change = if *o > 0.0 { n / o - 1.0 } else { 0.0 };
        parts.push(format!(
            "instructions {}",
            crate::measure::counters::percent_change(change)
        ));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(" — {}", parts.join("; "))
}

/// The exact counters that matched the baseline, for a machine verdict: `instructions, thread
/// instructions, global loads equal`, or empty.
pub fn matched(m: &Measurement) -> String {
    let Some(old) = &m.baseline_counters else {
        return String::new();
    };
    let moved: Vec<Counter> = m.counter_changes.iter().map(|c| c.counter).collect();
    let equal: Vec<&str> = old
        .stable
        .iter()
        .filter(|c| !moved.contains(c))
        .map(|c| c.label())
        .collect();
    if equal.is_empty() {
        return String::new();
    }
    format!("{} equal", equal.join(", "))
}
