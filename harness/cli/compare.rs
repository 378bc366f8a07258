//! `kernelgate compare [--all] [--allow-device] [--json] OLD.json NEW.json`: the gate between
//! two results files, as a table of the trials that changed and every trial that failed in NEW.

use crate::exit;
use crate::gate::Verdict;
use crate::report::compare::{compare, failure, markdown_table, mismatches, table, Mismatch, Row};
use crate::report::results::Results;
use std::path::PathBuf;
use std::process::ExitCode;

/// The command line of `kernelgate compare`.
#[derive(Debug, Default, PartialEq, clap::Args)]
pub struct Args {
    /// The older results file
    #[arg(value_name = "OLD.json")]
    old: PathBuf,
    /// The newer results file
    #[arg(value_name = "NEW.json")]
    new: PathBuf,
    /// List every trial, unchanged and unmeasured ones too
    #[arg(long)]
    all: bool,
    /// Compare files from different devices (otherwise exit 2)
    #[arg(long)]
    allow_device: bool,
    /// Print the comparison as JSON (every trial, the counts and the exit code)
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the comparison as Markdown (for a pull-request comment)
    #[arg(long)]
    markdown: bool,
}

/// How a file introduces itself in the header: its path, where the run came from, its mode.
fn describe(label: &str, path: &std::path::Path, r: &Results) -> String {
    let from = r
        .provenance
        .recorded()
        .unwrap_or_else(|| "no commit recorded".into());
    format!("{label}: {} ({from}; {})", path.display(), r.mode())
}

/// The counts of the closing line (and of `--json`).
#[derive(Debug, serde::Serialize)]
struct Summary {
    compared: usize,
    regressed: usize,
    improved: usize,
    inconclusive: usize,
    unchanged: usize,
    /// Of the inconclusive ones, those on the threshold; of the unchanged, those within it.
    on_threshold: usize,
    within_threshold: usize,
    /// Trials that failed in NEW, whatever OLD says of them.
    failed_in_new: usize,
    /// The exit code.
    exit_code: u8,
}

fn summary(rows: &[Row], code: u8) -> Summary {
    let count = |keep: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| keep(r)).count();
    let verdicts = |v: Verdict| count(&|r| r.verdict.is_some_and(|x| x.verdict == v));
    let words = |w: &str| count(&|r| r.words == Some(w));
    Summary {
        compared: count(&|r| r.verdict.is_some()),
        regressed: verdicts(Verdict::Regressed),
        improved: verdicts(Verdict::Improved),
        inconclusive: verdicts(Verdict::Inconclusive),
        unchanged: verdicts(Verdict::Unchanged),
        on_threshold: words("on the threshold"),
        within_threshold: words("within threshold"),
        failed_in_new: count(&|r| r.failed.is_some()),
        exit_code: code,
    }
}

/// The `kernelgate compare` command: prints the table (or `--json`); returns the exit code —
/// NEW's own failure class: 101 where a trial failed correctness in NEW, 1 for a regression
/// (found by the comparison, or NEW's own), 2 for a harness error or unusable input.
pub fn command(a: &Args) -> ExitCode {
    let (old, new) = match (Results::load(&a.old), Results::load(&a.new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => return exit::bad_input(e),
    };
    let sides = [(&a.old, &old), (&a.new, &new)];
    if let Some((path, _)) = sides.iter().find(|(_, r)| !r.pool.is_empty()) {
        return exit::bad_input(format!("`{}` is a pool of GPU models: compare one device's run (`kernelgate merge` its own files)", path.display()));
    }
    let mismatches = mismatches(&old, &new);
    if let Some(m) = mismatches
        .iter()
        .find(|m| matches!(m, Mismatch::Device { .. }) && !a.allow_device)
    {
        return exit::bad_input(m);
    }
    let rows = compare(&old, &new);
    let code = failure(&new, &rows).map_or(exit::SUCCESS, |k| k.exit_code());
    let summary = summary(&rows, code);
    if a.json {
        let json = serde_json::json!({
            "old": { "file": a.old, "from": old.provenance.recorded(), "mode": old.mode() },
            "new": { "file": a.new, "from": new.provenance.recorded(), "mode": new.mode() },
            "warnings": mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            "trials": rows,
            "summary": summary,
        });
        println!("{json:#}");
        return exit::code(code);
    }
    let shown: Vec<_> = rows.iter().filter(|r| a.all || r.changed()).collect();
    // Markdown: a heading, a line break after OLD, and a paragraph after NEW and each warning.
    let (line_break, paragraph, warning) = match a.markdown {
        true => ("  ", "\n", "> **warning**: "),
        false => ("", "", "warning: "),
    };
    if a.markdown {
        println!("## kernelgate compare\n");
    }
    println!("{}{line_break}", describe("OLD", &a.old, &old));
    println!("{}{paragraph}", describe("NEW", &a.new, &new));
    for m in &mismatches {
        println!("{warning}{m}{paragraph}");
    }
    match (shown.is_empty(), a.markdown) {
        (true, _) => println!("no trial changed"),
        (false, false) => print!("{}", table(&shown)),
        (false, true) => println!("{}", markdown_table(&shown)),
    }
    let hidden = rows.len() - shown.len();
    let s = &summary;
    // Each note only where its count is not 0.
    let some = |n: usize, text: String| if n > 0 { text } else { String::new() };
    let (on, within, failed) = (s.on_threshold, s.within_threshold, s.failed_in_new);
    let on = some(on, format!(" ({on} on the threshold)"));
    let within = some(within, format!(" ({within} within threshold)"));
    let failed = some(failed, format!("; {failed} trial(s) FAILED in NEW"));
    let not_shown = some(
        hidden,
        format!("; {hidden} trial(s) that did not change not shown (`--all` lists them)"),
    );
    println!(
        "{} compared: {} regressed, {} improved, {} inconclusive{on}, {} unchanged{within}{failed}{not_shown}",
        s.compared, s.regressed, s.improved, s.inconclusive, s.unchanged
    );
    exit::code(code)
}
