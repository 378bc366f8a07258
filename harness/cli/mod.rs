//! `main`: the `kernelgate` command line — `run`, `lint`, `compare`, `merge`, `calibrate`, `sass`,
//! `bisect` — one module per command. The runner knows nothing of them.
//!
//! ```text
//! kernelgate run [LIBTEST ARGS]        run the suites, as `cargo test --test perf` does
//! kernelgate compare [--all] [--allow-device] OLD.json NEW.json
//!                                      the gate between two results files (KERNELGATE_RESULTS)
//! kernelgate lint [FILE...]            validate every suite and compile every kernel (no GPU),
//!                                      or check the files named
//! kernelgate merge OUT.json IN.json... join the results files of shards
//! kernelgate baselines join OUT IN...  join the baselines folders of several runners
//! kernelgate report RESULTS.json... --html OUT.html
//!                                      the HTML report of results files (no GPU)
//! kernelgate history [import FILES... | FILTER | --check [--since REV]]
//!                                      the run history in SQLite: trends and drift
//! kernelgate calibrate [--reps N] [--out FILE.md] [--suites DIR]
//!                                      accuracy, sensitivity and cost, measured on a GPU
//! kernelgate sass [FILTER] [--json] [--base REV]
//!                                      the kernels' SASS, code identities, what changed (no GPU)
//! kernelgate bisect GOOD BAD TRIAL     the first commit at which a trial regressed (GPU)
//! kernelgate help <command>            what a command does (also `<command> --help`)
//! ```
//!
//! **The parser** is `clap` (derive), chosen in issue 21 and moved to in issue 20: one
//! definition per command (`args.rs`, each command's arguments beside its code) gives
//! suggestions for misspelt commands and flags, help generated from the same structs that parse
//! (the prose is `crate::usage`'s), and usage errors with exit code 2. `run`'s arguments go to
//! libtest-mimic untouched (a trailing var-arg); harness options stay `KERNELGATE_*` variables
//! (the perf binary is not parsed by clap at all).

mod args;
pub mod baselines;
mod binaries;
pub mod bisect;
pub mod calibrate;
pub mod compare;
pub mod init;
pub mod limits;
pub mod lint;
pub mod merge;
mod progress;
pub mod run;
pub mod sass;
mod suites;

pub use args::{Cli, Command};

use crate::exit;
use clap::{CommandFactory, Parser};
use std::process::ExitCode;

/// The `kernelgate` binary's entry point: a panic in any command is a harness error, exit 2
/// ([`exit::guard`]).
pub fn main() -> ExitCode {
    exit::guard(command)
}

fn command() -> ExitCode {
    crate::device::libraries::ensure();
    let mut args = std::env::args();
    let program = args.next().unwrap_or_else(|| "kernelgate".into());
    if std::env::var_os(crate::worker::client::WORKER_ENV).is_some() {
        return run::main();
    }
    let cli = match Cli::try_parse_from(std::iter::once(program.clone()).chain(args)) {
        Ok(cli) => cli,
        // `--help`, `--version` (exit 0) and usage errors (exit 2, with a suggestion).
        Err(e) => {
            let _ = e.print();
            return exit::code(e.exit_code().clamp(0, 255) as u8);
        }
    };
    // Every command, not only those that read the harness's options: a misspelt
    // `KERNELGATE_HISTORY` would make `history` look elsewhere without a word.
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    if let Err(e) = crate::config::unknown_variable(names.iter().map(String::as_str)) {
        return exit::bad_input(e);
    }
    match cli.command {
        Command::Run { args } if matches!(args.as_slice(), [h] if h == "--help" || h == "-h") => {
            let mut cli = Cli::command();
            let help = cli.find_subcommand_mut("run").map(|c| c.render_long_help());
            println!("{}", help.map(|h| h.to_string()).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Command::Run { args } => {
            let launcher = format!("{} run", crate::shell::shell_word(&program));
            run::run(std::iter::once(program).chain(args), Some(launcher))
        }
        Command::Lint { files, launches } => match launches {
            Some(filter) => lint::launches(&filter),
            None => lint::lint(&files),
        },
        Command::Init(a) => init::init(&a),
        Command::Compare(a) => compare::command(&a),
        Command::Merge { out, inputs } => merge::command(&out, &inputs),
        Command::Baselines(a) => baselines::command(&a),
        Command::Report(a) => crate::html::command(&a),
        Command::History(a) => crate::history::command(&a),
        Command::Calibrate(a) => calibrate::calibrate(&a),
        Command::Sass(a) => sass::sass(&a),
        Command::Bisect(a) => bisect::bisect_command(&a),
    }
}
