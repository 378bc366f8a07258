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

use super::drift::{regime_switches, span, trends, RegimeSwitch, Trend};
use super::error::HistoryError;
use super::run_info::RunInfo;
use super::store::{History, Run};
use crate::gate::{percent, Verdict};
use crate::report::duration;
use crate::report::results::Results;
use crate::stats::changepoint::Options;
use std::path::PathBuf;
use std::process::ExitCode;

/// `kernelgate history`'s command line, as clap parses it.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    import: Option<Import>,
    /// Only trials whose name contains it
    filter: Option<String>,
    /// The history (default KERNELGATE_HISTORY)
    #[arg(long, value_name = "FILE", global = true)]
    db: Option<PathBuf>,
    /// The table covers the last N runs
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = crate::usage::positive_count)]
    last: usize,
    /// Where the trend page goes (default beside the database)
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// Each trend's latest run against its trailing runs by the gate's rule; exit 1 on a regression
    #[arg(long)]
    check: bool,
    /// --check: from the run of that commit (a prefix) or date on
    #[arg(long, value_name = "COMMIT|DATE", requires = "check")]
    since: Option<String>,
    /// --check: one threshold for every trial instead of each suite's (2%)
    #[arg(long, value_name = "PERCENT", value_parser = percentage, requires = "check")]
    max_slowdown: Option<f64>,
}

/// `kernelgate history import`.
#[derive(Debug, clap::Subcommand)]
enum Import {
    /// Append results files to the history
    #[command(long_about = crate::usage::HISTORY_IMPORT)]
    Import(ImportArgs),
}

// `history import`'s arguments (no doc comment: clap would show it as the command's own).
#[derive(Debug, clap::Args)]
struct ImportArgs {
    /// Results files (KERNELGATE_RESULTS)
    #[arg(required = true, value_name = "RESULTS.json")]
    files: Vec<PathBuf>,
    /// The commit, for files that record none (older kernelgate)
    #[arg(long, value_name = "SHA")]
    commit: Option<String>,
    /// The branch, for files that record none
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// The mode, overriding what the file says
    #[arg(long, value_parser = ["stored", "paired"])]
    mode: Option<String>,
}

fn percentage(text: &str) -> Result<f64, crate::usage::BadValue> {
    text.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .map(|x| x / 100.0)
        .ok_or_else(|| crate::usage::BadValue::Percent(text.into()))
}

/// `kernelgate history ...`; exit code 0, `exit::DRIFT` (1: `--check` found a trend's latest
/// run regressed against its trailing runs) or `exit::BAD_INPUT` (2: arguments, an unreadable
/// or newer history, an unreadable results file).
pub fn command(args: &HistoryArgs) -> ExitCode {
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            if matches!(e, HistoryError::Usage(_)) {
                eprintln!("(`kernelgate help history` says what it takes)");
            }
            ExitCode::from(crate::exit::BAD_INPUT)
        }
    }
}

fn run(a: &HistoryArgs) -> Result<u8, HistoryError> {
    let db = (a.db.clone())
        .or_else(|| crate::project::var("KERNELGATE_HISTORY").map(PathBuf::from))
        .ok_or_else(|| {
            HistoryError::Usage("which history? (`--db PATH` or KERNELGATE_HISTORY)".into())
        })?;
    if let Some(Import::Import(import_args)) = &a.import {
        // A history this import created is not left behind, empty, when the import fails.
        let existed = db.exists();
        let imported = import(import_args, &db);
        if imported.is_err() && !existed {
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
            }
        }
        return imported;
    }
    if !db.exists() {
        return Err(HistoryError::Usage(format!(
            "no history at `{}` (write one with KERNELGATE_HISTORY or `history import`)",
            db.display()
        )));
    }
    let history = History::open(&db)?;
    history.validate()?;
    let mut runs = history.runs()?;
    let ordered = super::order::order(&mut runs, &super::order::first_parent());
    let points = history.points(a.filter.as_deref().unwrap_or_default())?;
    let found = trends(&runs, &points, &Options::default());
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
        return check(a, &runs, &found, &switches);
    }
    print!("{}", table(&runs, &found, a.last));
    for s in &switches {
        println!("{}", switch_line(&runs, s));
    }
    let html = a.html.clone().unwrap_or_else(|| db.with_extension("html"));
    let page = super::trend::page(&runs, &found, &switches, ordered);
    crate::baseline::write_atomically(&html, page.as_bytes())?;
    println!("kernelgate: wrote the trend page {}", html.display());
    Ok(0)
}

