//! `Cli`: the `kernelgate` command line, one clap definition per command — the commands, their
//! flags and arguments, and the help generated from the same structs that parse (the prose
//! under each is `crate::usage`'s). A misspelt command or flag gets clap's "a similar ... exists"
//! (`kernelgate --verison` → `--version`, `kernelgate comapre` → `compare`), and a usage error
//! exits 2, as every bad input does. `run`'s arguments go to libtest-mimic untouched.

use super::{bisect, calibrate, compare, sass};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The `kernelgate` command line.
#[derive(Debug, Parser)]
#[command(
    name = "kernelgate",
    version,
    about = "kernelgate: benchmark-regression tests for CUDA kernels",
    after_help = crate::usage::AFTER,
    arg_required_else_help = true
)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// One command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the suites, as `cargo test --test perf` does
    #[command(long_about = crate::usage::RUN, disable_help_flag = true)]
    Run {
        /// libtest's arguments: FILTER, --list, --exact, --ignored, --format json, ...
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "LIBTEST ARGS"
        )]
        args: Vec<String>,
    },
    /// Validate every suite and baseline and compile every kernel (no GPU); or check FILEs
    #[command(long_about = crate::usage::LINT)]
    Lint {
        /// Suite, .npy, results, baseline or history files to check instead
        #[arg(value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print each case's resolved launches instead — grid, block, dynamic shared memory and
        /// arguments — of the trials whose name contains FILTER (every trial without one)
        #[arg(long, value_name = "FILTER", num_args = 0..=1, default_missing_value = "")]
        launches: Option<String>,
    },
    /// The gate between two results files (KERNELGATE_RESULTS)
    #[command(long_about = crate::usage::COMPARE)]
    Compare(compare::Args),
    /// Join the results files of shards
    #[command(long_about = crate::usage::MERGE)]
    Merge {
        /// The merged file to write
        #[arg(value_name = "OUT.json")]
        out: PathBuf,
        /// The shards' results files
        #[arg(required = true, value_name = "IN.json")]
        inputs: Vec<PathBuf>,
    },
    /// Join the baselines folders several runners blessed into one (no GPU)
    #[command(long_about = crate::usage::BASELINES, subcommand)]
    Baselines(super::baselines::Action),
    /// The HTML report and Markdown summary of results files (no GPU)
    #[command(long_about = crate::usage::REPORT)]
    Report(crate::html::ReportArgs),
    /// The run history in SQLite: trends in commit order, drift
    #[command(long_about = crate::usage::HISTORY)]
    History(crate::history::HistoryArgs),
    /// Accuracy, false alarms, sensitivity and cost, on a GPU
    #[command(long_about = crate::usage::CALIBRATE)]
    Calibrate(calibrate::Args),
    /// The kernels' SASS and code identities; with --base, what changed (no GPU)
    #[command(long_about = crate::usage::SASS)]
    Sass(sass::Request),
    /// Set kernelgate up in an existing repository: project file, baselines, CI, a first suite
    #[command(long_about = crate::usage::INIT)]
    Init(super::init::Args),
    /// The first commit at which a trial regressed against GOOD (GPU)
    #[command(long_about = crate::usage::BISECT)]
    Bisect(bisect::Args),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(args: &[&str]) -> String {
        let e = Cli::try_parse_from(std::iter::once("kernelgate").chain(args.iter().copied()))
            .unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    }

    #[test]
    fn misspelt_commands_and_flags_get_a_suggestion() {
        let e = error(&["--verison"]);
        assert!(
            e.contains("'--verison'") && e.contains("'--version'"),
            "{e}"
        );
        let e = error(&["comapre", "a.json", "b.json"]);
        assert!(e.contains("'comapre'") && e.contains("'compare'"), "{e}");
        let e = error(&["compare", "--al", "a.json", "b.json"]);
        assert!(e.contains("'--all'"), "{e}");
        let e = error(&["history", "--chek"]);
        assert!(e.contains("'--check'"), "{e}");
        let e = error(&["history", "import", "r.json", "--mode", "pared"]);
        assert!(e.contains("'paired'"), "{e}");
        let e = error(&["sass", "--jsn"]);
        assert!(e.contains("'--json'"), "{e}");
        let e = error(&["calibrate", "--rep", "3"]);
        assert!(e.contains("'--reps'"), "{e}");
        let e = error(&["report", "r.json", "--htm", "o.html"]);
        assert!(e.contains("'--html'"), "{e}");
        let e = error(&["bisetc", "v1", "HEAD", "t"]);
        assert!(e.contains("'bisect'"), "{e}");
    }

    #[test]
    fn run_takes_libtest_arguments_untouched() {
        let parse = |args: &[&str]| match Cli::try_parse_from(
            std::iter::once("kernelgate").chain(args.iter().copied()),
        )
        .unwrap()
        .command
        {
            Command::Run { args } => args,
            other => panic!("{other:?}"),
        };
        assert_eq!(parse(&["run", "--", "--list"]), ["--list"]);
        assert_eq!(
            parse(&["run", "saxpy", "--exact", "--format", "json"]),
            ["saxpy", "--exact", "--format", "json"]
        );
        assert_eq!(parse(&["run", "--ignored"]), ["--ignored"]);
        assert_eq!(parse(&["run", "--help"]), ["--help"]);
        let history = Cli::try_parse_from(["kernelgate", "history", "saxpy", "--last", "3"]);
        assert!(history.is_ok(), "{history:?}");
        assert!(error(&["history", "--last", "0"]).contains("not a positive count"));
        assert!(error(&["merge", "out.json"]).contains("IN.json"));
        // bisect: three arguments, no option.
        let bisect =
            Cli::try_parse_from(["kernelgate", "bisect", "v1", "HEAD", "saxpy::vec4::n=4096"]);
        assert!(
            matches!(
                bisect,
                Ok(Cli {
                    command: Command::Bisect(_)
                })
            ),
            "{bisect:?}"
        );
        let e = error(&["bisect", "v1", "HEAD"]);
        assert!(e.contains("<TRIAL>"), "{e}");
        let e = error(&["bisect", "--good", "v1", "HEAD", "t"]);
        assert!(e.contains("'--good'"), "{e}");
        let e = error(&["sass", "--json", "--base", "HEAD~1"]);
        assert!(e.contains("cannot be used with"), "{e}");
    }

    #[test]
    fn every_command_has_its_help() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        let names: Vec<String> = cli
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        for name in [
            "run",
            "lint",
            "compare",
            "merge",
            "report",
            "history",
            "calibrate",
            "sass",
            "bisect",
        ] {
            assert!(names.iter().any(|n| n == name), "{name}");
        }
        let help = |cli: &mut clap::Command, name: &str| {
            cli.find_subcommand_mut(name)
                .unwrap()
                .render_long_help()
                .to_string()
        };
        let history = help(&mut cli, "history");
        for option in [
            "--last",
            "--db",
            "--html",
            "--check",
            "--since",
            "--max-slowdown",
        ] {
            assert!(history.contains(option), "`help history` omits {option}");
        }
        let compare = help(&mut cli, "compare");
        assert!(
            compare.contains("--allow-device")
                && compare.contains("101: a trial failed correctness in NEW")
        );
        assert!(help(&mut cli, "merge").contains("101: a correctness failure"));
        assert!(help(&mut cli, "run").contains("KERNELGATE_REQUIRE_GPU=1"));
        assert!(help(&mut cli, "bisect").contains("KERNELGATE_BLESS are refused"));
    }
}
