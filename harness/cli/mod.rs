//! `main`: the `kernelgate` command line — `run`, `lint`, `compare`, `merge`, `calibrate` — one
//! module per command. The runner knows nothing of them.
//!
//! ```text
//! kernelgate run [LIBTEST ARGS]        run the suites, as `cargo test --test perf` does
//! kernelgate compare OLD.json NEW.json the gate between two results files (KERNELGATE_RESULTS)
//! kernelgate lint                      validate every suite and compile every kernel (no GPU)
//! kernelgate merge OUT.json IN.json... join the results files of shards
//! kernelgate calibrate [--reps N] [--out FILE.md]
//!                                      accuracy, sensitivity and cost, measured on a GPU
//! ```

pub mod calibrate;
pub mod compare;
pub mod lint;
pub mod merge;
pub mod run;

use crate::exit;
use std::process::ExitCode;

const USAGE: &str =
    "usage: kernelgate run [libtest args: FILTER, --list, --exact, --ignored, --format json]";

/// The `kernelgate` binary's entry point.
pub fn main() -> ExitCode {
    let mut args = std::env::args();
    let program = args.next().unwrap_or_else(|| "kernelgate".into());
    if std::env::var_os(crate::worker::client::WORKER_ENV).is_some() {
        return run::main();
    }
    match args.next().as_deref() {
        Some("run") => run::run(std::iter::once(program).chain(args)),
        Some("compare") => {
            let files: Vec<String> = args.collect();
            match files.as_slice() {
                [old, new] => exit::code(compare::command(old.as_ref(), new.as_ref())),
                _ => {
                    eprintln!("error: compare takes two results files\n{USAGE}");
                    exit::code(exit::BAD_INPUT)
                }
            }
        }
        Some("lint") => lint::lint(),
        Some("calibrate") => calibrate::calibrate(&args.collect::<Vec<_>>()),
        Some("merge") => {
            let files: Vec<std::path::PathBuf> = args.map(Into::into).collect();
            match files.split_first() {
                Some((out, inputs)) if !inputs.is_empty() => {
                    exit::code(merge::command(out, inputs))
                }
                _ => {
                    eprintln!("error: merge takes the output file, then the results files to join\n{USAGE}");
                    exit::code(exit::BAD_INPUT)
                }
            }
        }
        Some("-h") | Some("--help") | Some("help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            eprintln!(
                "error: unknown command {}\n{USAGE}",
                other
                    .map(|o| format!("`{o}`"))
                    .unwrap_or_else(|| "(none)".into())
            );
            exit::code(exit::BAD_INPUT)
        }
    }
}
