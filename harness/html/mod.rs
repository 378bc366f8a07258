//! `render`: the HTML report of a run (`KERNELGATE_HTML=report.html`, or
//! `kernelgate report RESULTS.json... --html out.html` without a GPU): one self-contained file
//! — inline SVG drawn with plotters, inline CSS, no script, no external URL — rendered from the
//! typed [`Results`] and nothing else.
//!
//! Reading order: what needs attention (with the commands that rerun, profile and rebless
//! it), then each suite (sweep charts, every trial, baseline-against-now distributions,
//! memory and resources), then the device.

pub mod page;
pub mod plots;
pub mod strips;
mod suite;
pub mod trial;

use crate::report::results::{Results, ResultsError};
use page::{anchor, badge, esc, num, table};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use trial::{commands, State};

fn summary(results: &Results) -> String {
    let states: Vec<State> = results.trials.iter().map(State::of).collect();
    let mut counts: Vec<(State, usize)> = Vec::new();
    for s in &states {
        match counts.iter_mut().find(|(x, _)| x == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((*s, 1)),
        }
    }
    counts.sort();
    let mut out = String::from("<section id=\"summary\">\n<h2>Summary</h2>\n<p class=\"counts\">");
    for (s, n) in &counts {
        out.push_str(&format!("<span>{} {n}</span>", badge(s.word())));
    }
    out.push_str(&format!(
        "<span>{} trials</span></p>\n",
        results.trials.len()
    ));
    let mut attention: Vec<(State, &crate::report::results::TrialRecord)> = results
        .trials
        .iter()
        .zip(&states)
        .filter(|(_, s)| s.needs_attention())
        .map(|(t, s)| (*s, t))
        .collect();
    attention.sort_by_key(|(s, _)| *s);
    if attention.is_empty() {
        out.push_str("<p>Nothing needs attention: no trial failed, regressed, was inconclusive or unreliable.</p>\n");
    } else {
        out.push_str("<h3>Needs attention</h3>\n");
        let rows: Vec<Vec<String>> = attention
            .iter()
            .map(|(s, t)| {
                let change = crate::report::terminal::record_change(t);
                let cmds: String = commands(t)
                    .iter()
                    .map(|(what, c)| format!("<pre>{what}: {}</pre>", esc(c)))
                    .collect();
                vec![
                    format!(
                        r##"<a href="#{}"><code>{}</code></a>"##,
                        anchor("t", &t.name),
                        esc(&t.name)
                    ),
                    badge(s.word()),
                    num(change),
                    format!("{}{cmds}", esc(t.message.as_deref().unwrap_or(""))),
                ]
            })
            .collect();
        out.push_str(&table(
            "attention",
            &[
                "trial",
                "state",
                "change [95% interval]",
                "why, and what to run",
            ],
            &rows,
        ));
    }
    out.push_str("</section>\n");
    out
}

fn device(results: &Results) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut row = |k: &str, v: String| rows.push(vec![esc(k), esc(&v)]);
    if let Some(f) = &results.device {
        row("fingerprint", f.describe());
    }
    if let Some(d) = &results.device_info {
        row("GPU", format!("{} (ordinal {})", d.name, d.ordinal));
        if let Some(uuid) = &d.uuid {
            row("UUID", uuid.clone());
        }
        row(
            "compute capability",
            format!("{}.{}", d.compute_capability.0, d.compute_capability.1),
        );
        row("SMs", d.sm_count.to_string());
        row("peak SM clock", format!("{} MHz", d.sm_clock_khz / 1000));
        row(
            "peak memory clock",
            format!("{} MHz", d.memory_clock_khz / 1000),
        );
        row(
            "memory",
            format!(
                "{} on a {}-bit bus",
                crate::report::bytes(d.total_memory as u64),
                d.bus_width_bits
            ),
        );
        row("L2", crate::report::bytes(d.l2_bytes.max(0) as u64));
        row(
            "peak bandwidth",
            crate::report::rate(d.peak_bandwidth(), "B/s"),
        );
        row(
            "peak FP32",
            crate::report::rate(d.peak_fp32_flops(), "FLOP/s"),
        );
        row(
            "driver",
            format!(
                "{} (CUDA {}.{})",
                d.driver_release,
                d.driver_version / 1000,
                d.driver_version % 1000 / 10
            ),
        );
    }
    if rows.is_empty() {
        return "<section id=\"device\"><h2>Device</h2><p>No GPU was used in this run.</p></section>\n".into();
    }
    format!(
        "<section id=\"device\">\n<h2>Device</h2>\n{}<p class=\"note\">Clocks and temperature while each trial sampled are in each suite's last table.</p></section>\n",
        table("device", &["", ""], &rows)
    )
}

/// The report of one run.
pub fn render(results: &Results) -> String {
    let mut suites: Vec<&str> = Vec::new();
    for t in &results.trials {
        if !suites.contains(&t.suite.as_str()) {
            suites.push(&t.suite);
        }
    }
    let device_name = results
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .unwrap_or_else(|| "no GPU".into());
    let mut body = format!(
        "<h1>kernelgate report</h1>\n<p class=\"meta\">{} · {} · kernelgate {} · {} trials in {} suites</p>\n",
        esc(&results.date),
        esc(&device_name),
        esc(&results.kernelgate),
        results.trials.len(),
        suites.len()
    );
    body.push_str(&summary(results));
    for s in suites {
        let trials: Vec<_> = results.trials.iter().filter(|t| t.suite == s).collect();
        body.push_str(&suite::suite_section(
            s,
            &trials,
            results.device_info.as_ref(),
        ));
    }
    body.push_str(&device(results));
    page::page(&format!("kernelgate report {}", results.date), &body)
}

/// Renders `results` and writes it atomically to `path`.
pub fn write(path: &Path, results: &Results) -> Result<(), crate::baseline::WriteError> {
    crate::baseline::write_atomically(path, render(results).as_bytes())
}

/// `kernelgate report RESULTS.json... --html OUT.html`: joins the results files (as `merge`
/// does) and writes the report; exit code 0, or 2 for bad input.
pub fn command(args: &[String]) -> ExitCode {
    let bad = |msg: String| {
        eprintln!("error: {msg}\nusage: kernelgate report RESULTS.json... --html OUT.html");
        crate::exit::code(crate::exit::BAD_INPUT)
    };
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut out: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--html" => match it.next() {
                Some(p) => out = Some(p.into()),
                None => return bad("`--html` needs a file name".into()),
            },
            flag if flag.starts_with("--") => return bad(format!("unknown option `{flag}`")),
            file => inputs.push(file.into()),
        }
    }
    let Some(out) = out else {
        return bad("say where to write the report with `--html OUT.html`".into());
    };
    if inputs.is_empty() {
        return bad("give at least one results file".into());
    }
    let loaded: Result<Vec<Results>, ResultsError> =
        inputs.iter().map(|p| Results::load(p)).collect();
    let merged = loaded.and_then(|r| crate::report::merge::merge(&r));
    match merged.and_then(|r| Ok(write(&out, &r)?)) {
        Ok(()) => {
            println!("kernelgate: wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => bad(e.to_string()),
    }
}
