//! `Report`: what `kernelgate bisect` prints — the first regressed commit with its change and
//! interval against good, what changed in the trial since its parent (with the SASS diffs),
//! how many commits were timed and how many decided without timing, the commits skipped and
//! why, and every probe in order.

use super::repo::Changes;
use super::search::{Commit, Found, How, Stopped, Timed};
use crate::report::terminal::change;

/// Everything the command prints, once the search is over.
pub struct Report<'a> {
    /// The trial searched for.
    pub trial: &'a str,
    /// The good commit.
    pub good: &'a Commit,
    /// How many commits the range holds (after good, up to bad).
    pub range: usize,
    /// What the search found.
    pub found: &'a Found,
    /// The first regressed commit's parent, what changed in the trial since it, and the SASS
    /// diffs of its changed kernels (with why there is no SASS, where there is none).
    pub since_parent: Option<(Commit, Changes)>,
}

/// The first line of a reason (a compiler's log follows it; the run of that commit shows it).
fn first_line(why: &str) -> &str {
    why.lines().next().unwrap_or(why)
}

/// A probe's decision in a few words.
fn how(h: &How) -> String {
    let short = |id: &str| id.get(..7).unwrap_or(id).to_string();
    match h {
        How::Timed(Timed::Regressed(c)) => format!("regressed {} (timed)", change(c)),
        How::Timed(Timed::Unchanged(Some(c))) => format!("not regressed {} (timed)", change(c)),
        How::Timed(Timed::Unchanged(None)) => "not regressed: identical code to good".into(),
        How::Timed(Timed::Inconclusive(c)) => {
            format!("skipped: inconclusive after re-measuring {}", change(c))
        }
        How::Timed(Timed::Failed(why)) => format!("skipped: {}", first_line(why)),
        How::Broken(why) => format!("skipped: {}", first_line(&why.to_string())),
        How::Timed(Timed::Unavailable(why)) => format!("not timed: {why}"),
        How::SameCode {
            as_commit,
            regressed,
        } => format!(
            "{}: identical code to {}, not timed",
            if *regressed {
                "regressed"
            } else {
                "not regressed"
            },
            short(as_commit)
        ),
    }
}

impl Report<'_> {
    /// The lines, in order.
    pub fn lines(&self) -> Vec<String> {
        let f = self.found;
        let mut out = Vec::new();
        let good = format!("good {}", self.good.short());
        match (&f.first, f.candidates.as_slice(), &f.stopped) {
            (Some(c), _, _) => {
                out.push(format!(
                    "kernelgate bisect: `{}` first regressed at {} \"{}\"",
                    self.trial,
                    c.short(),
                    c.subject
                ));
                if let Some(cmp) = f.change_of(&c.id) {
                    out.push(format!(
                        "  {} against {good} (paired: its time over good's, 95% interval)",
                        change(cmp)
                    ));
                }
            }
            (None, [_, ..], _) => {
                let names: Vec<String> = f
                    .candidates
                    .iter()
                    .map(|c| format!("{} \"{}\"", c.short(), c.subject))
                    .collect();
                out.push(format!(
                    "kernelgate bisect: `{}` first regressed at one of {} commits (the others were skipped): {}",
                    self.trial,
                    names.len(),
                    names.join(", ")
                ));
            }
            (None, [], stopped) => {
                out.push(format!(
                    "kernelgate bisect: `{}`: no first regressed commit found: {}",
                    self.trial,
                    stopped
                        .as_ref()
                        .map_or("every commit was skipped".into(), |s| s.to_string())
                ));
                if let Some(Stopped::Unavailable(_)) = stopped {
                    out.push("  (a commit whose trial identity is new must be timed, on a GPU: run it where one is)".into());
                }
            }
        }
        let (timed, same) = f.counts();
        let skipped = f.skipped();
        out.push(format!(
            "  {} commit(s) after {good} up to bad; probed {}: {timed} timed, {same} decided without timing (identical code), {} skipped",
            self.range,
            f.probed.len(),
            skipped.len()
        ));
        for (c, why) in &skipped {
            out.push(format!(
                "    skipped {} \"{}\": {}",
                c.short(),
                c.subject,
                first_line(why)
            ));
        }
        if !f.probed.is_empty() {
            out.push("  probes, in order:".into());
        }
        for p in &f.probed {
            out.push(format!("    {}  {}", p.commit.short(), how(&p.how)));
        }
        if let Some((parent, changes)) = &self.since_parent {
            let (code, diffs, note) = (&changes.code, &changes.diffs, &changes.note);
            let first = f.first.as_ref().map_or("", |c| c.short());
            let what = code
                .as_ref()
                .map(|c| c.describe(&format!("its parent {}", parent.short())))
                .unwrap_or_else(|| {
                    format!("its parent {} (no code identity here)", parent.short())
                });
            out.push(format!("  {first}: {what}"));
            if !diffs.is_empty() {
                out.push(format!(
                    "  SASS of {first} against its parent {}:",
                    parent.short()
                ));
            }
            let why = note.as_ref().filter(|_| !diffs.is_empty());
            out.extend(why.map(|why| format!("  (no SASS listings: {why})")));
            for d in diffs {
                out.extend(d.lines().into_iter().map(|l| format!("  {l}")));
            }
        }
        out.push(
            "  (every commit was run by this kernelgate: a regression of the harness or the driver is out of its reach)"
                .into(),
        );
        out
    }
}
