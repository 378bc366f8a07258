//! `page`: the trend page of a history — per suite and device, each trial's median relative to
//! its first run against commit, one line per trial and regime (a trial's second regime dashed,
//! each regime's line broken where the other ran, a regime switch drawn as a dashed vertical
//! line, never joined), change points ringed, failures crossed; then each trial's
//! figures and the runs, in the order the history is read (commit order where known).
//! Self-contained like the report (inline SVG and CSS).

use super::drift::{RegimeSwitch, Trend};
use super::order::Ordered;
use super::store::Run;
use crate::gate::percent;
use crate::html::axes::Unit;
use crate::html::page::{anchor, esc, num, table};
use crate::html::plots::{self, Marks, Series, YAxis};
use crate::order::first_seen;

/// A run on an axis or in a table: its short commit, or its date when the commit is unknown.
fn label(r: &Run) -> String {
    r.short(7).chars().take(10).collect()
}

/// A trial's colour on its suite's chart: its place among the suite's trials (its regimes
/// share it).
fn color(members: &[&Trend], t: &Trend) -> usize {
    let names = first_seen(members.iter().map(|m| m.name.as_str()));
    names.iter().position(|n| *n == t.name).unwrap_or(0)
}

/// Whether `t` is drawn dashed: its trial has another regime on the chart listed before it
/// (so the two regimes of one trial, in one colour, read apart).
fn dashed(members: &[&Trend], t: &Trend) -> bool {
    members
        .iter()
        .take_while(|m| !std::ptr::eq(**m, t))
        .any(|m| m.name == t.name)
}

/// `t`'s timed runs split wherever its trial was timed in another regime between two of them:
/// each part is a line of its own, so a regime's line never runs across the other regime's
/// runs (a switch is not a trend).
fn parts<'a>(members: &[&Trend], t: &'a Trend) -> Vec<&'a [super::drift::TrendPoint]> {
    let other: Vec<usize> = members
        .iter()
        .filter(|m| m.name == t.name && !std::ptr::eq(**m, t))
        .flat_map(|m| m.points.iter().map(|p| p.run))
        .collect();
    (t.points)
        .chunk_by(|a, b| !other.iter().any(|&r| a.run < r && r < b.run))
        .collect()
}

/// The chart of one suite on one device: its trends relative to their first run, in one
/// colour per trial (a trial's regimes share it; its second regime dashed, each regime's
/// line broken where the other ran).
fn chart(
    suite: &str,
    device: &str,
    labels: &[String],
    members: &[&Trend],
    switches: &[&RegimeSwitch],
) -> String {
    let mut series: Vec<Series> = Vec::new();
    let mut marks = Marks {
        switches: switches.iter().map(|s| s.runs.1).collect(),
        ..Marks::default()
    };
    for t in members.iter().filter(|t| !t.points.is_empty()) {
        let base = t.points[0].median;
        let short = t
            .label()
            .strip_prefix(suite)
            .and_then(|n| n.strip_prefix("::"))
            .map(str::to_string)
            .unwrap_or_else(|| t.label());
        let first = series.len();
        for part in parts(members, t) {
            let i = series.len();
            let runs = |r: usize| part.iter().any(|p| p.run == r);
            marks.change_points.extend(
                t.change_points
                    .iter()
                    .map(|c| t.points[c.index].run)
                    .filter(|&r| runs(r))
                    .map(|r| (i, r)),
            );
            marks
                .failures
                .extend(part.iter().filter(|p| p.stored.failed).map(|p| (i, p.run)));
            series.push(Series {
                name: short.clone(),
                points: part
                    .iter()
                    .map(|p| (p.run as f64, 100.0 * (p.median / base - 1.0), None))
                    .collect(),
                color: color(members, t),
                dashed: dashed(members, t),
            });
        }
        // A failure that left no time is drawn on the floor, with the trend's first part.
        marks
            .failures
            .extend(t.failures.iter().map(|&r| (first, r)));
    }
    let y = YAxis {
        desc: "median vs its first run",
        log: false,
        unit: Unit::SignedPercent,
    };
    let svg = plots::trend(&format!("{suite} on {device}"), labels, &series, &marks, y)
        .map(|svg| svg + &plots::legend(&series));
    plots::chart(svg)
}

