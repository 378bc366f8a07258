//! `suite_section`: one suite of a report — its sweep charts (time, % of peak, speedup
//! against size), every trial in a table, each compared trial's two distributions, and the
//! memory, resources and clocks of every kernel.

use super::page::{anchor, badge, esc, num, table};
use super::plots::{self, Series, YAxis};
use super::trial::{kernel_and_case, sizes, sweep_axis, State};
use crate::device::DeviceInfo;
use crate::report::results::TrialRecord;
use crate::report::terminal::record_change as change;
use crate::report::{bytes, duration, rate};

fn chart(r: Result<String, plots::PlotError>) -> String {
    r.unwrap_or_else(|e| format!(r#"<p class="note">{}</p>"#, esc(&e.to_string())))
}

/// A percentage with the digits its size needs: `73%`, `1.4%`, `0.04%`.
fn percent_axis(v: f64) -> String {
    let digits = if v.abs() >= 10.0 || v == 0.0 {
        0
    } else if v.abs() >= 1.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}%")
}

fn speedup_axis(v: f64) -> String {
    format!("{v:.2}×")
}

/// A quantity of each measured trial, as one series per kernel against the sweep's size.
fn sweep(
    trials: &[&TrialRecord],
    axis: &str,
    value: impl Fn(&TrialRecord) -> Option<(f64, Option<(f64, f64)>)>,
) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for t in trials {
        let (kernel, case) = kernel_and_case(t);
        let Some(x) = sizes(case)
            .into_iter()
            .find(|(k, _)| *k == axis)
            .map(|(_, v)| v)
        else {
            continue;
        };
        let Some((y, interval)) = value(t) else {
            continue;
        };
        match out.iter_mut().find(|s| s.name == kernel) {
            Some(s) => s.points.push((x, y, interval)),
            None => out.push(Series {
                name: kernel.to_string(),
                points: vec![(x, y, interval)],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn sweep_charts(suite: &str, trials: &[&TrialRecord], device: Option<&DeviceInfo>) -> String {
    let Some(axis) = sweep_axis(trials.iter().map(|t| kernel_and_case(t).1)) else {
        return String::new();
    };
    let mut out = String::from(r#"<div class="charts">"#);
    let time = sweep(trials, &axis, |t| {
        t.measurement
            .as_ref()
            .map(|m| (m.time.median, Some((m.time.low, m.time.high))))
    });
    let y = YAxis {
        desc: "time per run",
        log: true,
        format: duration,
    };
    out.push_str(&chart(plots::lines(
        &format!("{suite}: time against {axis}"),
        &axis,
        y,
        &time,
    )));
    let peaks = device.map(|d| (d.peak_bandwidth(), d.peak_fp32_flops()));
    if let Some((peak_bw, peak_flops)) = peaks.filter(|p| p.0 > 0.0) {
        let bw = sweep(trials, &axis, |t| {
            let m = t.measurement.as_ref()?;
            Some((100.0 * m.bytes? / m.time.median / peak_bw, None))
        });
        let y = YAxis {
            desc: "% of peak bandwidth",
            log: false,
            format: percent_axis,
        };
        if !bw.is_empty() {
            out.push_str(&chart(plots::lines(
                &format!("{suite}: achieved bandwidth"),
                &axis,
                y,
                &bw,
            )));
        }
        let fl = sweep(trials, &axis, |t| {
            let m = t.measurement.as_ref()?;
            Some((100.0 * m.flops? / m.time.median / peak_flops, None))
        });
        let y = YAxis {
            desc: "% of FP32 peak",
            log: false,
            format: percent_axis,
        };
        if !fl.is_empty() {
            out.push_str(&chart(plots::lines(
                &format!("{suite}: achieved FLOP rate"),
                &axis,
                y,
                &fl,
            )));
        }
    }
    let speedup = sweep(trials, &axis, |t| {
        let s = t.measurement.as_ref()?.speedup?;
        Some((s.median, Some((s.low, s.high))))
    });
    if !speedup.is_empty() {
        let y = YAxis {
            desc: "speedup over the reference",
            log: false,
            format: speedup_axis,
        };
        out.push_str(&chart(plots::lines(
            &format!("{suite}: speedup with its 95% interval"),
            &axis,
            y,
            &speedup,
        )));
    }
    out.push_str("</div>\n");
    out
}

fn trials_table(trials: &[&TrialRecord], device: Option<&DeviceInfo>) -> String {
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
                esc(kernel),
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
                        .unwrap_or_else(|| "reference".into())));
                    let peak = |p: f64, v: f64| {
                        if p > 0.0 {
                            format!(" ({})", percent_axis(100.0 * v / p))
                        } else {
                            String::new()
                        }
                    };
                    row.push(num(m
                        .bytes
                        .map(|b| {
                            let bw = b / m.time.median;
                            format!(
                                "{}{}",
                                rate(bw, "B/s"),
                                peak(device.map_or(0.0, |d| d.peak_bandwidth()), bw)
                            )
                        })
                        .unwrap_or_else(|| "–".into())));
                    row.push(num(m
                        .flops
                        .map(|f| {
                            let r = f / m.time.median;
                            format!(
                                "{}{}",
                                rate(r, "FLOP/s"),
                                peak(device.map_or(0.0, |d| d.peak_fp32_flops()), r)
                            )
                        })
                        .unwrap_or_else(|| "–".into())));
                }
                None => row.extend((0..4).map(|_| "–".to_string())),
            }
            row.push(num(change(t)));
            row.push(esc(&crate::report::terminal::headline(t)));
            row
        })
        .collect();
    table(
        "trials",
        &[
            "trial",
            "kernel",
            "case",
            "state",
            "median [95% interval]",
            "speedup [95% interval]",
            "bandwidth (% of peak)",
            "FLOP rate (% of FP32 peak)",
            "change [95% interval]",
            "note",
        ],
        &rows,
    )
}

