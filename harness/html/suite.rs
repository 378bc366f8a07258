//! `suite_section`: one suite of a report — its sweep charts (time, % of peak, speedup
//! against size; one colour per kernel in all of them), every trial in a table, what each
//! compared trial was compared with beside this run (`compared`), and the memory, resources
//! and clocks of every kernel against the baseline or base (`resources`).

use super::axes::Unit;
use super::page::{anchor, badge, esc, num, table};
use super::plots::{self, chart, Point, Series, YAxis};
use super::trial::{kernel_and_case, sizes, sweep_axis, State};
use super::view::View;
use crate::order::{first_seen, grouped};
use crate::report::results::{Status, TrialRecord};
use crate::report::terminal::{headline, record_change as change};
use crate::report::{achieved, duration, rate, PEAKS};

/// The suite's kernels in the order they first appear: a kernel's colour is its place here,
/// in every chart of the suite.
pub(super) fn kernels<'a>(trials: &[&'a TrialRecord]) -> Vec<&'a str> {
    let measured = trials.iter().filter(|t| t.compiled.is_none());
    first_seen(measured.map(|t| kernel_and_case(t).0))
}

/// A chart in a figure that names its series and their colours (`data-series`) and says in
/// words what it shows.
fn figure(svg: String, series: &[Series], caption: &str) -> String {
    let names: Vec<String> = series
        .iter()
        .map(|s| format!("{}:{}", s.name, s.color))
        .collect();
    format!(
        "<figure class=\"chart\" data-series=\"{}\">{svg}<figcaption>{caption}</figcaption></figure>",
        esc(&names.join(" "))
    )
}

/// A percentage with the digits its size needs: `73%`, `1.4%`, `0.04%` (table cells).
fn percent_axis(v: f64) -> String {
    let digits = match v.abs() {
        a if a >= 10.0 || a == 0.0 => 0,
        a if a >= 1.0 => 1,
        _ => 2,
    };
    format!("{v:.digits$}%")
}

/// A measured trial's value and its interval, for a sweep chart.
type Value<'a> = &'a dyn Fn(&TrialRecord) -> Option<(f64, Option<(f64, f64)>)>;

/// A quantity of each measured trial, as one series per kernel against the sweep's size, each
/// in its kernel's colour (its place in `kernels`).
fn sweep(
    trials: &[&TrialRecord],
    kernels: &[&str],
    axis: &str,
    value: impl Fn(&TrialRecord) -> Option<(f64, Option<(f64, f64)>)>,
) -> Vec<Series> {
    let points = trials.iter().filter_map(|t| {
        let (kernel, case) = kernel_and_case(t);
        let x = sizes(case).into_iter().find(|(k, _)| *k == axis)?.1;
        let (y, interval) = value(t)?;
        let color = kernels.iter().position(|k| *k == kernel).unwrap_or(0);
        Some(((kernel, Some(color)), (x, y, interval)))
    });
    series(points)
}

/// Points grouped into a series per name (and colour, where given), in the order the names
/// first come, each sorted by x; a series takes its colour where given, else its place.
fn series<'a>(points: impl IntoIterator<Item = ((&'a str, Option<usize>), Point)>) -> Vec<Series> {
    (grouped(points).into_iter().enumerate())
        .map(|(i, ((name, color), mut points))| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name: name.to_string(),
                points,
                color: color.unwrap_or(i),
                dashed: false,
            }
        })
        .collect()
}

