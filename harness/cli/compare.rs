//! `kernelgate compare [--all] [--allow-device] OLD.json NEW.json`: the gate between two
//! results files, as a table of the trials that changed.

use crate::exit;
use crate::gate::{Strictness, Verdict};
use crate::report::compare::{compare, mismatches, table, Mismatch};
use crate::report::results::Results;
use std::path::PathBuf;

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
}

/// How a file introduces itself in the header: its path, where the run came from, its mode.
fn describe(label: &str, path: &std::path::Path, r: &Results) -> String {
    let from = r
        .provenance
        .recorded()
        .unwrap_or_else(|| "no commit recorded".into());
    format!("{label}: {} ({from}; {})", path.display(), r.mode())
}

/// The `kernelgate compare` command: prints the table; returns the exit code.
pub fn command(a: &Args) -> u8 {
    let (old, new) = match (Results::load(&a.old), Results::load(&a.new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    println!("{}", describe("OLD", &a.old, &old));
    println!("{}", describe("NEW", &a.new, &new));
    for m in mismatches(&old, &new) {
        match m {
            Mismatch::Device { .. } if !a.allow_device => {
                eprintln!("error: {m}");
                return exit::BAD_INPUT;
            }
            m => println!("warning: {m}"),
        }
    }
    let rows = compare(&old, &new);
    let shown: Vec<_> = rows.iter().filter(|r| a.all || r.changed()).collect();
    if shown.is_empty() {
        println!("no trial changed");
    } else {
        print!("{}", table(&shown));
    }
    let count = |v: Verdict| {
        rows.iter()
            .filter(|r| r.verdict.is_some_and(|x| x.verdict == v))
            .count()
    };
    let regressed = count(Verdict::Regressed);
    let hidden = rows.len() - shown.len();
    println!(
        "{} compared: {regressed} regressed, {} improved, {} inconclusive, {} unchanged{}",
        rows.iter().filter(|r| r.verdict.is_some()).count(),
        count(Verdict::Improved),
        count(Verdict::Inconclusive),
        count(Verdict::Unchanged),
        if hidden > 0 {
            format!("; {hidden} trial(s) that did not change not shown (`--all` lists them)")
        } else {
            String::new()
        }
    );
    // Two results files are compared with the gate's own tests: the verdicts a plain run fails.
    let fails = |v: &crate::gate::TrialVerdict| v.verdict.fails(Strictness::default());
    if rows.iter().any(|r| r.verdict.as_ref().is_some_and(fails)) {
        exit::REGRESSED
    } else {
        exit::SUCCESS
    }
}
