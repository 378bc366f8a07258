//! `History::validate`: the one check of a history, used wherever one is read (`lint FILE`,
//! every `history` command, `import` before it adds a run): the tables there, every value the
//! commands compute with, each trial's stored record and the run it belongs to.

use super::store::{sqlite, tables, History};
use super::HistoryError;

impl History {
    /// Checks every value the history commands compute with — the one check of a history, used
    /// where it is read and by `kernelgate lint FILE`: a timed trial's median and interval are
    /// positive numbers, `max_slowdown` a fraction, the samples a JSON list of positive
    /// numbers, status, verdict and regime words kernelgate writes, every run dated.
    pub fn validate(&self) -> Result<(), HistoryError> {
        use crate::problems::Problems;
        let invalid = |problem: String| HistoryError::Invalid {
            path: self.path.clone(),
            problem,
        };
        let have = tables(&self.conn).map_err(sqlite(&self.path))?;
        if let Some(gone) = ["runs", "trials"]
            .iter()
            .find(|t| !have.iter().any(|h| h == *t))
        {
            return Err(invalid(format!(
                "it has no `{gone}` table: it is not a kernelgate history, or one cut off"
            )));
        }
        let mut p = Problems::default();
        let sql = "SELECT rowid, date, commit_sha, branch, mode, device FROM runs";
        self.rows(sql, [], |r| {
            let at = format!("runs row {}", r.get::<_, i64>(0).unwrap_or(0));
            for (c, name) in ["date", "commit_sha", "branch", "mode", "device"]
                .iter()
                .enumerate()
            {
                if !matches!(r.get_ref(c + 1), Ok(rusqlite::types::ValueRef::Text(t)) if !t.is_empty())
                {
                    p.add(
                        format!("{at}, column {name}"),
                        "is not text; kernelgate writes a word there",
                    );
                }
            }
            Ok(())
        })?;
        let sql = "SELECT rowid, name, status, verdict, median, low, high, max_slowdown, samples, regime, record, run_id, run_id IN (SELECT id FROM runs) FROM trials";
        self.rows(sql, [], |r| {
            let at = format!("trials row {}", r.get::<_, i64>(0).unwrap_or(0));
            check_trial_row(&mut p, &at, r);
            if !r.get::<_, bool>(12).unwrap_or(false) {
                let run = r.get::<_, i64>(11).unwrap_or(0);
                p.add(format!("{at}, column run_id"), format!("is run {run}, which `runs` does not hold: the file is cut off or was edited"));
            }
            let record: Option<String> = r.get(10).ok();
            let object = record
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|v| v.is_object());
            if !object {
                p.add(
                    format!("{at}, column record"),
                    "is not the trial's record as kernelgate writes it (JSON cut off or edited)",
                );
            }
            Ok(())
        })?;
        p.first()
            .map_or(Ok(()), |problem| Err(invalid(problem.to_string())))
    }
}

/// One row of `trials` checked (see [`History::validate`]).
fn check_trial_row(p: &mut crate::problems::Problems, at: &str, r: &rusqlite::Row) {
    use rusqlite::types::ValueRef;
    let word = |i: usize, allowed: &[&str], null: bool| match r.get_ref(i) {
        Ok(ValueRef::Null) => null,
        Ok(ValueRef::Text(t)) => allowed.is_empty() || allowed.iter().any(|a| a.as_bytes() == t),
        _ => false,
    };
    let checks: [(&str, bool, &str); 4] = [
        ("name", word(1, &[], false), "a trial name"),
        (
            "status",
            word(2, &["passed", "failed", "ignored"], false),
            "passed, failed or ignored",
        ),
        (
            "verdict",
            word(3, &crate::gate::Verdict::ALL.map(|v| v.label()), true),
            "a verdict or NULL",
        ),
        (
            "regime",
            word(9, &["cold", "graph"], true),
            "cold, graph or NULL",
        ),
    ];
    for (name, ok, what) in checks {
        if !ok {
            p.add(
                format!("{at}, column {name}"),
                format!("holds something else than {what}"),
            );
        }
    }
    let number = |i: usize| match r.get_ref(i) {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Real(v)) => Ok(Some(v)),
        Ok(ValueRef::Integer(v)) => Ok(Some(v as f64)),
        _ => Err(()),
    };
    for (i, name) in [(4, "median"), (5, "low"), (6, "high"), (7, "max_slowdown")] {
        let place = format!("{at}, column {name}");
        match number(i) {
            Ok(Some(v)) if name == "max_slowdown" => p.within(place, v, (0.0, 100.0)),
            Ok(Some(v)) => p.seconds(place, v),
            Ok(None) => {}
            Err(()) => p.add(place, "is not a number"),
        }
    }
    let samples = match r.get_ref(8) {
        Ok(ValueRef::Text(t)) => serde_json::from_slice::<Option<Vec<f64>>>(t).ok(),
        _ => None,
    };
    match samples {
        Some(Some(s)) => p.seconds_samples(format!("{at}, column samples"), &s, 0),
        Some(None) => {}
        None => p.add(
            format!("{at}, column samples"),
            "is not a JSON list of numbers (or null)",
        ),
    }
}