fn sweep_charts(view: &View, suite: &str, trials: &[&TrialRecord]) -> String {
    let Some(axis) = sweep_axis(trials.iter().map(|t| kernel_and_case(t).1)) else {
        return String::new();
    };
    let kernels = kernels(trials);
    let sweep = |value: Value| sweep(trials, &kernels, &axis, value);
    let mut out = String::from(r#"<div class="charts">"#);
    let mut draw = |title: String,
                    desc: &'static str,
                    unit: Unit,
                    log: bool,
                    series: Vec<Series>,
                    caption: String| {
        if series.is_empty() {
            return;
        }
        let y = YAxis { desc, log, unit };
        let svg = chart(plots::lines(&title, &axis, y, &series));
        out.push_str(&figure(svg, &series, &caption));
    };
    let time = sweep(&|t| {
        t.measurement
            .as_ref()
            .map(|m| (m.time.median, Some((m.time.low, m.time.high))))
    });
    let what = match &view.base {
        Some(_) => "the candidate's median time per run",
        None => "median time per run",
    };
    draw(
        format!("{suite}: time against {axis}"),
        "time per run",
        Unit::Seconds,
        true,
        time,
        format!("{what} with its 95% interval, log scales"),
    );
    let device = view.results.device_info.as_ref();
    let shares = [
        ("bandwidth", "% of peak bandwidth", "bytes", "peak"),
        ("FLOP rate", "% of FP32 peak", "flops", "FP32 peak"),
    ];
    // Both charts only where the device's peaks are known (a recorded bandwidth says so).
    if device.is_some_and(|d| d.peak_bandwidth() > 0.0) {
        for (i, (what, desc, work, peak)) in shares.into_iter().enumerate() {
            let share = sweep(&|t| Some((achieved(t.measurement.as_ref()?, device)[i]?.1?, None)));
            let caption = format!("bench.{work} over the median time, against the device's {peak}");
            let title = format!("{suite}: achieved {what}");
            draw(title, desc, Unit::Percent, false, share, caption);
        }
    }
    let speedup = sweep(&|t| {
        let s = t.measurement.as_ref()?.speedup?;
        Some((s.median, Some((s.low, s.high))))
    });
    let (title, desc, caption) = match &view.base {
        Some(base) => (
            format!("{suite}: speedup over {base} (paired)"),
            "speedup over the base",
            format!(
                "each kernel's speedup over its own version at {} (above 1: faster than the base), from the paired per-round ratios, with its 95% interval",
                view.against()
            ),
        ),
        None => (
            format!("{suite}: speedup over the reference"),
            "speedup over the reference",
            "each kernel's speedup over the suite's reference kernel, with its 95% interval"
                .into(),
        ),
    };
    draw(title, desc, Unit::Times, false, speedup, caption);
    out.push_str("</div>\n");
    out
}

/// A trial's note in the trials table: its headline and, for a comparison that failed it
/// (whose headline is the evidence's first line), what moved in its hardware counters — the
/// why beside the regression.
fn note(t: &TrialRecord) -> String {
    let mut text = headline(t);
    let failed_by_gate = t.status == Status::Failed && t.failure_detail.is_none();
    if let (true, Some(_)) = (failed_by_gate, &t.verdict) {
        text.push_str(&crate::report::terminal::cause(t));
    }
    text
}

fn trials_table(view: &View, trials: &[&TrialRecord]) -> String {
    let device = view.results.device_info.as_ref();
    let kernels = kernels(trials);
    let no_speedup = view.base.as_ref().map_or("reference", |_| "–");
    let rows: Vec<Vec<String>> = trials
        .iter()
        .map(|t| {
            let (kernel, case) = kernel_and_case(t);
            let state = State::of(t);
            let mut row = vec![
                format!(
                    r#"<code id="{}">{}</code>"#,
                    anchor("t", &t.name),
                    esc(&t.name)
                ),
                match kernels.iter().position(|k| *k == kernel) {
                    Some(i) => format!(
                        "<span class=\"kernel\">{}{}</span>",
                        plots::styled_swatch(i, false),
                        esc(kernel)
                    ),
                    None => esc(kernel),
                },
                esc(case),
                badge(state.word()),
            ];
            match &t.measurement {
                Some(m) => {
                    row.push(num(format!(
                        "{} [{}, {}]",
                        duration(m.time.median),
                        duration(m.time.low),
                        duration(m.time.high)
                    )));
                    row.push(num(m
                        .speedup
                        .map(|s| format!("{:.2}× [{:.2}, {:.2}]", s.median, s.low, s.high))
                        .unwrap_or_else(|| no_speedup.into())));
                    for (a, (unit, _)) in achieved(m, device).into_iter().zip(PEAKS) {
                        row.push(num(a.map_or("–".into(), |(r, share)| {
                            let share = share.map(|p| format!(" ({})", percent_axis(p)));
                            format!("{}{}", rate(r, unit), share.unwrap_or_default())
                        })));
                    }
                    let roofline = crate::report::recorded_roofline(m, device);
                    row.push(num(roofline.map_or("–".into(), |r| {
                        format!("{:.0}% ({})", 100.0 * r.fraction, r.bound)
                    })));
                }
                None => row.extend((0..5).map(|_| "–".to_string())),
            }
            row.push(num(change(t)));
            row.push(esc(&note(t)));
            row
        })
        .collect();
    let speedup = (view.base.as_ref())
        .map_or("speedup over the reference [95% interval]".into(), |base| {
            format!("speedup over {base} [95% interval]")
        });
    table(
        "trials",
        &[
            "trial",
            "kernel",
            "case",
            "state",
            "median [95% interval]",
            &speedup,
            "bandwidth (% of peak)",
            "FLOP rate (% of FP32 peak)",
            "roofline (its time over the median)",
            "change [95% interval]",
            "note",
        ],
        &rows,
    )
}

/// Whether every trial of a suite but its compile trial was skipped as identical code to the
/// base: nothing of it was timed, so its section says so in a line and folds its table.
fn all_identical(trials: &[&TrialRecord]) -> bool {
    let mut measured = trials.iter().filter(|t| t.compiled.is_none()).peekable();
    measured.peek().is_some()
        && measured.all(|t| State::of(t) == State::IdenticalCode && t.measurement.is_none())
}

/// Which time the suite's trials measured: how L2 was flushed before each sample, as their
/// results record it (nothing for results written before it was recorded).
fn flush_note(trials: &[&TrialRecord]) -> String {
    use crate::suite::Flush;
    let flush = trials.iter().find_map(|t| t.measurement.as_ref()?.l2_flush);
    let how = match flush {
        None => return String::new(),
        Some(Flush::Write) => "after an L2 flush by writing a buffer twice the L2's size (<code>l2_flush = \"write\"</code>): each time includes the write-back of those dirty lines",
        Some(Flush::Clean) => "after an L2 flush left clean (<code>l2_flush = \"clean\"</code>, as Nsight Compute's <code>--cache-control all</code>)",
        Some(Flush::Off) => "with no L2 flush (<code>l2_flush = false</code>): what earlier launches left in L2 stays",
    };
    format!("<p class=\"note\">Each sample timed {how}.</p>\n")
}

/// How a kernel's variants compare (`tile[TILE=16,FULL_UNROLL=0]`, its axes): per kernel and
/// case, the median time against the variants' first axis, one series per combination of the
/// others.
fn variant_charts(suite: &str, trials: &[&TrialRecord]) -> String {
    // Each variant's line and point, under its case's chart: its title and its axis.
    let charts = trials.iter().filter_map(|t| {
        let (kernel, case) = kernel_and_case(t);
        let (m, (base, values)) = (t.measurement.as_ref()?, kernel.split_once('[')?);
        let mut axes = values.trim_end_matches(']').split(',');
        let (axis, x) = axes.next()?.split_once('=')?;
        let x = x.parse::<f64>().ok()?;
        let rest = axes.collect::<Vec<_>>().join(",");
        // One axis: one line, named for the kernel.
        let rest = Some(rest)
            .filter(|r| !r.is_empty())
            .unwrap_or(base.to_string());
        let title = format!("{suite}::{base}::{case}: its variants against {axis}");
        let point = (rest, (x, m.time.median, Some((m.time.low, m.time.high))));
        Some(((title, axis.to_string()), point))
    });
    let mut out = String::new();
    for ((title, axis), points) in grouped(charts) {
        let series = series(points.iter().map(|(n, p)| ((n.as_str(), None), *p)));
        let y = YAxis {
            desc: "time per run",
            log: true,
            unit: Unit::Seconds,
        };
        let svg = chart(plots::lines(&title, &axis, y, &series));
        let caption = format!("median time per run of each variant, with its 95% interval, against {axis}; a line per value of the other axes");
        out.push_str(&figure(svg, &series, &caption));
    }
    match out.is_empty() {
        true => out,
        false => format!("<div class=\"charts\">{out}</div>\n"),
    }
}

/// The section of one suite.
pub fn suite_section(view: &View, suite: &str, trials: &[&TrialRecord]) -> String {
    let id = anchor("suite", suite);
    if all_identical(trials) {
        let n = trials.iter().filter(|t| t.compiled.is_none()).count();
        return format!(
            "<section class=\"suite identical\" id=\"{id}\">\n<h2>suite <code>{}</code></h2>\n<p class=\"note\">{} All {n} trials: identical code to {}, not timed, correctness not run (the base passed it).</p>\n<details><summary>its trials</summary>{}</details></section>\n",
            esc(suite),
            badge(State::IdenticalCode.word()),
            view.against(),
            trials_table(view, trials),
        );
    }
    let paired = match &view.base {
        Some(_) => format!(
            "<p class=\"note\">Paired against {}: changes, speedups and distributions are each kernel against its own version at the base.</p>\n",
            view.against()
        ),
        None => String::new(),
    };
    format!(
        "<section class=\"suite\" id=\"{id}\">\n<h2>suite <code>{}</code></h2>\n{paired}{}{}{}{}{}{}{}</section>\n",
        esc(suite),
        flush_note(trials),
        sweep_charts(view, suite, trials),
        variant_charts(suite, trials),
        trials_table(view, trials),
        super::compared::comparisons(view, trials),
        super::code::code_changes(view, suite),
        super::resources::resources(view, trials),
    )
}