/// The page.
pub fn page(runs: &[Run], trends: &[Trend], switches: &[RegimeSwitch], ordered: Ordered) -> String {
    let labels: Vec<String> = runs.iter().map(label).collect();
    let suites = first_seen(trends.iter().map(|t| (t.suite.as_str(), t.device.as_str())));
    let first = runs.first().map(label).unwrap_or_default();
    let last = runs.last().map(label).unwrap_or_default();
    let times = || runs.iter().map(|r| r.info.when());
    let (earliest, latest) = (times().min().unwrap_or(""), times().max().unwrap_or(""));
    let mut body = format!(
        "<h1>kernelgate history</h1>\n<p class=\"meta\">{} runs, of <code>{}</code> to <code>{}</code>, run from {} to {} · {} trends · change points by E-divisive means (permutation test, p ≤ 0.01)</p>\n<p class=\"mode\" id=\"order\">Runs in the order their code was written: {} by commit along this repository's first-parent history, {} by start time (commit not on it). A run of an old commit imported late takes its commit's place. Graph and cold timings are separate trends: a regime switch is drawn as a dashed line, not compared, never drift.</p>\n",
        runs.len(),
        esc(&first),
        esc(&last),
        esc(earliest),
        esc(latest),
        trends.len(),
        ordered.by_commit,
        ordered.by_time,
    );
    for (suite, device) in suites {
        let members: Vec<&Trend> = trends
            .iter()
            .filter(|t| t.suite == suite && t.device == device)
            .collect();
        let runs_of_suite: std::collections::BTreeSet<usize> = (members.iter())
            .flat_map(|t| {
                t.points
                    .iter()
                    .map(|p| p.run)
                    .chain(t.failures.iter().copied())
            })
            .collect();
        // The regime switches of its trials on this device.
        let switched: Vec<&RegimeSwitch> = (switches.iter())
            .filter(|s| s.device == device && members.iter().any(|t| t.name == s.name))
            .collect();
        let figure = if runs_of_suite.len() < 2 {
            "<p class=\"note one-run\">One run so far: a trend needs two.</p>".to_string()
        } else {
            format!(
                "<div class=\"trend\">{}</div>",
                chart(suite, device, &labels, &members, &switched)
            )
        };
        let rows: Vec<Vec<String>> = members
            .iter()
            .map(|t| trend_row(t, runs, &labels, &members))
            .collect();
        let switched: Vec<String> = (switched.iter())
            .map(|s| {
                format!(
                    "<li><code>{}</code>: {} → {} between {} and {} (two trends, not compared)</li>",
                    esc(&s.name),
                    esc(&s.regimes.0),
                    esc(&s.regimes.1),
                    esc(&labels[s.runs.0]),
                    esc(&labels[s.runs.1])
                )
            })
            .collect();
        let switched = if switched.is_empty() {
            String::new()
        } else {
            format!(
                "<h3>Regime switches</h3><ul class=\"switches\">{}</ul>",
                switched.join("")
            )
        };
        body.push_str(&format!(
            "<section id=\"{}\">\n<h2>suite <code>{}</code> <span class=\"note\">{}</span></h2>\n{figure}\n{}{switched}</section>\n",
            anchor("suite", suite),
            esc(suite),
            esc(device),
            table("trends", &["trial [regime]", "runs", "first", "last", "change", "max_slowdown", "level shifts", "failed"], &rows)
        ));
    }
    body.push_str(&runs_table(runs, trends));
    crate::html::page::page("kernelgate history", &body)
}

