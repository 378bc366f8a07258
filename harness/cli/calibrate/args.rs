//! `Args`: `kernelgate calibrate`'s command line — `--reps N`, `--out FILE.md`, `--suites DIR`
//! — as clap parses it (misspelt flags get a suggestion).

use crate::usage::positive_count;
use std::path::PathBuf;

/// `kernelgate calibrate`'s command line.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct Args {
    /// Repetitions per A/A trial
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = positive_count)]
    pub reps: usize,
    /// Also write the report there
    #[arg(long, value_name = "FILE.md")]
    pub out: Option<PathBuf>,
    /// Calibrate the suites in DIR instead of the project's
    #[arg(long, value_name = "DIR")]
    pub suites: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Calibrate {
        #[command(flatten)]
        args: Args,
    }

    fn args(v: &[&str]) -> Result<Args, String> {
        Calibrate::try_parse_from(std::iter::once("calibrate").chain(v.iter().copied()))
            .map(|c| c.args)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn arguments() {
        let a = args(&[]).unwrap();
        assert_eq!((a.reps, a.out, a.suites), (20, None, None));
        let a = args(&["--reps", "5", "--out", "c.md", "--suites", "suites"]).unwrap();
        assert_eq!(a.reps, 5);
        assert_eq!(a.out, Some(PathBuf::from("c.md")));
        assert_eq!(a.suites, Some(PathBuf::from("suites")));
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let msg = |v: &[&str]| args(v).unwrap_err();
        assert!(
            msg(&["--reps", "0"]).contains("`0` is not a positive count"),
            "{}",
            msg(&["--reps", "0"])
        );
        assert!(msg(&["--reps"]).contains("a value is required"));
        let e = msg(&["--rep", "3"]);
        assert!(
            e.contains("unexpected argument '--rep'") && e.contains("'--reps'"),
            "{e}"
        );
    }
}