/// What a run records, with `--commit`, `--branch` and `--mode` for what its results file does
/// not say (files written before kernelgate recorded them): the file wins.
fn imported(results: &Results, a: &ImportArgs, file: &std::path::Path) -> RunInfo {
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

/// `history import FILES`: every file read and checked, then appended.
fn import(a: &ImportArgs, db: &std::path::Path) -> Result<u8, HistoryError> {
    let mut history = History::open(db)?;
    // Nothing is added to a history `lint` refuses.
    history.validate()?;
    // Every file read and checked before any is stored: a run already in the history, or
    // given twice, is refused and nothing is imported.
    let mut loaded: Vec<(&PathBuf, Results, RunInfo)> = Vec::new();
    // A pool of GPU models is a run per device.
    let runs = a.files.iter().map(|f| Ok((f, Results::load(f)?)));
    let runs: Vec<(&PathBuf, Results)> = runs.collect::<Result<_, HistoryError>>()?;
    let runs = runs.into_iter().flat_map(|(f, r)| match r.pool.is_empty() {
        true => vec![(f, r)],
        false => r.pool.into_iter().map(|r| (f, r)).collect(),
    });
    for (f, results) in runs {
        let info = imported(&results, a, f);
        history.refuse_stored(&results, &info, f)?;
        if let Some((g, ..)) = loaded.iter().find(|(_, r, _)| *r == results) {
            return Err(HistoryError::Usage(format!(
                "`{}` and `{}` hold one run: import it once (nothing was imported)",
                g.display(),
                f.display()
            )));
        }
        loaded.push((f, results, info));
    }
    for (f, results, info) in loaded {
        let id = history.append(&results, &info)?;
        println!(
            "kernelgate: run {id} ({} trials, commit {}, {}) from {}",
            results.trials.len(),
            short(&info.commit),
            info.when(),
            f.display()
        );
    }
    Ok(0)
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
            let mark = match p.stored.verdict.as_deref() {
                Some("regressed") => 'R',
                _ if p.stored.failed => 'F',
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
        let window = &t.points[t.points.partition_point(|p| p.run < from)..];
        let failures = t.failures.iter().filter(|&&r| r >= from).count();
        if window.is_empty() && failures == 0 {
            continue;
        }
        let [first, latest, change] = span(window, "-");
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
            crate::suggest::joined_or_none(&shifts, ", "),
        ));
    }
    out
}

fn check(
    a: &HistoryArgs,
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
    let found = super::check::check(trends, since, a.max_slowdown);
    let family = found.judged.len();
    let mut regressed = 0;
    for j in &found.judged {
        let v = &j.verdict;
        let words = match v.verdict {
            Verdict::Regressed => "regressed",
            Verdict::Inconclusive => "inconclusive",
            _ => continue,
        };
        regressed += usize::from(v.verdict == Verdict::Regressed);
        let since_run = match j.first_bad == j.latest {
            true => String::new(),
            false => format!(
                "; slow since {} ({} run(s))",
                run_label(&runs[j.first_bad]),
                j.trend
                    .points
                    .iter()
                    .filter(|p| p.run >= j.first_bad)
                    .count()
            ),
        };
        println!(
            "{words}: {} ({}) {} in {} against its {} trailing run(s) at {}: {} (threshold {}; p = {:.1e} after Benjamini–Hochberg over {family} trend(s)){since_run}",
            j.trend.label(),
            j.trend.device,
            duration(j.trend.points.iter().find(|p| p.run == j.latest).map_or(f64::NAN, |p| p.median)),
            run_label(&runs[j.latest]),
            j.window.len(),
            duration(j.level),
            crate::report::terminal::verdict_change(v),
            percent(1.0 + j.threshold),
            v.shown().p_adjusted,
        );
    }
    let from = runs.get(since).map(run_label).unwrap_or_default();
    let too_few = match found.too_few.len() {
        0 => String::new(),
        n => format!(
            "; {n} trend(s) with fewer than {} runs before their latest not judged",
            super::check::MIN_TRAILING_RUNS
        ),
    };
    if regressed == 0 {
        println!(
            "kernelgate: no drift since {from}: the latest run of {family} trend(s) (a trial and regime each) within its trailing runs by the gate's rule{too_few}"
        );
        Ok(0)
    } else {
        println!(
            "kernelgate: {regressed} of {family} trend(s) regressed in their latest run against the runs before it since {from}{too_few}"
        );
        Ok(crate::exit::DRIFT)
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
                    stored: crate::history::Point {
                        // As the history stores it: the verdict's word.
                        verdict: v.map(|v| v.to_string()),
                        failed: v.is_some_and(|v| v.fails(crate::gate::Strictness::default())),
                        ..Default::default()
                    },
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
