//! `Args`: `kernelgate calibrate`'s command line — `--reps N`, `--out FILE.md`, `--suites DIR`,
//! `--durations LIST` — parsed, with a usage error for anything else.

use super::error::CalibrateError;
use std::path::PathBuf;

/// Sensitivity kernel durations by default: graph regime, near the regime boundary, cold.
const DURATIONS: [f64; 4] = [5e-6, 20e-6, 100e-6, 1e-3];

/// The command line, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// Repetitions per level (and per A/A trial with `--suites`).
    pub reps: usize,
    /// Where to write the report too.
    pub out: Option<PathBuf>,
    /// The user's suites folder.
    pub suites: Option<PathBuf>,
    /// Sensitivity kernel durations, seconds.
    pub durations: Vec<f64>,
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

/// Parses the arguments after `calibrate`.
pub fn parse_args(args: &[String]) -> Result<Args, CalibrateError> {
    let mut parsed = Args {
        reps: 20,
        out: None,
        suites: None,
        durations: DURATIONS.to_vec(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| CalibrateError::Usage(format!("`{a}` needs a value")))
        };
        match a.as_str() {
            "--reps" => {
                let v = value()?;
                parsed.reps = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    CalibrateError::Usage(format!("--reps `{v}` is not a positive count"))
                })?;
            }
            "--out" => parsed.out = Some(value()?.into()),
            "--suites" => parsed.suites = Some(value()?.into()),
            "--durations" => {
                let v = value()?;
                parsed.durations = v
                    .split(',')
                    .map(|d| {
                        parse_duration(d).ok_or_else(|| {
                            CalibrateError::Usage(format!(
                                "--durations: `{d}` is not a duration up to 1 s such as 5us or 1ms"
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(CalibrateError::Usage(format!("unknown argument `{a}`"))),
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Args, CalibrateError> {
        parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        let a = args(&[]).unwrap();
        assert_eq!((a.reps, a.out, a.suites), (20, None, None));
        assert_eq!(a.durations, DURATIONS);
        let a = args(&[
            "--reps",
            "5",
            "--out",
            "c.md",
            "--suites",
            "suites",
            "--durations",
            "5us,1ms",
        ])
        .unwrap();
        assert_eq!(a.reps, 5);
        assert_eq!(a.out, Some(PathBuf::from("c.md")));
        assert_eq!(a.suites, Some(PathBuf::from("suites")));
        assert_eq!(a.durations, [5e-6, 1e-3]);
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let msg = |v: &[&str]| args(v).unwrap_err().to_string();
        assert_eq!(msg(&["--reps", "0"]), "--reps `0` is not a positive count (usage: kernelgate calibrate [--reps N] [--out FILE.md] [--suites DIR] [--durations 5us,20us,100us,1ms])");
        assert!(msg(&["--reps"]).starts_with("`--reps` needs a value"));
        assert!(msg(&["--frob"]).starts_with("unknown argument `--frob`"));
        assert!(
            msg(&["--durations", "5us,fast"]).starts_with("--durations: `fast` is not a duration")
        );
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
