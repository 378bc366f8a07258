//! `pool`: a pool of GPU models merged (`kernelgate merge` over files of several devices): the
//! side-by-side view each report of a pool starts with — per trial, every device's median,
//! speedup and state — before each device's own run, decided as its own family.

use super::reading::State;
use super::results::{Results, TrialRecord};

/// One trial across the pool: its record on each device, in the pool's order (`None` where
/// that device's run has no such trial).
pub struct Row<'a> {
    /// The trial's name.
    pub name: &'a str,
    /// Its record on each device.
    pub on: Vec<Option<&'a TrialRecord>>,
}

/// Every trial of the pool, in the order first seen, each with its record on every device.
pub fn rows<'a>(pool: &'a Results) -> Vec<Row<'a>> {
    let trials = pool.pool.iter().flat_map(|r| &r.trials);
    let names = crate::order::first_seen(trials.map(|t| t.name.as_str()));
    let on = |name: &str| {
        let find = |r: &'a Results| r.trials.iter().find(|t| t.name == name);
        pool.pool.iter().map(find).collect()
    };
    names
        .into_iter()
        .map(|name| Row { name, on: on(name) })
        .collect()
}

/// A trial on one device, in a cell: `12.3 µs · 1.10× · unchanged` (its median and speedup
/// where it was timed), or `–` where that device did not run it.
pub fn cell(t: Option<&TrialRecord>) -> String {
    let Some(t) = t else { return "–".into() };
    let timed = t.measurement.as_ref().map(|m| {
        let speedup = m
            .speedup
            .map_or("reference".into(), |s| format!("{:.2}×", s.median));
        format!("{} · {speedup} · ", super::duration(m.time.median))
    });
    format!("{}{}", timed.unwrap_or_default(), State::of(t).word())
}

/// Each device's counts in a line: `NVIDIA H100 80GB HBM3 (…): 1 failed, 2 regressed of 40`.
pub fn headline(run: &Results) -> String {
    let count = |s: &[State]| {
        (run.trials.iter())
            .filter(|t| s.contains(&State::of(t)))
            .count()
    };
    let failed = (run.trials.iter())
        .filter(|t| t.fail_kind().is_some())
        .count();
    format!(
        "{}: {failed} failed, {} regressed, {} inconclusive, {} improved of {} trial(s)",
        run.described_device(),
        count(&[State::Regressed]),
        count(&[State::Inconclusive, State::OnThreshold]),
        count(&[State::Improved]),
        run.trials.len()
    )
}
