//! `Args`: `kernelgate-lab calibrate`'s command line — `--reps N`, `--out FILE.md`,
//! `--durations LIST` — as clap parses it (misspelt flags get a suggestion).

use kernelgate::usage::{positive_count, BadValue};
use std::path::PathBuf;

/// `kernelgate-lab calibrate`'s command line.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct Args {
    /// Repetitions per level
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = positive_count)]
    pub reps: usize,
    /// Also write the report there
    #[arg(long, value_name = "FILE.md")]
    pub out: Option<PathBuf>,
    /// Sensitivity kernel durations, up to 1 s each (seconds once parsed)
    #[arg(long, value_name = "LIST", default_value = "5us,20us,100us,1ms", value_parser = durations)]
    pub durations: Durations,
}

/// Sensitivity kernel durations, seconds (`--durations 5us,1ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct Durations(pub Vec<f64>);

fn durations(text: &str) -> Result<Durations, BadValue> {
    text.split(',')
        .map(|d| parse_duration(d).ok_or_else(|| BadValue::Duration(d.into())))
        .collect::<Result<_, _>>()
        .map(Durations)
}

/// Parses `5us`, `20µs`, `1ms`, `500ns`, `0.001s` as seconds.
fn parse_duration(text: &str) -> Option<f64> {
    let t = text.trim();
    // Divided, not multiplied: `20.0 / 1e6` is exactly the literal `20e-6`.
    let (number, per_second) = [
        ("ns", 1e9),
        ("us", 1e6),
        ("µs", 1e6),
        ("ms", 1e3),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|(unit, per)| t.strip_suffix(unit).map(|n| (n, *per)))?;
    let seconds = number.trim().parse::<f64>().ok()? / per_second;
    (seconds.is_finite() && seconds > 0.0 && seconds <= 1.0).then_some(seconds)
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
        assert_eq!((a.reps, a.out), (20, None));
        assert_eq!(a.durations.0, [5e-6, 20e-6, 100e-6, 1e-3]);
        let a = args(&["--reps", "5", "--out", "c.md", "--durations", "5us,1ms"]).unwrap();
        assert_eq!(a.reps, 5);
        assert_eq!(a.out, Some(PathBuf::from("c.md")));
        assert_eq!(a.durations.0, [5e-6, 1e-3]);
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
        assert!(msg(&["--durations", "5us,fast"]).contains("`fast` is not a duration"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5us"), Some(5e-6));
        assert_eq!(parse_duration("20µs"), Some(20e-6));
        assert_eq!(parse_duration(" 1ms "), Some(1e-3));
        assert_eq!(parse_duration("500ns"), Some(500e-9));
        assert_eq!(parse_duration("0.5s"), Some(0.5));
        assert_eq!(
            parse_duration("2s"),
            None,
            "longer than a second is not a kernel to spin"
        );
        assert_eq!(parse_duration("-1us"), None);
        assert_eq!(parse_duration("5"), None, "a unit is required");
    }
}
