//! `kernelgate compare [--all] [--allow-device] OLD.json NEW.json`: the gate between two
//! results files, as a table of the trials that changed.

use crate::exit;
use crate::gate::Verdict;
use crate::report::compare::{compare, mismatches, table, Mismatch};
use crate::report::results::Results;
use std::path::PathBuf;

/// The command line of `kernelgate compare`.
#[derive(Debug, Default, PartialEq)]
struct Args {
    old: PathBuf,
    new: PathBuf,
    all: bool,
    allow_device: bool,
}

/// What is wrong with `kernelgate compare`'s command line.
#[derive(Debug, PartialEq, thiserror::Error)]
enum UsageError {
    /// A flag compare does not know.
    #[error("unknown option `{0}`")]
    UnknownOption(String),
    /// Not exactly two files.
    #[error("compare takes two results files, OLD then NEW ({0} given)")]
    Files(usize),
}

fn parse(args: &[String]) -> Result<Args, UsageError> {
    let mut a = Args::default();
    let mut files: Vec<PathBuf> = Vec::new();
    for arg in args {
        match arg.as_str() {
            "--all" => a.all = true,
            "--allow-device" => a.allow_device = true,
            flag if flag.starts_with("--") => return Err(UsageError::UnknownOption(flag.into())),
            file => files.push(file.into()),
        }
    }
    match <[PathBuf; 2]>::try_from(files) {
        Ok([old, new]) => Ok(Args { old, new, ..a }),
        Err(files) => Err(UsageError::Files(files.len())),
    }
}

/// How a file introduces itself in the header: its path, where the run came from, its mode.
fn describe(label: &str, path: &std::path::Path, r: &Results) -> String {
    let from = match r.provenance.describe() {
        p if r.provenance.commit.is_some() => p,
        _ => "no commit recorded".into(),
    };
    format!("{label}: {} ({from}; {})", path.display(), r.mode())
}

/// The `kernelgate compare` command: prints the table; returns the exit code.
pub fn command(args: &[String]) -> u8 {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "error: {e}\nusage: kernelgate compare [--all] [--allow-device] OLD.json NEW.json"
            );
            return exit::BAD_INPUT;
        }
    };
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
    if regressed > 0 {
        exit::REGRESSED
    } else {
        exit::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let args = |v: &[&str]| parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let a = args(&["--all", "a.json", "b.json", "--allow-device"]).unwrap();
        assert_eq!(
            a,
            Args {
                old: "a.json".into(),
                new: "b.json".into(),
                all: true,
                allow_device: true
            }
        );
        assert_eq!(
            args(&["a.json"]).unwrap_err().to_string(),
            "compare takes two results files, OLD then NEW (1 given)"
        );
        assert_eq!(
            args(&["--every", "a", "b"]).unwrap_err().to_string(),
            "unknown option `--every`"
        );
    }
}
