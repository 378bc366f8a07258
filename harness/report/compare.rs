//! `compare`: the gate between two results files (`kernelgate compare OLD.json NEW.json`),
//! with the same statistics as a run against stored baselines, printed as a table of the
//! trials that changed; and what makes the two files hard to compare (`Mismatch`).

use super::duration;
use super::results::{FailKind, Results, Status, TrialRecord};
use crate::gate::{self, GateInput, Verdict};
use crate::measure::Regime;
use crate::suite::PRECISION_OF_MAX_SLOWDOWN;
use serde::Serialize;

/// Why a row has no verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "status", rename_all = "snake_case")]
pub enum Note {
    /// The trial is only in NEW.
    OnlyInNew,
    /// The trial is only in OLD.
    OnlyInOld,
    /// Not timed in OLD (compile trials, ignored or failed ones), with how it ended there.
    NotMeasuredInOld(Status),
    /// Not timed in NEW, with how it ended there.
    NotMeasuredInNew(Status),
    /// Timed in different regimes (cold against CUDA-graph replays): not comparable.
    Regimes(Regime, Regime),
}

/// How a trial failed in NEW: its kind (which decides `compare`'s exit code) and what happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failed {
    /// The kind of failure.
    pub kind: FailKind,
    /// What happened (`wrong output`, `fault`), where the file says.
    pub what: Option<&'static str>,
}

impl Failed {
    /// How `trial` failed, if it did ([`TrialRecord::fail_kind`]).
    pub fn of(trial: &TrialRecord) -> Option<Failed> {
        (trial.status == Status::Failed).then(|| Failed {
            kind: trial.fail_kind().unwrap_or(FailKind::Correctness),
            what: trial.failure_detail.as_ref().map(|f| f.what()),
        })
    }
}

/// One row of the table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// Trial name.
    pub name: String,
    /// Median time in OLD, seconds.
    pub old: Option<f64>,
    /// Median time in NEW, seconds.
    pub new: Option<f64>,
    /// How it ended in OLD and in NEW, where it is in the file.
    pub status: [Option<Status>; 2],
    /// The gate's verdict, when both were measured the same way.
    pub verdict: Option<gate::TrialVerdict>,
    /// Why there is no verdict.
    pub note: Option<Note>,
    /// How the trial failed in NEW, when it did.
    pub failed: Option<Failed>,
    /// The verdict's words beside its interval (`within threshold`, `on the threshold`, or
    /// its label), gated at NEW's `max_slowdown` and precision target.
    pub words: Option<&'static str>,
}

impl Row {
    /// Whether the row says something changed: a trial that failed in NEW (always listed,
    /// whether or not OLD has it), a verdict other than `unchanged`, a trial timed on one side
    /// only or in another regime, or a trial that ended differently. A trial timed on neither
    /// side that ended the same (a compile trial) has not changed.
    pub fn changed(&self) -> bool {
        if self.failed.is_some() {
            return true;
        }
        if let Some(v) = &self.verdict {
            return v.verdict != Verdict::Unchanged;
        }
        let timed_once = self.old.is_some() != self.new.is_some();
        let ended_otherwise = matches!(self.status, [Some(a), Some(b)] if a != b);
        timed_once || ended_otherwise || matches!(self.note, Some(Note::Regimes(..)))
    }

    /// The verdict column: the gate's verdict or why there is none, and a failure in NEW
    /// first, by its kind (`FAILED in NEW: correctness (wrong output); passed in OLD`).
    pub fn describe(&self) -> String {
        let what = match (&self.verdict, self.words) {
            (Some(_), Some(w)) => w.to_string(),
            (Some(v), None) => v.verdict.to_string(),
            (None, _) => self.describe_note(),
        };
        let Some(f) = &self.failed else { return what };
        let detail = f.what.map(|w| format!(" ({w})")).unwrap_or_default();
        let before = match self.status[0] {
            Some(Status::Passed) => "; passed in OLD",
            Some(Status::Failed) => "; failed in OLD too",
            Some(Status::Ignored) => "; ignored in OLD",
            None => "; not in OLD",
        };
        let verdict = self.verdict.map_or(String::new(), |_| format!("; {what}"));
        format!("FAILED in NEW: {}{detail}{before}{verdict}", f.kind.word())
    }

