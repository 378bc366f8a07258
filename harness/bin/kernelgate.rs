//! `kernelgate`: the command-line tool.
//!
//! ```text
//! kernelgate run [LIBTEST ARGS]        run the suites, as `cargo test --test perf` does
//! kernelgate compare OLD.json NEW.json the gate between two results files (KERNELGATE_RESULTS)
//! kernelgate lint                      validate every suite and compile every kernel (no GPU)
//! kernelgate merge OUT.json IN.json... join the results files of shards
//! kernelgate report RESULTS.json... --html OUT.html
//!                                      the HTML report of results files (no GPU)
//! kernelgate history [import FILES... | FILTER | --check [--since REV]]
//!                                      the run history in SQLite: trends and drift
//! kernelgate calibrate [--reps N] [--out FILE.md]
//!                                      accuracy, sensitivity and cost, measured on a GPU
//! ```

use std::process::ExitCode;

const USAGE: &str =
    "usage: kernelgate run [libtest args: FILTER, --list, --exact, --ignored, --format json]";

fn main() -> ExitCode {
    let mut args = std::env::args();
    let program = args.next().unwrap_or_else(|| "kernelgate".into());
    if std::env::var_os(kernelgate::worker::client::WORKER_ENV).is_some() {
        return kernelgate::main();
    }
    match args.next().as_deref() {
        Some("run") => kernelgate::runner::run(std::iter::once(program).chain(args)),
        Some("compare") => {
            let files: Vec<String> = args.collect();
            match files.as_slice() {
                [old, new] => ExitCode::from(kernelgate::report::compare::command(
                    old.as_ref(),
                    new.as_ref(),
                )),
                _ => {
                    eprintln!("error: compare takes two results files\n{USAGE}");
                    ExitCode::from(kernelgate::report::compare::EXIT_BAD_INPUT)
                }
            }
        }
        Some("lint") => kernelgate::runner::lint::lint(),
        // issue 12: the HTML report and the run history.
        Some("report") => kernelgate::html::command(&args.collect::<Vec<_>>()),
        Some("history") => kernelgate::history::command(&args.collect::<Vec<_>>()),
        Some("calibrate") => kernelgate::runner::calibrate::calibrate(&args.collect::<Vec<_>>()),
        Some("merge") => {
            let files: Vec<std::path::PathBuf> = args.map(Into::into).collect();
            match files.split_first() {
                Some((out, inputs)) if !inputs.is_empty() => {
                    ExitCode::from(kernelgate::report::merge::command(out, inputs))
                }
                _ => {
                    eprintln!("error: merge takes the output file, then the results files to join\n{USAGE}");
                    ExitCode::from(kernelgate::runner::EXIT_BAD_INPUT)
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
            ExitCode::from(kernelgate::runner::EXIT_BAD_INPUT)
        }
    }
}
