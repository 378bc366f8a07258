//! `comparisons`: for each compared trial, what it was compared with beside this run — both
//! sample distributions as strips with the gate's threshold, and the evidence table: time and
//! launch shape, registers, shared and local memory, blocks per SM and peak memory, the
//! baseline's (or the base's) against this run's, the rows that differ marked, so a launch
//! shape that changed stands next to the regression it caused.

use super::page::{anchor, badge, esc};
use super::plots::chart;
use super::strips::{self, Sides};
use super::trial::State;
use super::view::View;
use crate::code::CodeChange;
use crate::measure::Footprint;
use crate::report::results::{GateNote, TrialRecord};
use crate::report::terminal::record_change as change;
use crate::report::{bytes, duration, LAUNCH};

/// One row of the evidence table: what, the side it was compared with, this run.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// What the row shows.
    pub what: String,
    /// The baseline's or the base's value (`–` where not recorded).
    pub old: String,
    /// This run's.
    pub new: String,
    /// A hardware counter's row: whether the run found it moved against the other side's
    /// reads (`measurement.counter_changes`: an exact counter on any change, another beyond
    /// the range of its reads). `None` for the other rows, which differ where their text does.
    pub moved: Option<bool>,
}

impl Evidence {
    /// A row that differs where its two values' text does.
    pub fn new(what: String, old: String, new: String) -> Evidence {
        Evidence {
            what,
            old,
            new,
            moved: None,
        }
    }

    /// Whether the two sides differ: a counter's values that moved (not the launch-to-launch
    /// noise of DRAM, L2 and occupancy reads), another row's values that are not equal.
    pub fn differs(&self) -> bool {
        self.moved
            .unwrap_or(self.old != "–" && self.old != self.new)
    }
}

/// The footprint's values per launch, by row: `(what, value)`.
fn footprint_rows(f: &Footprint) -> Vec<(String, String)> {
    let several = f.launches.len() > 1;
    let mut out: Vec<(String, String)> = f
        .launches
        .iter()
        .flat_map(|l| {
            let of = if several {
                format!(" `{}`", l.entry)
            } else {
                String::new()
            };
            LAUNCH
                .iter()
                .map(move |(what, value)| (format!("{what}{of}"), value(l)))
        })
        .collect();
    out.push(("peak memory".into(), bytes(f.pool_peak)));
    out
}

/// The evidence rows of a compared trial: its median time on both sides, then its launches'
/// resources and peak memory (where the results file recorded the other side's footprint).
///
/// With the record's code, a row of the trial identities (the figure links the SASS diffs
/// below it, `code::code_line`); issue 18 adds one row per hardware counter, both sides.
pub fn evidence(t: &TrialRecord) -> Vec<Evidence> {
    let Some(m) = &t.measurement else {
        return Vec::new();
    };
    let old_time = crate::stats::Summary::of(&m.baseline_samples)
        .map(|s| s.median)
        .or(match &t.gate {
            Some(GateNote::Compared { baseline, .. }) => Some(baseline.median),
            _ => None,
        });
    let mut out = vec![Evidence::new(
        "median time per run".into(),
        old_time.map(duration).unwrap_or_else(|| "–".into()),
        duration(m.time.median),
    )];
    if let Some(code) = &t.code {
        // The other side's identity: the base's, or (stored) whether the baseline's matched.
        let old = match (&t.base_code, &t.code_change) {
            (Some(b), _) => b.short().to_string(),
            (None, Some(c)) if c.is_same() => code.short().to_string(),
            (None, Some(CodeChange::Changed { .. })) => "another".into(),
            _ => "–".into(),
        };
        out.push(Evidence::new(
            "trial identity (code, launches, inputs, settings)".into(),
            old,
            code.short().to_string(),
        ));
    }
    let new = footprint_rows(&m.footprint);
    let old = m.baseline_footprint.as_ref().map(footprint_rows);
    for (what, value) in new {
        let before = old
            .as_ref()
            .and_then(|o| o.iter().find(|(w, _)| *w == what))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "–".into());
        out.push(Evidence::new(what, before, value));
    }
    out.extend(counter_rows(m));
    out
}

/// One row per hardware counter read on this side (`measurement.counters`), against the
/// baseline's or base's; an exact counter (equal in every read of the other side) is said so.
/// A row is marked only where the run found the counter moved (`measurement.counter_changes`),
/// with the values it compared — in full where three digits would read alike (`227 k → 227 k`
/// is `226640 → 226589`); DRAM, L2 and occupancy reads that differ within their noise are not.
fn counter_rows(m: &crate::report::results::Measurement) -> Vec<Evidence> {
    use crate::measure::counters::Counter;
    let Some(now) = m.counters.as_ref().and_then(|c| c.collected()) else {
        return Vec::new();
    };
    let old = m.baseline_counters.as_ref();
    Counter::ALL
        .iter()
        .filter_map(|c| {
            let what = match old.is_some_and(|o| o.stable.contains(c)) {
                true => format!("{} (exact)", c.label()),
                false => c.label().to_string(),
            };
            if let Some(change) = m.counter_changes.iter().find(|x| x.counter == *c) {
                let (mut o, mut n) = (c.format(change.old), c.format(change.new));
                if o == n {
                    (o, n) = (format!("{:.0}", change.old), format!("{:.0}", change.new));
                }
                return Some(Evidence {
                    what,
                    old: o,
                    new: n,
                    moved: Some(true),
                });
            }
            let before = old.and_then(|o| o.values.get(c));
            Some(Evidence {
                what,
                old: before.map(|v| c.format(*v)).unwrap_or_else(|| "–".into()),
                new: c.format(*now.kernel.get(c)?),
                moved: before.map(|_| false),
            })
        })
        .collect()
}