    fn describe_note(&self) -> String {
        let status = |s: &Status| format!("{s:?}").to_lowercase();
        match &self.note {
            None => String::new(),
            Some(Note::OnlyInNew) => "only in NEW".into(),
            Some(Note::OnlyInOld) => "only in OLD".into(),
            Some(Note::NotMeasuredInOld(s)) => format!("not measured in OLD ({})", status(s)),
            Some(Note::NotMeasuredInNew(s)) => format!("not measured in NEW ({})", status(s)),
            Some(Note::Regimes(a, b)) => format!("regimes differ ({a} vs {b})"),
        }
    }
}

fn median(r: Option<&TrialRecord>) -> Option<f64> {
    r.and_then(|r| r.measurement.as_ref())
        .map(|m| m.time.median)
}

/// Compares every trial of `new` with the same trial in `old`; trials only in `old` follow.
pub fn compare(old: &Results, new: &Results) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut inputs = Vec::new();
    let mut compared_rows = Vec::new();
    for n in &new.trials {
        let o = old.trials.iter().find(|o| o.name == n.name);
        let mut row = Row {
            name: n.name.clone(),
            old: median(o),
            new: median(Some(n)),
            status: [o.map(|o| o.status), Some(n.status)],
            failed: Failed::of(n),
            ..Row::default()
        };
        match (
            o.and_then(|o| o.measurement.as_ref()),
            n.measurement.as_ref(),
        ) {
            _ if o.is_none() => row.note = Some(Note::OnlyInNew),
            (_, None) => row.note = Some(Note::NotMeasuredInNew(n.status)),
            (None, _) => row.note = o.map(|o| Note::NotMeasuredInOld(o.status)),
            (Some(om), Some(nm)) if om.regime != nm.regime => {
                row.note = Some(Note::Regimes(om.regime, nm.regime))
            }
            (Some(om), Some(nm)) => {
                let speedups = (!om.speedup_samples.is_empty() && !nm.speedup_samples.is_empty())
                    .then(|| (om.speedup_samples.clone(), nm.speedup_samples.clone()));
                inputs.push(GateInput {
                    old_times: om.time_samples.clone(),
                    new_times: nm.time_samples.clone(),
                    speedups,
                    max_slowdown: nm.max_slowdown,
                    paired: None,
                });
                // NEW's own precision target (finer where NEW re-measured), as its run's
                // reports read it.
                let precision = super::reading::precision(n)
                    .unwrap_or(nm.max_slowdown * PRECISION_OF_MAX_SLOWDOWN);
                compared_rows.push((rows.len(), precision));
            }
        }
        rows.push(row);
    }
    for o in &old.trials {
        if !new.trials.iter().any(|n| n.name == o.name) {
            rows.push(Row {
                name: o.name.clone(),
                old: median(Some(o)),
                status: [Some(o.status), None],
                note: Some(Note::OnlyInOld),
                ..Row::default()
            });
        }
    }
    for (((k, precision), v), input) in compared_rows
        .into_iter()
        .zip(gate::decide(&inputs))
        .zip(&inputs)
    {
        let reading = v.verdict.reading(v.shown(), input.max_slowdown, precision);
        rows[k].words = Some(reading.phrase(v.verdict));
        rows[k].verdict = Some(v);
    }
    rows
}

/// NEW's exit class for `kernelgate compare`: the worst of NEW's own failures and a
/// regression the comparison found — 2, then 101, then 1 (as a run's); `None` when it passes.
pub fn failure(new: &Results, rows: &[Row]) -> Option<FailKind> {
    let fails = |v: &gate::TrialVerdict| v.verdict.fails(gate::Strictness::default());
    let regressed = rows
        .iter()
        .any(|r| r.verdict.as_ref().is_some_and(fails))
        .then_some(FailKind::Performance);
    // A row's own failure is its NEW trial's, which `worst_failure` reads too.
    regressed.max(new.worst_failure())
}

