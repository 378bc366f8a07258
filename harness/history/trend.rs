//! `page`: the trend page of a history — per suite, each trial's median relative to its first
//! run against commit, one line per trial, change points marked; then the table the terminal
//! prints. Self-contained like the report (inline SVG and CSS).

use super::drift::Trend;
use super::store::Run;
use crate::gate::percent;
use crate::html::page::{anchor, esc, num, table};
use crate::html::plots::{self, Series, YAxis};

fn relative(v: f64) -> String {
    format!("{:+.1}%", v)
}

/// The page.
pub fn page(runs: &[Run], trends: &[Trend]) -> String {
    let labels: Vec<String> = runs
        .iter()
        .map(|r| r.info.commit.chars().take(7).collect())
        .collect();
    let mut suites: Vec<(&str, &str)> = Vec::new();
    for t in trends {
        if !suites.contains(&(t.suite.as_str(), t.device.as_str())) {
            suites.push((&t.suite, &t.device));
        }
    }
    let first = runs.first().map(|r| r.info.date.as_str()).unwrap_or("");
    let last = runs.last().map(|r| r.info.date.as_str()).unwrap_or("");
    let mut body = format!(
        "<h1>kernelgate history</h1>\n<p class=\"meta\">{} runs, {} to {} · {} trials · change points by E-divisive means (permutation test, p ≤ 0.01)</p>\n",
        runs.len(),
        esc(first),
        esc(last),
        trends.len()
    );
    for (suite, device) in suites {
        let members: Vec<&Trend> = trends
            .iter()
            .filter(|t| t.suite == suite && t.device == device)
            .collect();
        let series: Vec<Series> = members
            .iter()
            .map(|t| {
                let base = t.points[0].1;
                Series {
                    name: t
                        .name
                        .strip_prefix(suite)
                        .and_then(|n| n.strip_prefix("::"))
                        .unwrap_or(&t.name)
                        .to_string(),
                    points: t
                        .points
                        .iter()
                        .map(|p| (p.0 as f64, 100.0 * (p.1 / base - 1.0), None))
                        .collect(),
                }
            })
            .collect();
        let marks: Vec<(usize, usize)> = members
            .iter()
            .enumerate()
            .flat_map(|(i, t)| {
                t.change_points
                    .iter()
                    .map(move |c| (i, t.points[c.index].0))
            })
            .collect();
        let y = YAxis {
            desc: "median vs its first run",
            log: false,
            format: relative,
        };
        let svg = plots::trend(&format!("{suite} on {device}"), &labels, &series, &marks, y)
            .map(|svg| svg + &plots::legend(&series))
            .unwrap_or_else(|e| format!("<p class=\"note\">{}</p>", esc(&e.to_string())));
        let rows: Vec<Vec<String>> = members
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (a, b) = (t.points[0].1, t.points[t.points.len() - 1].1);
                let (r, g, b_) = plots::color(i);
                let shifts: Vec<String> = t
                    .change_points
                    .iter()
                    .map(|c| {
                        let (x, y) = (t.points[c.index - 1].0, t.points[c.index].0);
                        format!(
                            "{} between {} and {} (p = {:.3})",
                            percent(t.shift(c)),
                            esc(&labels[x]),
                            esc(&labels[y]),
                            c.p
                        )
                    })
                    .collect();
                vec![
                    format!(
                        r#"<span class="legend"><i style="background: rgb({r}, {g}, {b_})"></i></span><code id="{}">{}</code>"#,
                        anchor("h", &t.name),
                        esc(&t.name)
                    ),
                    num(t.points.len().to_string()),
                    num(crate::report::duration(a)),
                    num(crate::report::duration(b)),
                    num(percent(b / a)),
                    num(format!("{:.1}%", 100.0 * t.max_slowdown)),
                    if shifts.is_empty() {
                        "none".into()
                    } else {
                        shifts.join("<br>")
                    },
                ]
            })
            .collect();
        body.push_str(&format!(
            "<section id=\"{}\">\n<h2>suite <code>{}</code> <span class=\"note\">{}</span></h2>\n<div class=\"trend\">{svg}</div>\n{}</section>\n",
            anchor("suite", suite),
            esc(suite),
            esc(device),
            table("trends", &["trial", "runs", "first", "last", "change", "max_slowdown", "level shifts"], &rows)
        ));
    }
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                format!(
                    "<code>{}</code>",
                    esc(&r.info.commit.chars().take(12).collect::<String>())
                ),
                esc(&r.info.date),
                esc(&r.info.branch),
                if r.info.dirty {
                    "dirty".into()
                } else {
                    String::new()
                },
                esc(&r.info.mode),
                esc(r.gpu_uuid.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    body.push_str(&format!(
        "<section id=\"runs\"><h2>Runs</h2>\n{}</section>\n",
        table(
            "runs",
            &["commit", "date", "branch", "dirty", "mode", "GPU"],
            &rows
        )
    ));
    crate::html::page::page("kernelgate history", &body)
}
