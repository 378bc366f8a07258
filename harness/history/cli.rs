//! `command`: `kernelgate history` — import results files, print trends, write the trend
//! page, and `--check` for drift. Runs are read in commit order (first parent, from the
//! repository of the current directory) where the commit is known there, by start time
//! otherwise ([`super::order`]).
//!
//! ```text
//! kernelgate history import RESULTS.json... [--commit SHA] [--branch NAME] [--mode stored|paired]
//! kernelgate history [FILTER] [--last N] [--html OUT.html]
//! kernelgate history --check [--since COMMIT|DATE] [--max-slowdown 2%] [FILTER]
//! ```
//! The history is `--db PATH`, else `KERNELGATE_HISTORY`.

use super::drift::{regime_switches, trends, RegimeSwitch, Trend};
use super::error::HistoryError;
use super::run_info::RunInfo;
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
       (the history file: --db PATH, or KERNELGATE_HISTORY; `kernelgate help history` says more)";

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
            let info = imported(&results, &a, f);
            let id = history.append(&results, &info)?;
            println!(
                "kernelgate: run {id} ({} trials, commit {}, {}) from {}",
                results.trials.len(),
                short(&info.commit),
                info.when(),
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
    let mut runs = history.runs()?;
    let ordered = super::order::order(&mut runs, &super::order::first_parent());
    let found = trends(&runs, &history.points(&a.filter)?, &Options::default());
    let switches = regime_switches(&found);
    if let (Some(first), Some(last)) = (runs.first(), runs.last()) {
        println!(
            "kernelgate: {} run(s), {} to {}; {} in first-parent commit order, {} by start time (commit not in this repository's first-parent history)",
            runs.len(),
            run_label(first),
            run_label(last),
            ordered.by_commit,
            ordered.by_time
        );
    }
    if a.check {
        return check(&a, &runs, &found, &switches);
    }
    print!("{}", table(&runs, &found, a.last));
    for s in &switches {
        println!("{}", switch_line(&runs, s));
    }
    let html = a.html.clone().unwrap_or_else(|| db.with_extension("html"));
    crate::baseline::write_atomically(
        &html,
        super::trend::page(&runs, &found, &switches, ordered).as_bytes(),
    )?;
    println!("kernelgate: wrote the trend page {}", html.display());
    Ok(0)
}

