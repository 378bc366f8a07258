//! `render`: the lab calibration report's Markdown — the sensitivity table of each mode (rows:
//! kernel duration × planted slowdown; columns: `max_slowdown`) and the cost per verdict.
//! Pure: tested without a GPU.

use kernelgate::cli::calibrate::decide::Cell;
use kernelgate::cli::calibrate::measure::Cost;
use kernelgate::cli::calibrate::render::{cell, pct};
use kernelgate::report::duration;

/// One kernel duration of the sensitivity tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// What it was sized for, seconds.
    pub target: f64,
    /// Its baseline median, seconds.
    pub median: f64,
    /// The regime pinned for every measurement of it.
    pub regime: kernelgate::measure::Regime,
}

/// One mode's counts: `cells[kernel][level][threshold]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// `stored` or `paired`.
    pub mode: &'static str,
    /// How the mode was measured, one sentence.
    pub how: String,
    /// The counts.
    pub cells: Vec<Vec<Vec<Cell>>>,
    /// Its cost.
    pub cost: Cost,
}

/// The table of one mode.
pub fn sensitivity(
    s: &Sensitivity,
    kernels: &[Kernel],
    levels: &[i64],
    thresholds: &[f64],
) -> String {
    let mut t = format!("## Sensitivity, {} mode\n\n{}\n\n", s.mode, s.how);
    t.push_str("| kernel | slowdown |");
    for th in thresholds {
        t.push_str(&format!(" max_slowdown {} |", pct(*th)));
    }
    t.push_str("\n| --- | --- |");
    t.push_str(&" --- |".repeat(thresholds.len()));
    t.push('\n');
    for (k, kernel) in kernels.iter().enumerate() {
        for (l, level) in levels.iter().enumerate() {
            let name = format!(
                "~{} ({}, {})",
                duration(kernel.target),
                duration(kernel.median),
                kernel.regime
            );
            let what = match level {
                0 => "0% (A/A)".to_string(),
                _ => format!("{level}%"),
            };
            t.push_str(&format!("| {name} | {what} |"));
            let row = s.cells.get(k).and_then(|c| c.get(l));
            let c = |th| row.and_then(|r| r.get(th)).cloned().unwrap_or_default();
            t.extend((0..thresholds.len()).map(|th| format!(" {} |", cell(&c(th)))));
            t.push('\n');
        }
    }
    t
}

/// The cost of a verdict in each mode, and paired's over stored.
pub fn cost(stored: &Cost, paired: &Cost) -> String {
    let line = |name: &str, c: &Cost| {
        format!(
            "| {name} | {} | {} | {} | {} | {} |\n",
            duration(c.per_verdict()),
            c.verdicts,
            c.remeasures,
            c.confirmations,
            duration(c.seconds)
        )
    };
    let mut t = String::from("## Cost per verdict\n\nWall time of the measurements (check, sample, the re-measures an inconclusive trial asked for and the fresh-worker confirmations of a change, as a run makes them; not worker start-up), per verdict.\n\n| mode | per verdict | verdicts | re-measures | confirmations | total |\n| --- | --- | --- | --- | --- | --- |\n");
    t.push_str(&line("stored", stored));
    t.push_str(&line("paired", paired));
    let ratio = paired.per_verdict() / stored.per_verdict();
    if ratio.is_finite() {
        t.push_str(&format!(
            "\nPaired costs {ratio:.2}× stored per verdict (it times two kernels per round; the aim is at most 2.5×).\n"
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelgate::measure::Regime;

    fn c(reps: usize, flagged: usize, inconclusive: usize) -> Cell {
        Cell {
            reps,
            flagged,
            inconclusive,
            ..Cell::default()
        }
    }

    #[test]
    fn the_sensitivity_table_has_a_row_per_duration_and_level() {
        let kernels = [
            Kernel {
                target: 5e-6,
                median: 4.9e-6,
                regime: Regime::Graph,
            },
            Kernel {
                target: 1e-3,
                median: 1.002e-3,
                regime: Regime::Cold,
            },
        ];
        let levels = [0, 5];
        let cells = vec![
            vec![
                vec![c(5, 0, 0), c(5, 0, 0), c(5, 0, 0)],
                vec![c(5, 5, 0), c(5, 5, 0), c(5, 4, 1)],
            ],
            vec![
                vec![c(5, 1, 0), c(5, 0, 0), c(5, 0, 0)],
                vec![c(5, 5, 0), c(5, 5, 0), c(5, 5, 0)],
            ],
        ];
        let s = Sensitivity {
            mode: "paired",
            how: "How.".into(),
            cells,
            cost: Cost::default(),
        };
        let t = sensitivity(&s, &kernels, &levels, &[0.005, 0.01, 0.02]);
        assert!(
            t.starts_with("## Sensitivity, paired mode\n\nHow.\n\n"),
            "{t}"
        );
        assert!(t.contains("| kernel | slowdown | max_slowdown 0.5% | max_slowdown 1% | max_slowdown 2% |\n| --- | --- | --- | --- | --- |\n"), "{t}");
        assert!(
            t.contains("| ~5.000 µs (4.900 µs, graph) | 0% (A/A) | 0/5 | 0/5 | 0/5 |"),
            "{t}"
        );
        assert!(
            t.contains("| ~5.000 µs (4.900 µs, graph) | 5% | 5/5 | 5/5 | 4/5 (1 inconclusive) |"),
            "{t}"
        );
        assert!(
            t.contains("| ~1.000 ms (1.002 ms, cold) | 0% (A/A) | 1/5 | 0/5 | 0/5 |"),
            "{t}"
        );
        assert_eq!(t.lines().filter(|l| l.starts_with("| ~")).count(), 4);
    }

    #[test]
    fn cost_compares_the_modes() {
        let stored = Cost {
            verdicts: 10,
            seconds: 0.25,
            remeasures: 1,
            confirmations: 1,
        };
        let paired = Cost {
            verdicts: 10,
            seconds: 0.5,
            remeasures: 0,
            confirmations: 0,
        };
        let t = cost(&stored, &paired);
        assert!(
            t.contains("| stored | 25.00 ms | 10 | 1 | 1 | 250.0 ms |"),
            "{t}"
        );
        assert!(t.contains("Paired costs 2.00× stored"), "{t}");
        assert!(!cost(&Cost::default(), &paired).contains("Paired costs"));
    }
}
