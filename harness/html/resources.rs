//! `resources`: the memory, resources and clocks of every measured trial of a suite; where the
//! record holds the footprint it was compared with (the stored baseline's, or the base
//! kernel's in paired mode), a value that changed reads `old → new`, marked.

use super::page::{esc, num, table};
use super::view::View;
use crate::measure::Footprint;
use crate::report::results::TrialRecord;
use crate::report::{bytes, LAUNCH};

/// A cell: the value, or `old → new` marked where the compared footprint's differs.
fn cell(old: Option<String>, new: String) -> String {
    match old {
        Some(o) if o != new => format!("\u{1}<mark>{} → {}</mark>", esc(&o), esc(&new)),
        _ => num(new),
    }
}

/// The table for a suite's trials.
pub fn resources(view: &View, trials: &[&TrialRecord]) -> String {
    let rows: Vec<Vec<String>> = trials
        .iter()
        .filter_map(|t| {
            let m = t.measurement.as_ref()?;
            let f = &m.footprint;
            let old = m.baseline_footprint.as_ref();
            let mut row = vec![format!("<code>{}</code>", esc(&t.name))];
            row.push(cell(old.map(|o| bytes(o.pool_peak)), bytes(f.pool_peak)));
            for (name, value) in LAUNCH {
                // A library call's kernels as CUPTI recorded them: no occupancy (`–`).
                let unknown = |f: &Footprint| f.library.is_some() && name.contains("/ SM");
                let per_launch = |f: &Footprint| match f.launches.is_empty() || unknown(f) {
                    true => "–".to_string(),
                    false => f.launches.iter().map(value).collect::<Vec<_>>().join(" / "),
                };
                row.push(cell(old.map(per_launch), per_launch(f)));
            }
            let clocks = m
                .clocks
                .summary()
                .map(|(lo, mid, hi)| format!("{lo:.0} / {mid:.0} / {hi:.0}"))
                .unwrap_or_else(|| "–".into());
            let celsius = crate::stats::Summary::of(&m.clocks.celsius)
                .map(|s| format!("{:.0}–{:.0}", s.min, s.max))
                .unwrap_or_else(|| "–".into());
            row.extend([
                num(bytes(f.free_drop)),
                num(clocks),
                num(celsius),
                num(format!(
                    "{} of {}",
                    m.clocks.discarded_rounds,
                    m.clocks
                        .discarded_rounds
                        .saturating_add(m.clocks.kept_rounds)
                )),
                esc(&format!("{} ×{}", m.regime, m.batch[0])),
            ]);
            Some(row)
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let against = (view.base.as_ref())
        .map_or(" (baseline → this run where they differ)".into(), |base| {
            format!(" ({} → candidate where they differ)", esc(base))
        });
    let mut header: Vec<&str> = vec!["trial", "peak memory"];
    header.extend(LAUNCH.iter().map(|c| c.0));
    header.extend([
        "free memory drop",
        "SM clock min / median / max, MHz",
        "°C",
        "rounds dropped (throttled)",
        "regime × batch",
    ]);
    format!(
        "<h3>Memory, resources and clocks{against}</h3>\n{}",
        table("resources", &header, &rows)
    )
}