/// What a run records, with `--commit`, `--branch` and `--mode` for what its results file does
/// not say (files written before kernelgate recorded them): the file wins.
fn imported(results: &Results, a: &Args, file: &std::path::Path) -> RunInfo {
    let mut info = RunInfo::of(results);
    let p = &results.provenance;
    for (flag, given, recorded, slot) in [
        ("--commit", &a.commit, &p.commit, &mut info.commit),
        ("--branch", &a.branch, &p.branch, &mut info.branch),
    ] {
        match (given, recorded) {
            (Some(g), None) => *slot = g.clone(),
            (Some(g), Some(r)) if g != r => println!(
                "note: {} records {} `{r}`; `{flag} {g}` applies only to files that record none",
                file.display(),
                &flag[2..]
            ),
            _ => {}
        }
    }
    if let Some(m) = &a.mode {
        info.mode = m.clone();
    }
    info
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// A run for a person: its short commit and when it ran, or only when where the commit is
/// unknown.
fn run_label(r: &Run) -> String {
    match r.short(10) {
        s if s == r.info.when() => s,
        s => format!("{s} ({})", r.info.when()),
    }
}

/// One line for a regime switch: shown, and said not to be drift.
fn switch_line(runs: &[Run], s: &RegimeSwitch) -> String {
    format!(
        "regime switch: {} ({}) {} → {} between {} and {}: two trends, not compared (not drift)",
        s.name,
        s.device,
        s.regimes.0,
        s.regimes.1,
        run_label(&runs[s.runs.0]),
        run_label(&runs[s.runs.1])
    )
}

/// One character per run of the trend from run `from` on, oldest first: its verdict, `F`
/// where it failed (without a time, or with one but not by regressing).
fn verdict_marks(t: &Trend, from: usize) -> String {
    let mut marks: Vec<(usize, char)> = t
        .points
        .iter()
        .filter(|p| p.run >= from)
        .map(|p| {
            let mark = match p.verdict.as_deref() {
                Some("regressed") => 'R',
                _ if p.failed => 'F',
                Some("inconclusive") => '?',
                Some("improved") => '+',
                Some("unchanged") => '·',
                Some("machine-slower" | "machine-faster") => 'm',
                Some("identical code") => '=',
                _ => '-',
            };
            (p.run, mark)
        })
        .collect();
    marks.extend(t.failures.iter().filter(|&&r| r >= from).map(|&r| (r, 'F')));
    marks.sort_by_key(|m| m.0);
    marks.into_iter().map(|m| m.1).collect()
}

/// One row per trial and regime over its last `last` runs of the history: the first and last
/// median in that window, the change, each run's verdict (`F` failed), the level shifts.
pub(super) fn table(runs: &[Run], trends: &[Trend], last: usize) -> String {
    let width = trends
        .iter()
        .map(|t| t.label().chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!(
        "{:width$}  {:>4}  {:>10}  {:>10}  {:>8}  {:<12}  level shifts (commits)\n",
        "trial", "runs", "first", "last", "change", "verdicts"
    );
    // The window: the trend's runs among the history's last `last` runs.
    let from = runs.len().saturating_sub(last);
    for t in trends {
        let window: Vec<_> = t.points.iter().filter(|p| p.run >= from).collect();
        let failures = t.failures.iter().filter(|&&r| r >= from).count();
        if window.is_empty() && failures == 0 {
            continue;
        }
        let (first, latest) = match (window.first(), window.last()) {
            (Some(f), Some(l)) => (duration(f.median), duration(l.median)),
            _ => ("-".into(), "-".into()),
        };
        let change = match (window.first(), window.last()) {
            (Some(f), Some(l)) if window.len() > 1 => percent(l.median / f.median),
            _ => "-".into(),
        };
        let shifts: Vec<String> = t
            .change_points
            .iter()
            .map(|c| {
                let (a, b) = t.shift_runs(c);
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
            t.label(),
            window.len() + failures,
            first,
            latest,
            change,
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

fn check(
    a: &Args,
    runs: &[Run],
    trends: &[Trend],
    switches: &[RegimeSwitch],
) -> Result<u8, HistoryError> {
    let since = match &a.since {
        None => 0,
        Some(s) => runs
            .iter()
            .position(|r| {
                (r.info.commit != "unknown" && r.info.commit.starts_with(s.as_str()))
                    || r.info.when() >= s.as_str()
            })
            .ok_or_else(|| HistoryError::UnknownSince(s.clone()))?,
    };
    for s in switches.iter().filter(|s| s.runs.1 >= since) {
        println!("{}", switch_line(runs, s));
    }
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
                t.label(),
                t.device,
                duration(d.before),
                duration(d.now),
                percent(d.factor()),
                100.0 * threshold,
                ranges.join(", ")
            );
        }
    }
    let from = runs.get(since).map(run_label).unwrap_or_default();
    if drifted == 0 {
        println!(
            "kernelgate: no drift since {from} in {} trend(s) (a trial and regime each)",
            trends.len()
        );
        Ok(0)
    } else {
        println!(
            "kernelgate: {drifted} of {} trend(s) drifted since {from}",
            trends.len()
        );
        Ok(EXIT_DRIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Verdict;
    use crate::history::drift::TrendPoint;

    #[test]
    fn every_verdict_has_its_mark() {
        let verdicts = [
            Some(Verdict::Unchanged),
            Some(Verdict::Improved),
            Some(Verdict::Regressed),
            Some(Verdict::Inconclusive),
            Some(Verdict::MachineSlower),
            Some(Verdict::MachineFaster),
            Some(Verdict::IdenticalCode),
            None,
        ];
        let trend = Trend {
            name: "s::k::n=1".into(),
            suite: "s".into(),
            device: "GPU".into(),
            regime: Some("graph".into()),
            points: verdicts
                .iter()
                .enumerate()
                .map(|(run, v)| TrendPoint {
                    run,
                    median: 1e-6,
                    // As the history stores it: the verdict's word.
                    verdict: v.map(|v| v.to_string()),
                    failed: *v == Some(Verdict::Regressed),
                })
                .collect(),
            failures: vec![verdicts.len()],
            max_slowdown: 0.03,
            change_points: Vec::new(),
        };
        assert_eq!(verdict_marks(&trend, 0), "·+R?mm=-F");
        assert_eq!(verdict_marks(&trend, 4), "mm=-F");
    }
}
