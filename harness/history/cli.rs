//! `command`: `kernelgate history` — import results files, print trends, write the trend
//! page, and `--check` for drift.
//!
//! ```text
//! kernelgate history import RESULTS.json... [--commit SHA] [--branch NAME] [--mode stored|paired]
//! kernelgate history [FILTER] [--last N] [--html OUT.html]
//! kernelgate history --check [--since COMMIT|DATE] [--max-slowdown 2%] [FILTER]
//! ```
//! The history is `--db PATH`, else `KERNELGATE_HISTORY`.

use super::drift::{trends, Trend};
use super::error::HistoryError;
use super::run_info::{mode_of, RunInfo};
use super::store::{History, Run};
use crate::gate::percent;
use crate::report::duration;
use crate::report::results::Results;
use crate::stats::changepoint::Options;
use std::path::PathBuf;
use std::process::ExitCode;

/// `history --check`: a trial's level moved beyond its threshold.
pub const EXIT_DRIFT: u8 = crate::exit::DRIFT;
/// Bad input: arguments, an unreadable or newer history, an unreadable results file.
pub const EXIT_BAD_INPUT: u8 = crate::exit::BAD_INPUT;

const USAGE: &str = "usage: kernelgate history import RESULTS.json... [--commit SHA] [--branch NAME] [--mode stored|paired]
       kernelgate history [FILTER] [--last N] [--html OUT.html]
       kernelgate history --check [--since COMMIT|DATE] [--max-slowdown 2%] [FILTER]
       (the history file: --db PATH, or KERNELGATE_HISTORY)";

/// Parsed arguments.
#[derive(Debug, Default)]
struct Args {
    db: Option<PathBuf>,
    import: Option<Vec<PathBuf>>,
    commit: Option<String>,
    branch: Option<String>,
    mode: Option<String>,
    filter: String,
    last: usize,
    html: Option<PathBuf>,
    check: bool,
    since: Option<String>,
    max_slowdown: Option<f64>,
}

fn parse(args: &[String]) -> Result<Args, HistoryError> {
    let usage = |m: String| HistoryError::Usage(m);
    let mut a = Args {
        last: 10,
        ..Args::default()
    };
    let mut it = args.iter().peekable();
    if it.peek().map(|s| s.as_str()) == Some("import") {
        it.next();
        a.import = Some(Vec::new());
    }
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| usage(format!("`{name}` needs a value")))
        };
        match arg.as_str() {
            "--db" => a.db = Some(value("--db")?.into()),
            "--commit" => a.commit = Some(value("--commit")?),
            "--branch" => a.branch = Some(value("--branch")?),
            "--mode" => a.mode = Some(value("--mode")?),
            "--html" => a.html = Some(value("--html")?.into()),
            "--since" => a.since = Some(value("--since")?),
            "--check" => a.check = true,
            "--last" => {
                let v = value("--last")?;
                a.last = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| usage(format!("`--last {v}` is not a positive count")))?;
            }
            "--max-slowdown" => {
                let v = value("--max-slowdown")?;
                let number = v
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .filter(|x| *x >= 0.0);
                a.max_slowdown = Some(
                    number.ok_or_else(|| {
                        usage(format!(
                            "`--max-slowdown {v}` is not a percentage (write 2%)"
                        ))
                    })? / 100.0,
                );
            }
            flag if flag.starts_with("--") => {
                return Err(usage(format!("unknown option `{flag}`")))
            }
            other => match &mut a.import {
                Some(files) => files.push(other.into()),
                None if a.filter.is_empty() => a.filter = other.to_string(),
                None => {
                    return Err(usage(format!(
                        "one filter only (`{}` and `{other}`)",
                        a.filter
                    )))
                }
            },
        }
    }
    if a.db.is_none() {
        a.db = std::env::var_os("KERNELGATE_HISTORY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
    }
    Ok(a)
}