/// A trend's row: its colour and name, runs, first and last median, level shifts, failures.
fn trend_row(t: &Trend, runs: &[Run], labels: &[String], members: &[&Trend]) -> Vec<String> {
    let (color, dashed) = (color(members, t), dashed(members, t));
    let shifts: Vec<String> = t
        .change_points
        .iter()
        .map(|c| {
            let (x, y) = t.shift_runs(c);
            format!(
                "{} between {} and {} (p = {:.3})",
                percent(t.shift(c)),
                esc(&labels[x]),
                esc(&labels[y]),
                c.p
            )
        })
        .collect();
    let failed = t.failed_runs();
    let all = t.points.len() + t.failures.len();
    let failed: Vec<String> = if failed.len() == all && all > 2 {
        vec![format!("all {all} runs")]
    } else {
        failed
            .iter()
            .map(|&r| format!("<code>{}</code>", esc(&label(&runs[r]))))
            .collect()
    };
    let [first, last, change] = super::drift::span(&t.points, "–");
    vec![
        format!(
            r#"{}<code id="{}">{}</code>"#,
            plots::styled_swatch(color, dashed),
            anchor("h", &t.label()),
            esc(&t.label())
        ),
        num(all.to_string()),
        num(first),
        num(last),
        num(change),
        num(format!("{:.1}%", 100.0 * t.max_slowdown)),
        crate::suggest::joined_or_none(&shifts, "<br>"),
        if failed.is_empty() {
            "–".into()
        } else {
            format!("<span class=\"failed-runs\">{}</span>", failed.join(" "))
        },
    ]
}

/// The runs, in the order the page reads them, with how many trials failed in each.
fn runs_table(runs: &[Run], trends: &[Trend]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let failed = (trends.iter())
                .filter(|t| t.failed_runs().contains(&i))
                .count();
            vec![
                format!(
                    "<code>{}</code>",
                    esc(&r.info.commit.chars().take(12).collect::<String>())
                ),
                esc(r.info.when()),
                esc(&r.info.branch),
                if r.info.dirty { "dirty" } else { "" }.into(),
                esc(&r.info.mode),
                num(failed.to_string()),
                esc(r.gpu_uuid.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    let header = [
        "commit",
        "started",
        "branch",
        "dirty",
        "mode",
        "failed trials",
        "GPU",
    ];
    format!(
        "<section id=\"runs\"><h2>Runs</h2>\n{}</section>\n",
        table("runs", &header, &rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::drift::TrendPoint;

    fn trend(regime: &str, runs: &[usize]) -> Trend {
        Trend {
            name: "saxpy::vec4::n=16777216".into(),
            suite: "saxpy".into(),
            device: "H200".into(),
            regime: Some(regime.into()),
            points: runs
                .iter()
                .map(|&run| TrendPoint {
                    run,
                    median: 50e-6,
                    ..Default::default()
                })
                .collect(),
            failures: Vec::new(),
            max_slowdown: 0.03,
            change_points: Vec::new(),
        }
    }

    /// The real history's `saxpy::vec4::n=16777216`: graph in runs 0, 1, 3-5, 9; cold in 2
    /// and 6-8. Each regime's line stops where the other ran; the second listed is dashed.
    #[test]
    fn a_regime_line_is_broken_where_the_other_ran_and_the_second_is_dashed() {
        let (graph, cold) = (
            trend("graph", &[0, 1, 3, 4, 5, 9]),
            trend("cold", &[2, 6, 7, 8]),
        );
        let members = [&graph, &cold];
        let runs = |t: &Trend| -> Vec<Vec<usize>> {
            parts(&members, t)
                .iter()
                .map(|p| p.iter().map(|x| x.run).collect())
                .collect()
        };
        assert_eq!(runs(&graph), [vec![0, 1], vec![3, 4, 5], vec![9]]);
        assert_eq!(runs(&cold), [vec![2], vec![6, 7, 8]]);
        assert!(!dashed(&members, &graph) && dashed(&members, &cold));
        assert_eq!(color(&members, &graph), color(&members, &cold));
        // A trial in one regime is one line.
        let alone = trend("graph", &[0, 2, 5]);
        assert_eq!(parts(&[&alone], &alone).len(), 1);
    }
}
