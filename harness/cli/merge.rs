//! `kernelgate merge OUT.json IN.json...`: joins the results files of shards.

use crate::exit;
use crate::report::merge::merge;
use crate::report::results::Results;
use crate::report::results_file::ResultsError;
use std::path::{Path, PathBuf};

/// The `kernelgate merge OUT.json IN.json...` command; returns the exit code (0, or 2 for
/// bad input).
pub fn command(out: &Path, inputs: &[PathBuf]) -> u8 {
    let loaded: Result<Vec<Results>, ResultsError> =
        inputs.iter().map(|p| Results::load(p)).collect();
    let merged = loaded
        .and_then(|l| merge(&l))
        .and_then(|m| m.save(out).map(|_| m));
    match merged {
        Ok(m) => {
            println!(
                "merged {} trial(s) from {} file(s) into {}",
                m.trials.len(),
                inputs.len(),
                out.display()
            );
            exit::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}