/// The evidence table, the rows that differ first and marked.
fn evidence_table(sides: &Sides, rows: &[Evidence]) -> String {
    let mut sorted: Vec<&Evidence> = rows.iter().collect();
    // The time first, then what changed, then the rest.
    sorted[1..].sort_by_key(|e| !e.differs());
    let mut out = format!(
        "<div class=\"table-wrap\"><table class=\"evidence\"><thead><tr><th></th><th>{}</th><th>{}</th></tr></thead><tbody>",
        esc(sides.old),
        esc(sides.new)
    );
    for e in sorted {
        out.push_str(&format!(
            "<tr{}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            if e.differs() {
                " class=\"differs\""
            } else {
                ""
            },
            esc(&e.what),
            esc(&e.old),
            esc(&e.new)
        ));
    }
    out.push_str("</tbody></table></div>");
    out
}

/// The distributions and evidence of every compared trial of a suite.
pub fn comparisons(view: &View, trials: &[&TrialRecord]) -> String {
    let sides = view.sides();
    let mut out = String::new();
    for t in trials {
        let (Some(m), Some(v)) = (&t.measurement, &t.verdict) else {
            continue;
        };
        // Against a baseline pooled from several runs, the gate's threshold is widened by
        // their spread (`gate::with_spread`).
        let (limit, why) = match &t.gate {
            Some(GateNote::Compared { baseline, .. }) if baseline.spread > 1.0 => (
                crate::gate::with_spread(m.max_slowdown, baseline.spread),
                "max_slowdown × the spread between the baseline's runs",
            ),
            _ => (m.max_slowdown, "max_slowdown"),
        };
        // The median compared with: the samples', or where the file lacks them, the change's.
        let old = crate::stats::Summary::of(&m.baseline_samples)
            .map_or(m.time.median / v.time.slowdown, |s| s.median);
        let title = (view.base.as_ref())
            .map_or(t.name.clone(), |base| format!("{} against {base}", t.name));
        let svg = chart(strips::strips(
            &sides,
            &title,
            &m.baseline_samples,
            &m.time_samples,
            old * (1.0 + limit),
        ));
        let missing = if m.baseline_samples.is_empty() {
            " The samples it was compared with are not in this results file; the threshold is drawn from the change."
        } else {
            ""
        };
        out.push_str(&format!(
            r#"<figure class="compared" id="{}">{svg}<figcaption>{} {}: change {} against {} (95% interval), threshold +{:.1}% ({why}).{missing}</figcaption>{}{}</figure>"#,
            anchor("cmp", &t.name),
            badge(State::of(t).word()),
            esc(&t.name),
            change(t),
            view.against(),
            100.0 * limit,
            evidence_table(&sides, &evidence(t)),
            super::code::code_line(view, t),
        ));
        out.push('\n');
    }
    if out.is_empty() {
        return String::new();
    }
    let heading = (view.base.as_ref()).map_or("Baseline against this run".into(), |base| {
        format!("{} against the candidate", esc(base))
    });
    format!("<h3>{heading}</h3>\n<div class=\"charts\">{out}</div>\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Resources;

    #[test]
    fn a_halved_launch_shape_is_marked() {
        let launch = |block_threads, blocks_per_sm| Resources {
            entry: "saxpy_vec4".into(),
            registers: 16,
            static_shared: 0,
            dynamic_shared: 0,
            local_bytes: 0,
            max_threads: 1024,
            block_threads,
            blocks_per_sm,
        };
        let footprint = |l| Footprint {
            pool_peak: 1 << 20,
            free_drop: 0,
            local_reservation: 0,
            fp64: None,
            library: None,
            launches: vec![l],
        };
        let old = footprint_rows(&footprint(launch(256, 8)));
        let new = footprint_rows(&footprint(launch(32, 32)));
        let rows: Vec<Evidence> = old
            .into_iter()
            .zip(new)
            .map(|((what, old), (_, new))| Evidence::new(what, old, new))
            .collect();
        let differing: Vec<&str> = rows
            .iter()
            .filter(|e| e.differs())
            .map(|e| e.what.as_str())
            .collect();
        assert_eq!(differing, ["block threads", "blocks / SM", "threads / SM"]);
        let html = evidence_table(
            &Sides {
                old: "base c7b4c3e",
                new: "candidate",
            },
            &rows,
        );
        assert!(html.contains(r#"<tr class="differs"><td>block threads</td><td class="num">256</td><td class="num">32</td></tr>"#), "{html}");
    }
}