fn comparisons(trials: &[&TrialRecord]) -> String {
    let mut out = String::new();
    for t in trials {
        let (Some(m), Some(v)) = (&t.measurement, &t.verdict) else {
            continue;
        };
        // Against a baseline pooled from several runs, the gate's threshold is widened by
        // their spread (`gate::with_spread`).
        let (limit, why) = match &t.gate {
            Some(crate::report::results::GateNote::Compared { baseline, .. })
                if baseline.spread > 1.0 =>
            {
                (
                    crate::gate::with_spread(m.max_slowdown, baseline.spread),
                    "max_slowdown × the spread between the baseline's runs",
                )
            }
            _ => (m.max_slowdown, "max_slowdown"),
        };
        let threshold = crate::stats::Summary::of(&m.baseline_samples)
            .map(|s| s.median * (1.0 + limit))
            .or_else(|| Some(m.time.median / v.time.slowdown * (1.0 + limit)));
        let svg = chart(super::strips::strips(
            &t.name,
            &m.baseline_samples,
            &m.time_samples,
            threshold,
            duration,
        ));
        let missing = if m.baseline_samples.is_empty() {
            " The baseline's samples are not in this results file; the threshold is drawn from the change."
        } else {
            ""
        };
        out.push_str(&format!(
            r#"<figure id="{}">{svg}<figcaption>{} {}: change {} (95% interval), threshold +{:.1}% ({why}).{missing}</figcaption></figure>"#,
            anchor("cmp", &t.name),
            badge(State::of(t).word()),
            esc(&t.name),
            change(t),
            100.0 * limit,
        ));
        out.push('\n');
    }
    if out.is_empty() {
        return String::new();
    }
    format!("<h3>Baseline against this run</h3>\n<div class=\"charts\">{out}</div>\n")
}

fn resources(trials: &[&TrialRecord]) -> String {
    let rows: Vec<Vec<String>> = trials
        .iter()
        .filter_map(|t| {
            let m = t.measurement.as_ref()?;
            let f = &m.footprint;
            let join = |v: Vec<String>| v.join(" / ");
            let clocks = m
                .clocks
                .summary()
                .map(|(lo, mid, hi)| format!("{lo:.0} / {mid:.0} / {hi:.0}"))
                .unwrap_or_else(|| "–".into());
            let celsius = crate::stats::Summary::of(&m.clocks.celsius)
                .map(|s| format!("{:.0}–{:.0}", s.min, s.max))
                .unwrap_or_else(|| "–".into());
            Some(vec![
                format!("<code>{}</code>", esc(&t.name)),
                num(bytes(f.pool_peak)),
                num(bytes(f.free_drop)),
                num(join(
                    f.launches.iter().map(|l| l.registers.to_string()).collect(),
                )),
                num(join(
                    f.launches
                        .iter()
                        .map(|l| bytes(l.static_shared.max(0) as u64 + l.dynamic_shared as u64))
                        .collect(),
                )),
                num(join(
                    f.launches
                        .iter()
                        .map(|l| format!("{} B", l.local_bytes))
                        .collect(),
                )),
                num(join(
                    f.launches
                        .iter()
                        .map(|l| l.blocks_per_sm.to_string())
                        .collect(),
                )),
                num(clocks),
                num(celsius),
                num(format!(
                    "{} of {}",
                    m.clocks.discarded_rounds,
                    m.clocks.discarded_rounds + m.clocks.kept_rounds
                )),
                esc(&format!("{} ×{}", m.regime, m.batch[0])),
            ])
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h3>Memory, resources and clocks</h3>\n{}",
        table(
            "resources",
            &[
                "trial",
                "pool peak",
                "free memory drop",
                "registers",
                "shared / block",
                "local / thread",
                "blocks / SM",
                "SM clock min / median / max, MHz",
                "°C",
                "rounds dropped (throttled)",
                "regime × batch"
            ],
            &rows,
        )
    )
}

/// The section of one suite.
pub fn suite_section(suite: &str, trials: &[&TrialRecord], device: Option<&DeviceInfo>) -> String {
    format!(
        "<section class=\"suite\" id=\"{}\">\n<h2>suite <code>{}</code></h2>\n{}{}{}{}</section>\n",
        anchor("suite", suite),
        esc(suite),
        sweep_charts(suite, trials, device),
        trials_table(trials, device),
        comparisons(trials),
        resources(trials),
    )
}
