//! `kernelgate merge OUT.json IN.json...`: joins the results files of shards into one run, and
//! is the gate of a sharded run: its exit code is the run's.

use crate::exit;
use crate::report::merge::{load_all, merge};
use crate::report::results::Status;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `kernelgate merge OUT.json IN.json...` command; returns the exit code: the merged run's
/// (0 passed, 1 a performance failure, 101 a correctness failure, the worst first), or 2 for
/// bad input or a harness failure in a shard.
pub fn command(out: &Path, inputs: &[PathBuf]) -> ExitCode {
    let merged = load_all(inputs)
        .inspect(|l| {
            for (path, r) in l.iter().filter(|(_, r)| r.format < 4) {
                eprintln!(
                    "warning: `{}` is results format {}, which records no shard: a missing shard of its run cannot be named",
                    path.display(),
                    r.format
                );
            }
        })
        .and_then(|l| merge(&l))
        .and_then(|m| m.save(out).map(|_| m));
    match merged {
        Ok(m) => {
            let runs = m.runs();
            let trials = || runs.iter().flat_map(|r| &r.trials);
            let failed = trials().filter(|t| t.status == Status::Failed).count();
            let worst = m.worst_failure();
            let verdict = match worst {
                None => "none failed".to_string(),
                Some(k) => format!("{failed} failed (worst: {})", k.word()),
            };
            let pool = match runs.len() {
                1 => String::new(),
                n => format!(", a pool of {n} GPU models"),
            };
            println!(
                "merged {} trial(s) from {} file(s) into {}{pool}: {verdict}",
                trials().count(),
                inputs.len(),
                out.display()
            );
            for r in &runs {
                let on = match m.pool.is_empty() {
                    true => String::new(),
                    false => format!("on {}: ", r.described_device()),
                };
                let family = r.trials.iter().filter(|t| t.evidence.is_some()).count();
                if family > 0 {
                    println!("{on}decided the shards' {family} compared trial(s) as one family, as one process would");
                }
                if !r.undecided.is_empty() {
                    println!(
                        "{on}{} trial(s) left inconclusive: deciding them as one family needs a re-measure or a fresh-worker confirmation their shard did not make (run them again unsharded): {}",
                        r.undecided.len(),
                        r.undecided.join(", ")
                    );
                }
            }
            // A shard stopped before it finished: the run has no verdict on what it left.
            if let Some(why) = &m.provenance.incomplete {
                return exit::bad_input(format!("the run is incomplete: {why}"));
            }
            exit::code(worst.map_or(exit::SUCCESS, |k| k.exit_code()))
        }
        Err(e) => exit::bad_input(e),
    }
}
