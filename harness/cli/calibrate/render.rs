//! `render`: the calibration report's per-trial Markdown table, and the cells and percentages
//! the lab's tables (`kernelgate-lab calibrate`) share. Pure: tested without a GPU.

use super::decide::Cell;

/// `fraction` as a percentage: `3%`, `0.5%`.
pub fn pct(fraction: f64) -> String {
    let p = fraction * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p}%")
    }
}

/// One cell: `flagged/reps`, with what was not decided beside it.
pub fn cell(c: &Cell) -> String {
    let mut s = format!("{}/{}", c.flagged, c.reps);
    let notes: Vec<String> = [
        (c.inconclusive, "inconclusive"),
        (c.unreliable, "unreliable clocks"),
        (c.failed, "failed"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if !notes.is_empty() {
        s.push_str(&format!(" ({})", notes.join(", ")));
    }
    s
}

/// One row of `--suites`' table.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRow {
    /// `suite::kernel::case`.
    pub name: String,
    /// The suite's `max_slowdown`.
    pub max_slowdown: f64,
    /// The A/A counts (timed against itself as base).
    pub aa: Cell,
    /// Rounds of one measurement (median).
    pub rounds: usize,
    /// Smallest injected slowdown detected in ≥ 95% of resamples; `None`: not even 20%.
    pub smallest: Option<f64>,
    /// Whether there were A/A log-ratios to resample.
    pub estimated: bool,
}

/// The table of `--suites`.
pub fn trials(rows: &[TrialRow], reps: usize) -> String {
    let mut t = format!(
        "## Your suites, paired mode\n\nEach trial timed against itself as its base (paired A/A), {reps} times, each time in a fresh worker process; a `regressed` verdict is a false alarm. *Smallest detected* is an **estimate from the measured noise, not a planted kernel slowdown**: the A/A per-round log-ratios, pooled, resampled with replacement (as many rounds as one measurement) and shifted by ln(1 + s) for s = 0.5, 1, 2, 3, 5, 10, 20%, each resample decided as a paired run decides (Wilcoxon signed-rank and Hodges–Lehmann interval at the suite's max_slowdown, an inconclusive one drawn again at 4× the rounds); the smallest s flagged `regressed` in at least 95% of resamples.\n\n| trial | max_slowdown | A/A false alarms | rounds | smallest slowdown detected ≥ 95% (estimate) |\n| --- | --- | --- | --- | --- |\n"
    );
    for r in rows {
        let smallest = match (r.estimated, r.smallest) {
            (false, _) => "n/a (no A/A samples)".to_string(),
            (true, Some(s)) => pct(s),
            (true, None) => "more than 20%".to_string(),
        };
        t.push_str(&format!(
            "| {} | {} | {} | {} | {smallest} |\n",
            r.name,
            pct(r.max_slowdown),
            cell(&r.aa),
            r.rounds
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(reps: usize, flagged: usize, inconclusive: usize) -> Cell {
        Cell {
            reps,
            flagged,
            inconclusive,
            ..Cell::default()
        }
    }

    #[test]
    fn cells_say_what_was_not_decided() {
        assert_eq!(cell(&c(20, 3, 0)), "3/20");
        let mut x = c(20, 1, 2);
        x.failed = 1;
        x.unreliable = 1;
        assert_eq!(
            cell(&x),
            "1/20 (2 inconclusive, 1 unreliable clocks, 1 failed)"
        );
    }

    #[test]
    fn the_trials_table_says_the_estimate_is_an_estimate() {
        let row = |name: &str, smallest, estimated| TrialRow {
            name: name.into(),
            max_slowdown: 0.03,
            aa: c(10, 0, 1),
            rounds: 16,
            smallest,
            estimated,
        };
        let t = trials(
            &[
                row("a::k::n=1", Some(0.05), true),
                row("b::k", None, true),
                row("c::k", None, false),
            ],
            10,
        );
        assert!(
            t.contains("estimate from the measured noise, not a planted kernel slowdown"),
            "{t}"
        );
        assert!(
            t.contains("| a::k::n=1 | 3% | 0/10 (1 inconclusive) | 16 | 5% |"),
            "{t}"
        );
        assert!(
            t.contains("| b::k | 3% | 0/10 (1 inconclusive) | 16 | more than 20% |"),
            "{t}"
        );
        assert!(
            t.contains("| c::k | 3% | 0/10 (1 inconclusive) | 16 | n/a (no A/A samples) |"),
            "{t}"
        );
    }
}