/// What differs between the two files besides their measurements.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// They come from different kinds of GPU (device fingerprints): an error unless allowed.
    #[error("the files come from different devices (OLD: {old}; NEW: {new}): a time from one kind of GPU against another's is no regression test (`--allow-device` compares them anyway)")]
    Device {
        /// OLD's device, described.
        old: String,
        /// NEW's.
        new: String,
    },
    /// They were decided in different modes (stored baselines, paired against a base).
    #[error("the runs were decided in different modes (OLD {old}; NEW {new}): a paired run's times were taken interleaved with its base, so compare times, not verdicts")]
    Mode {
        /// OLD's mode, described.
        old: String,
        /// NEW's.
        new: String,
    },
    /// Suite files differ between them: their trials may not measure the same thing.
    #[error("the suite files of {} differ between the runs: their trials may measure other sizes, launches or inputs", crate::suggest::quoted(.0, ", "))]
    Suites(Vec<String>),
}

/// Everything that differs between `old` and `new` besides their measurements, in the order
/// a person should read it (the device first: it makes the comparison meaningless).
pub fn mismatches(old: &Results, new: &Results) -> Vec<Mismatch> {
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (&old.device, &new.device) {
        if a != b {
            out.push(Mismatch::Device {
                old: a.describe(),
                new: b.describe(),
            });
        }
    }
    let (a, b) = (old.mode(), new.mode());
    if a != b {
        out.push(Mismatch::Mode { old: a, new: b });
    }
    let suites = old.provenance.changed_suites(&new.provenance);
    if !suites.is_empty() {
        out.push(Mismatch::Suites(
            suites.into_iter().map(String::from).collect(),
        ));
    }
    out
}

/// The table's header.
const HEAD: [&str; 6] = [
    "trial",
    "old",
    "new",
    "change [95% interval]",
    "p (BH)",
    "verdict",
];

/// The Markdown table, one row per trial of `rows` (for a pull-request comment: `compare
/// --markdown`).
pub fn markdown_table(rows: &[&Row]) -> String {
    let cell = |c: &str| c.replace('|', "\\|");
    let mut out = format!(
        "| {} |\n|{}\n",
        HEAD.join(" | "),
        " --- |".repeat(HEAD.len())
    );
    for (r, row) in rows.iter().zip(cells(rows)) {
        let mut row = row.map(|c| cell(&c));
        row[0] = format!("`{}`", r.name);
        if r.failed.is_some() || r.verdict.is_some_and(|v| v.verdict == Verdict::Regressed) {
            row[5] = format!("**{}**", row[5]);
        }
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// The table, one row per trial of `rows`, widths fitted to the content.
pub fn table(rows: &[&Row]) -> String {
    let (head, body) = (HEAD, cells(rows));
    let mut widths = head.map(|h| h.chars().count());
    for row in &body {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(&head.map(String::from));
    for row in &body {
        line(row);
    }
    out
}

/// Each row's cells, in [`HEAD`]'s order.
fn cells(rows: &[&Row]) -> Vec<[String; 6]> {
    let time = |t: Option<f64>| t.map(duration).unwrap_or_else(|| "-".into());
    rows.iter()
        .map(|r| {
            let (change, p) = r.verdict.map_or(("-".into(), "-".into()), |v| {
                (
                    crate::report::terminal::verdict_change(&v),
                    format!("{:.2e}", v.shown().p_adjusted),
                )
            });
            [
                r.name.clone(),
                time(r.old),
                time(r.new),
                change,
                p,
                r.describe(),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(old: Option<f64>, new: Option<f64>, status: [Option<Status>; 2]) -> Row {
        Row {
            name: "s::compile".into(),
            old,
            new,
            status,
            verdict: None,
            note: None,
            failed: None,
            words: None,
        }
    }

    #[test]
    fn what_counts_as_changed() {
        let passed = Some(Status::Passed);
        // A compile trial, timed on neither side, passed on both: not a change.
        assert!(!row(None, None, [passed, passed]).changed());
        assert!(row(None, None, [passed, Some(Status::Failed)]).changed());
        assert!(row(Some(1.0), None, [passed, None]).changed(), "gone");
        assert!(row(None, Some(1.0), [None, passed]).changed(), "new");
        let mut regimes = row(Some(1.0), Some(1.0), [passed, passed]);
        regimes.note = Some(Note::Regimes(Regime::Cold, Regime::Graph));
        assert!(regimes.changed());
        assert_eq!(regimes.describe_note(), "regimes differ (cold vs graph)");
    }
}
