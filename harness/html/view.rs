//! `View`: what every part of the report needs to know about the run besides a trial's record —
//! the run itself and, in paired mode, the base it was judged against.

use super::page::esc;
use super::strips;
use crate::report::results::Results;

/// What every part of the report needs to know about the run besides a trial's record.
pub(crate) struct View<'a> {
    /// The run.
    pub results: &'a Results,
    /// Paired mode: `base c7b4c3e`.
    pub base: Option<String>,
}

impl<'a> View<'a> {
    /// The view of `results`.
    pub fn of(results: &'a Results) -> View<'a> {
        View {
            results,
            base: results.base_label(),
        }
    }

    /// What a compared trial was compared with, as HTML: `base <code>c7b4c3e</code>`, or
    /// `the stored baseline`.
    pub fn against(&self) -> String {
        match &self.base {
            Some(b) => format!(
                "base <code>{}</code>",
                esc(b.strip_prefix("base ").unwrap_or(b))
            ),
            None => "the stored baseline".into(),
        }
    }

    /// The names of the two sides of a comparison, for strips and tables.
    pub fn sides(&self) -> strips::Sides<'_> {
        match &self.base {
            Some(b) => strips::Sides {
                old: b,
                new: "candidate",
            },
            None => strips::Sides {
                old: "baseline",
                new: "this run",
            },
        }
    }
}