/// `kernelgate history ...`; exit code 0, `EXIT_DRIFT` (1) or `EXIT_BAD_INPUT` (2).
pub fn command(args: &[String]) -> ExitCode {
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            if matches!(e, HistoryError::Usage(_)) {
                eprintln!("{USAGE}");
            }
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn run(args: &[String]) -> Result<u8, HistoryError> {
    let a = parse(args)?;
    let db = a.db.clone().ok_or_else(|| {
        HistoryError::Usage("which history? (`--db PATH` or KERNELGATE_HISTORY)".into())
    })?;
    if let Some(files) = &a.import {
        if files.is_empty() {
            return Err(HistoryError::Usage("`import` takes results files".into()));
        }
        let mut history = History::open(&db)?;
        for f in files {
            let results = Results::load(f)?;
            let mut info = RunInfo::here(&results.date);
            info.commit = a.commit.clone().unwrap_or_else(|| "unknown".into());
            info.branch = a.branch.clone().unwrap_or_else(|| "unknown".into());
            info.dirty = false;
            info.mode = a.mode.clone().unwrap_or_else(|| mode_of(&results).into());
            let id = history.append(&results, &info)?;
            println!(
                "kernelgate: run {id} ({} trials) from {}",
                results.trials.len(),
                f.display()
            );
        }
        return Ok(0);
    }
    if !db.exists() {
        return Err(HistoryError::Usage(format!(
            "no history at `{}` (write one with KERNELGATE_HISTORY or `history import`)",
            db.display()
        )));
    }
    let history = History::open(&db)?;
    let runs = history.runs()?;
    let found = trends(&runs, &history.points(&a.filter)?, &Options::default());
    if a.check {
        return check(&a, &runs, &found);
    }
    print!("{}", table(&runs, &found, a.last));
    let html = a.html.clone().unwrap_or_else(|| db.with_extension("html"));
    crate::baseline::write_atomically(&html, super::trend::page(&runs, &found).as_bytes())?;
    println!("kernelgate: wrote the trend page {}", html.display());
    Ok(0)
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Verdicts as one character per run, oldest first.
fn verdict_marks(t: &Trend, from: usize) -> String {
    t.points[from..]
        .iter()
        .map(|p| match p.2.as_deref() {
            Some("regressed") => 'R',
            Some("inconclusive") => '?',
            Some("improved") => '+',
            Some("unchanged") => '·',
            _ => '-',
        })
        .collect()
}

/// One row per trial over its last `last` runs.
pub(super) fn table(runs: &[Run], trends: &[Trend], last: usize) -> String {
    let width = trends
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!(
        "{:width$}  {:>4}  {:>10}  {:>10}  {:>8}  {:<12}  level shifts (commits)\n",
        "trial", "runs", "first", "last", "change", "verdicts"
    );
    for t in trends {
        let from = t.points.len().saturating_sub(last);
        let (first, latest) = (t.points[from].1, t.points[t.points.len() - 1].1);
        let shifts: Vec<String> = t
            .change_points
            .iter()
            .map(|c| {
                let (a, b) = (t.points[c.index - 1].0, t.points[c.index].0);
                format!(
                    "{} at {}..{}",
                    percent(t.shift(c)),
                    short(&runs[a].info.commit),
                    short(&runs[b].info.commit)
                )
            })
            .collect();
        out.push_str(&format!(
            "{:width$}  {:>4}  {:>10}  {:>10}  {:>8}  {:<12}  {}\n",
            t.name,
            t.points.len() - from,
            duration(first),
            duration(latest),
            percent(latest / first),
            verdict_marks(t, from),
            if shifts.is_empty() {
                "none".into()
            } else {
                shifts.join(", ")
            },
        ));
    }
    out
}

fn check(a: &Args, runs: &[Run], trends: &[Trend]) -> Result<u8, HistoryError> {
    let since = match &a.since {
        None => 0,
        Some(s) => runs
            .iter()
            .position(|r| {
                r.info.commit.starts_with(s.as_str()) || r.info.date.as_str() >= s.as_str()
            })
            .ok_or_else(|| HistoryError::UnknownSince(s.clone()))?,
    };
    let mut drifted = 0;
    for t in trends {
        let threshold = a.max_slowdown.unwrap_or(t.max_slowdown);
        let Some(d) = t.drift(since) else { continue };
        if d.factor() > 1.0 + threshold {
            drifted += 1;
            let ranges: Vec<String> = d
                .moved
                .iter()
                .map(|&(x, y)| {
                    format!(
                        "{}..{}",
                        short(&runs[x].info.commit),
                        short(&runs[y].info.commit)
                    )
                })
                .collect();
            println!(
                "drift: {} ({}) {} → {} ({}), beyond max_slowdown {:.1}%; the level moved between commits {}",
                t.name,
                t.device,
                duration(d.before),
                duration(d.now),
                percent(d.factor()),
                100.0 * threshold,
                ranges.join(", ")
            );
        }
    }
    let from = runs
        .get(since)
        .map(|r| format!("{} ({})", short(&r.info.commit), r.info.date))
        .unwrap_or_default();
    if drifted == 0 {
        println!(
            "kernelgate: no drift since {from} in {} trials",
            trends.len()
        );
        Ok(0)
    } else {
        println!(
            "kernelgate: {drifted} of {} trials drifted since {from}",
            trends.len()
        );
        Ok(EXIT_DRIFT)
    }
}
