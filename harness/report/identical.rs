//! `lines`: a paired run's identical-code trials in words — how many were skipped, the GPU
//! time saved (an estimate, and from what) and, under `KERNELGATE_TIME_IDENTICAL=1`, the largest
//! change the A/A pairs measured — the same lines in the terminal, Markdown, HTML and JUnit.

use super::duration;
use super::results::Identical;
use super::terminal::change;

/// A paired run's identical-code trials in words: `57 trial(s) skipped as identical code (not
/// timed, correctness not run: the base passed it), about 41.20 s of GPU time saved (an
/// estimate, from ...)`, and under `KERNELGATE_TIME_IDENTICAL=1` the noise the A/A pairs
/// measured. Every report says it with these lines.
pub fn lines(i: &Identical) -> Vec<String> {
    let mut out = Vec::new();
    if i.skipped == 0 && i.timed == 0 {
        out.push("no trial skipped as identical code".into());
    }
    if i.skipped > 0 {
        let saved = match (i.saved_seconds, i.saved_from) {
            (Some(s), Some(from)) => format!(
                ", about {} of GPU time saved (an estimate, from {})",
                duration(s),
                from.words()
            ),
            _ => ", time saved unknown (no trial time recorded to estimate it from)".into(),
        };
        out.push(format!(
            "{} trial(s) skipped as identical code (not timed, correctness not run: the base passed it){saved}",
            i.skipped
        ));
    }
    if i.timed > 0 {
        let noise = match &i.noise {
            Some(n) => format!(
                ": largest change {} ({}), the run's measured noise; as a family of their own the gate would call {} regressed, {} improved",
                change(&n.change),
                n.trial,
                n.regressed,
                n.improved
            ),
            None => String::new(),
        };
        out.push(format!(
            "{} identical-code pair(s) timed anyway (KERNELGATE_TIME_IDENTICAL=1, an A/A test){noise}",
            i.timed
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Comparison;
    use crate::report::results::{Noise, SavedFrom};

    #[test]
    fn the_lines_say_what_was_skipped_and_how_the_time_was_estimated() {
        let i = Identical {
            skipped: 57,
            timed: 0,
            saved_seconds: Some(41.2),
            saved_from: Some(SavedFrom::ThisRun),
            noise: None,
        };
        assert_eq!(
            lines(&i),
            ["57 trial(s) skipped as identical code (not timed, correctness not run: the base passed it), about 41.20 s of GPU time saved (an estimate, from the time per trial this run took to time the others)"]
        );
        let unknown = Identical {
            skipped: 3,
            ..Default::default()
        };
        assert!(lines(&unknown)[0]
            .ends_with("time saved unknown (no trial time recorded to estimate it from)"));
        assert_eq!(
            lines(&Identical::default()),
            ["no trial skipped as identical code"]
        );
        let timed = Identical {
            timed: 57,
            noise: Some(Noise {
                trial: "saxpy::vec4::n=4096".into(),
                change: Comparison {
                    slowdown: 1.012,
                    low: 1.004,
                    high: 1.02,
                    p: 0.01,
                    p_adjusted: 0.3,
                },
                regressed: 0,
                improved: 0,
            }),
            ..Default::default()
        };
        assert_eq!(
            lines(&timed),
            ["57 identical-code pair(s) timed anyway (KERNELGATE_TIME_IDENTICAL=1, an A/A test): largest change +1.2% [+0.4%, +2.0%] (saxpy::vec4::n=4096), the run's measured noise; as a family of their own the gate would call 0 regressed, 0 improved"]
        );
    }
}
