//! `render`: the HTML report of a run (`KERNELGATE_HTML=report.html`, or
//! `kernelgate report RESULTS.json... --html out.html` without a GPU): one self-contained file
//! — inline SVG drawn with plotters, inline CSS, no script, no external URL — rendered from the
//! typed [`Results`] and nothing else.
//!
//! Reading order: how the run decided (stored baselines, or paired against a base revision,
//! named in the header and on every paired chart and strip), what needs attention (grouped by
//! kernel, with the commands that rerun, profile and — where bless applies — rebless it), then
//! each suite (sweep charts with one colour per kernel, every trial, what each compared trial
//! was compared with beside this run, memory and resources against the baseline or base), then
//! the device.

pub mod axes;
mod code;
mod compared;
mod legend;
pub mod page;
pub mod plots;
mod resources;
pub mod strips;
mod suite;
mod summary;
pub mod trial;
mod view;

use crate::report::results::Results;
use crate::report::{bytes, rate};
use page::{esc, table};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use view::View;

/// The run's mode, for the header: paired against its base (named), or stored baselines.
fn mode(results: &Results) -> String {
    match (&results.base, results.base_label()) {
        (Some(b), Some(label)) => format!(
            "<p class=\"mode\" id=\"mode\" data-mode=\"paired\">Mode: <strong>paired</strong> against <strong>{}</strong> (<code>KERNELGATE_BASE={}</code>, commit <code>{}</code>): every trial timed interleaved with its version at the base; changes, speedups and distributions are the candidate against the base. Bless does not apply.</p>\n",
            esc(&label),
            esc(&b.rev),
            esc(&b.commit)
        ),
        _ => "<p class=\"mode\" id=\"mode\" data-mode=\"stored\">Mode: <strong>stored baselines</strong>: every trial compared with its baseline recorded for this device; speedups are over each suite's reference kernel.</p>\n".into(),
    }
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
                bytes(d.total_memory as u64),
                d.bus_width_bits
            ),
        );
        row("L2", bytes(d.l2_bytes.max(0) as u64));
        row("peak bandwidth", rate(d.peak_bandwidth(), "B/s"));
        row("peak FP32", rate(d.peak_fp32_flops(), "FLOP/s"));
        row(
            "driver",
            format!(
                "{} (CUDA {})",
                d.driver_release,
                crate::sass::driver_version(d.driver_version)
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

/// The report of one run; of a pool of GPU models, every trial on every device side by side,
/// then each device's run.
pub fn render(results: &Results) -> String {
    let title = format!("kernelgate report {}", results.date);
    if results.pool.is_empty() {
        return page::page(&title, &body(results));
    }
    let rows = crate::report::pool::rows(results);
    let devices: Vec<String> = results.pool.iter().map(|r| r.described_device()).collect();
    let cells = |r: &crate::report::pool::Row| -> Vec<String> {
        let on = r.on.iter().map(|t| esc(&crate::report::pool::cell(*t)));
        std::iter::once(format!("<code>{}</code>", esc(r.name)))
            .chain(on)
            .collect()
    };
    let head: Vec<&str> = std::iter::once("trial")
        .chain(devices.iter().map(String::as_str))
        .collect();
    let rows: Vec<Vec<String>> = rows.iter().map(cells).collect();
    let mut out = format!(
        "<h1>kernelgate report: a pool of {} GPU models</h1>\n<p class=\"meta\">{} · each device decided as its own family</p>\n{}<section id=\"pool\">\n<h2>Side by side</h2>\n<ul>{}</ul>\n{}</section>\n",
        results.pool.len(),
        esc(&results.date),
        mode(results),
        results.pool.iter().map(|r| format!("<li>{}</li>", esc(&crate::report::pool::headline(r)))).collect::<String>(),
        table("pool", &head, &rows)
    );
    // Each device's run, its ids (and the links to them) made its own.
    for (k, run) in results.pool.iter().enumerate() {
        let own = body(run).replacen(
            "<h1>kernelgate report</h1>",
            &format!("<h2>{}</h2>", esc(&devices[k])),
            1,
        );
        let own = own
            .replace("id=\"", &format!("id=\"d{k}-"))
            .replace("href=\"#", &format!("href=\"#d{k}-"));
        out.push_str(&format!(
            "<section class=\"device-run\" id=\"d{k}\">\n{own}</section>\n"
        ));
    }
    page::page(&title, &out)
}

/// The body of one run's report.
fn body(results: &Results) -> String {
    let suites = crate::order::first_seen(results.trials.iter().map(|t| t.suite.as_str()));
    let device_name = results
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .unwrap_or_else(|| "no GPU".into());
    let provenance =
        (results.provenance.recorded()).map_or(String::new(), |p| format!(" · {}", esc(&p)));
    let mut body = format!(
        "<h1>kernelgate report</h1>\n<p class=\"meta\">{} · {} · kernelgate {} · {} trials in {} suite{}{provenance}</p>\n{}",
        esc(&results.date),
        esc(&device_name),
        esc(&results.kernelgate),
        results.trials.len(),
        suites.len(),
        if suites.len() == 1 { "" } else { "s" },
        mode(results)
    );
    let view = View::of(results);
    body.push_str(&summary::summary(&view));
    for s in suites {
        let trials: Vec<_> = results.trials.iter().filter(|t| t.suite == s).collect();
        body.push_str(&suite::suite_section(&view, s, &trials));
    }
    body.push_str(&device(results));
    body
}

/// Renders `results` and writes it atomically to `path`.
pub fn write(path: &Path, results: &Results) -> Result<(), crate::baseline::WriteError> {
    crate::baseline::write_atomically(path, render(results).as_bytes())
}

/// `kernelgate report`'s command line.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("out").required(true).multiple(true).args(["html", "markdown", "junit"])))]
pub struct ReportArgs {
    /// Results files (KERNELGATE_RESULTS), joined as `merge` joins them
    #[arg(required = true, value_name = "RESULTS.json")]
    inputs: Vec<PathBuf>,
    /// Where to write the HTML report
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// Where to write the Markdown summary (the run's own, fit for a pull-request comment; `-`
    /// for standard output)
    #[arg(long, value_name = "OUT.md")]
    markdown: Option<PathBuf>,
    /// Where to write JUnit XML (a merged run's decided verdicts, where each shard's file
    /// deferred them)
    #[arg(long, value_name = "OUT.xml")]
    junit: Option<PathBuf>,
}

/// `kernelgate report RESULTS.json... [--html OUT.html] [--markdown OUT.md] [--junit OUT.xml]`:
/// joins the results files (as `merge` does) and writes the HTML report, the Markdown summary,
/// JUnit XML, or several; exit code 0, or 2 for bad input.
pub fn command(args: &ReportArgs) -> ExitCode {
    // One file is rendered as it is (a shard's too); several are one run's files, merged.
    let merged = crate::report::merge::load_all(&args.inputs).and_then(|mut r| match r.len() {
        1 => Ok(r.remove(0).1),
        _ => crate::report::merge::merge(&r),
    });
    // Standard output holds the Markdown alone when it goes there.
    let to_stdout = args.markdown.as_ref().is_some_and(|m| m.as_os_str() == "-");
    let wrote = |out: &Path| match to_stdout {
        true => eprintln!("kernelgate: wrote {}", out.display()),
        false => println!("kernelgate: wrote {}", out.display()),
    };
    let written = merged.and_then(|r| {
        // Each output with how it is rendered and whether it goes to stdout (`--markdown -`).
        let outputs = [
            (&args.html, render as fn(&Results) -> String, false),
            (&args.junit, crate::report::junit::render, false),
            (&args.markdown, crate::report::markdown::render, to_stdout),
        ];
        for (out, render, stdout) in outputs {
            match out {
                Some(_) if stdout => print!("{}", render(&r)),
                Some(out) => {
                    crate::baseline::write_atomically(out, render(&r).as_bytes())?;
                    wrote(out);
                }
                None => {}
            }
        }
        Ok(())
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::exit::bad_input(e),
    }
}
