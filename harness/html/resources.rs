//! `resources`: the memory, resources and clocks of every measured trial of a suite; where the
//! record holds the footprint it was compared with (the stored baseline's, or the base
//! kernel's in paired mode), a value that changed reads `old → new`, marked.

use super::page::{esc, num, table};
use super::view::View;
use crate::measure::{Footprint, Resources};
use crate::report::bytes;
use crate::report::results::TrialRecord;

/// One value per launch, `/`-separated.
fn per_launch(f: &Footprint, value: impl Fn(&Resources) -> String) -> String {
    f.launches.iter().map(value).collect::<Vec<_>>().join(" / ")
}

/// A cell: the value, or `old → new` marked where the compared footprint's differs.
fn cell(old: Option<String>, new: String) -> String {
    match old {
        Some(o) if o != new => format!("\u{1}<mark>{} → {}</mark>", esc(&o), esc(&new)),
        _ => num(new),
    }
}

/// A footprint column: its header and its value.
type Column = (&'static str, fn(&Footprint) -> String);

/// The table for a suite's trials.
pub fn resources(view: &View, trials: &[&TrialRecord]) -> String {
    let columns: [Column; 6] = [
        ("peak memory", |f| bytes(f.pool_peak)),
        ("block threads", |f| {
            per_launch(f, |l| l.block_threads.to_string())
        }),
        ("blocks / SM", |f| {
            per_launch(f, |l| l.blocks_per_sm.to_string())
        }),
        ("registers", |f| per_launch(f, |l| l.registers.to_string())),
        ("shared / block", |f| {
            per_launch(f, |l| {
                bytes(l.static_shared.max(0) as u64 + l.dynamic_shared as u64)
            })
        }),
        ("local / thread", |f| {
            per_launch(f, |l| format!("{} B", l.local_bytes))
        }),
    ];
    let rows: Vec<Vec<String>> = trials
        .iter()
        .filter_map(|t| {
            let m = t.measurement.as_ref()?;
            let f = &m.footprint;
            let old = m.baseline_footprint.as_ref();
            let mut row = vec![format!("<code>{}</code>", esc(&t.name))];
            for (_, value) in &columns {
                row.push(cell(old.map(value), value(f)));
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
    let against = match &view.base {
        Some(base) => format!(" ({} → candidate where they differ)", esc(base)),
        None => " (baseline → this run where they differ)".into(),
    };
    let mut header: Vec<&str> = vec!["trial"];
    header.extend(columns.iter().map(|c| c.0));
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
