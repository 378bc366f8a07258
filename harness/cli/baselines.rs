//! `kernelgate baselines join OUT IN...`: the baselines folders several runners blessed (each
//! `KERNELGATE_BLESS=add`) as one folder, every run kept once (`baseline::join`).

use crate::exit;
use std::path::PathBuf;
use std::process::ExitCode;

/// What to do with baselines folders.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Join the baselines folders of several runners into OUT, every run kept once
    Join {
        /// The folder to write (it may be one of the inputs)
        #[arg(value_name = "OUT")]
        out: PathBuf,
        /// The runners' baselines folders
        #[arg(required = true, value_name = "IN")]
        inputs: Vec<PathBuf>,
    },
}

/// Runs `kernelgate baselines ACTION`; returns the exit code.
pub fn command(action: &Action) -> ExitCode {
    let Action::Join { out, inputs } = action;
    match crate::baseline::join::join(out, inputs) {
        Ok(joined) => {
            for (trial, n) in &joined.dropped {
                eprintln!(
                    "warning: `{trial}`: {n} oldest run(s) dropped beyond the {} an entry keeps",
                    crate::baseline::MAX_RUNS
                );
            }
            for (path, trials, runs) in &joined.files {
                println!(
                    "wrote {} ({trials} trial(s), {runs} run(s))",
                    path.display()
                );
            }
            println!(
                "joined {} folder(s) into {}: {} file(s)",
                inputs.len(),
                out.display(),
                joined.files.len()
            );
            exit::code(exit::SUCCESS)
        }
        Err(e) => exit::bad_input(e),
    }
}
