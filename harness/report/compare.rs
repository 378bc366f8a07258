//! `compare`: the gate between two results files (`kernelgate compare OLD.json NEW.json`),
//! with the same statistics as a run against stored baselines, printed as a table.

use super::duration;
use super::results::{Results, TrialRecord};
use crate::gate::{self, GateInput};

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Trial name.
    pub name: String,
    /// Median time in OLD, seconds.
    pub old: Option<f64>,
    /// Median time in NEW, seconds.
    pub new: Option<f64>,
    /// The gate's verdict, when both were measured the same way.
    pub verdict: Option<gate::TrialVerdict>,
    /// Why there is no verdict.
    pub note: String,
}

fn median(r: Option<&TrialRecord>) -> Option<f64> {
    r.and_then(|r| r.measurement.as_ref())
        .map(|m| m.time.median)
}

/// Compares every trial of `new` with the same trial in `old`.
pub fn compare(old: &Results, new: &Results) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut inputs = Vec::new();
    let mut compared_rows = Vec::new();
    for n in &new.trials {
        let o = old.trials.iter().find(|o| o.name == n.name);
        let mut row = Row {
            name: n.name.clone(),
            old: median(o),
            new: median(Some(n)),
            verdict: None,
            note: String::new(),
        };
        match (
            o.and_then(|o| o.measurement.as_ref()),
            n.measurement.as_ref(),
        ) {
            (_, None) => row.note = format!("not measured in NEW ({:?})", n.status).to_lowercase(),
            (None, _) if o.is_none() => row.note = "only in NEW".into(),
            (None, _) => row.note = "not measured in OLD".into(),
            (Some(om), Some(nm)) if om.regime != nm.regime => {
                row.note = format!("regimes differ ({} vs {})", om.regime, nm.regime)
            }
            (Some(om), Some(nm)) => {
                let speedups = (!om.speedup_samples.is_empty() && !nm.speedup_samples.is_empty())
                    .then(|| (om.speedup_samples.clone(), nm.speedup_samples.clone()));
                inputs.push(GateInput {
                    old_times: om.time_samples.clone(),
                    new_times: nm.time_samples.clone(),
                    speedups,
                    max_slowdown: nm.max_slowdown,
                    paired: None,
                });
                compared_rows.push(rows.len());
            }
        }
        rows.push(row);
    }
    for (k, v) in compared_rows.into_iter().zip(gate::decide(&inputs)) {
        rows[k].verdict = Some(v);
    }
    rows
}

/// The table, one row per trial of NEW, widths fitted to the content.
pub fn table(rows: &[Row]) -> String {
    let head = [
        "trial",
        "old",
        "new",
        "change [95% interval]",
        "p (BH)",
        "verdict",
    ];
    let body: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let time = |t: Option<f64>| t.map(duration).unwrap_or_else(|| "-".into());
            match &r.verdict {
                Some(v) => [
                    r.name.clone(),
                    time(r.old),
                    time(r.new),
                    crate::report::terminal::change(&v.time),
                    format!("{:.2e}", v.time.p_adjusted),
                    v.verdict.to_string(),
                ],
                None => [
                    r.name.clone(),
                    time(r.old),
                    time(r.new),
                    "-".into(),
                    "-".into(),
                    r.note.clone(),
                ],
            }
        })
        .collect();
    let mut widths = head.map(|h| h.chars().count());
    for row in &body {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(&head.map(String::from));
    for row in &body {
        line(row);
    }
    out
}
