//! `kernelgate compare OLD.json NEW.json`: the gate between two results files, as a table.

use crate::exit;
use crate::gate::Verdict;
use crate::report::compare::{compare, table};
use crate::report::results::Results;
use std::path::Path;

/// The `kernelgate compare` command: prints the table; returns the exit code.
pub fn command(old: &Path, new: &Path) -> u8 {
    let (old_results, new_results) = match (Results::load(old), Results::load(new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    if old_results.device != new_results.device {
        let describe = |r: &Results| {
            r.device
                .as_ref()
                .map(|d| d.describe())
                .unwrap_or_else(|| "no GPU".into())
        };
        println!(
            "note: the files come from different devices (OLD: {}; NEW: {}): absolute times may differ for that reason alone",
            describe(&old_results),
            describe(&new_results)
        );
    }
    let rows = compare(&old_results, &new_results);
    print!("{}", table(&rows));
    let count = |v: Verdict| {
        rows.iter()
            .filter(|r| r.verdict.is_some_and(|x| x.verdict == v))
            .count()
    };
    let regressed = count(Verdict::Regressed);
    println!(
        "{} compared: {regressed} regressed, {} improved, {} inconclusive, {} unchanged",
        rows.iter().filter(|r| r.verdict.is_some()).count(),
        count(Verdict::Improved),
        count(Verdict::Inconclusive),
        count(Verdict::Unchanged)
    );
    if regressed > 0 {
        exit::REGRESSED
    } else {
        exit::SUCCESS
    }
}
