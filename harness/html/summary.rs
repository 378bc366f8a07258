//! `summary`: the report's first section — how many trials are in each state (with the trials
//! gone since the base, in paired mode), then what needs attention, grouped by kernel: one row
//! per kernel and state with the sizes it concerns, so twelve near-identical failures read as
//! one row.

use super::page::{anchor, badge, esc, table};
use super::trial::{kernel_and_case, State};
use super::view::View;
use crate::report::results::{GateNote, TrialRecord};
use crate::report::terminal::{headline, other_gpu_of, verdict_change, verdict_words};

/// Trials of one kernel in one state (and, for failures, of one kind).
struct Group<'a> {
    state: State,
    suite: &'a str,
    kernel: &'a str,
    trials: Vec<&'a TrialRecord>,
}

/// The attention rows: trials that need attention, grouped by suite, kernel, state and kind
/// of failure, worst state first, in run order within a state.
fn groups<'a>(trials: &'a [TrialRecord]) -> Vec<Group<'a>> {
    let keyed = trials.iter().filter_map(|t| {
        let state = Some(State::of(t)).filter(|s| s.needs_attention())?;
        Some((
            (state, t.suite.as_str(), kernel_and_case(t).0, &t.failure),
            t,
        ))
    });
    let mut out: Vec<Group> = (crate::order::grouped(keyed).into_iter())
        .map(|((state, suite, kernel, _), trials)| Group {
            state,
            suite,
            kernel,
            trials,
        })
        .collect();
    out.sort_by_key(|g| g.state);
    out
}

/// A trial's case as a link to its row (`n=4096`; the trial's name when it has no case).
fn case_link(t: &TrialRecord) -> String {
    let (_, case) = kernel_and_case(t);
    let text = if case.is_empty() { &t.name } else { case };
    format!(
        r##"<a href="#{}"><code>{}</code></a>"##,
        anchor("t", &t.name),
        esc(text)
    )
}

/// Why a trial needs attention, in words that hold for every size of its group: what it was
/// compared with and how it was decided, or its first reason. (What moved in its counters is
/// each size's own: [`size_change`].)
fn why(view: &View, t: &TrialRecord) -> String {
    match (&t.gate, &t.verdict, &t.failure_detail) {
        (
            Some(GateNote::Compared { family, .. } | GateNote::Paired { family, .. }),
            Some(v),
            None,
        ) => {
            let host = other_gpu_of(t)
                .map(|g| format!("; the baseline came from another physical GPU ({g}): hosts of one model differ by several percent"))
                .unwrap_or_default();
            format!(
                "{} against {}: Benjamini–Hochberg over {family} comparisons, max_slowdown {}{}",
                esc(verdict_words(t).unwrap_or(v.verdict.label())),
                view.against(),
                t.measurement
                    .as_ref()
                    .map(|m| format!("{}%", 100.0 * m.max_slowdown))
                    .unwrap_or_else(|| "–".into()),
                esc(&host),
            )
        }
        _ => esc(&headline(t)),
    }
}

/// One size's change in an attention row: `n=4096 +3.0% [+2.8%, +3.1%] p = 9.3e-106`, then
/// what moved in the hardware counters where they were read on both sides (the cause of the
/// change: `— achieved occupancy 0.61 → 0.25; instructions +0.0%`).
fn size_change(t: &TrialRecord) -> Option<String> {
    let v = t.verdict.as_ref()?;
    let (_, case) = kernel_and_case(t);
    let counters = crate::report::terminal::cause(t);
    let counters = match counters.is_empty() {
        true => String::new(),
        false => format!(" <span class=\"counters\">{}</span>", esc(&counters)),
    };
    Some(format!(
        "<div class=\"size-change\"><span class=\"change\"><code>{}</code> {} <span class=\"p\">p = {:.1e}</span></span>{counters}</div>",
        esc(case),
        esc(&verdict_change(v)),
        v.shown().p_adjusted
    ))
}

/// The commands of a group, as the runner recorded them (results files written before the
/// record carried them get the re-run alone): one trial's own — re-run it, profile its kernel
/// with Nsight Compute where it was timed, re-bless its baseline where that applies
/// ([`TrialRecord::rebless`]); for several, the rerun of every size of the kernel, the profile
/// of its first size and, where each may be reblessed, their rebless.
fn group_commands(g: &Group) -> Vec<(String, String)> {
    let first = g.trials[0];
    let c = first.repeat();
    let profile = c.profile.filter(|_| first.measurement.is_some());
    if g.trials.len() == 1 {
        let mut out = vec![("rerun".to_string(), c.rerun)];
        out.extend(profile.map(|p| ("profile".to_string(), p)));
        out.extend(first.rebless().map(|b| ("rebless".to_string(), b)));
        return out;
    }
    let filter = format!("'{}::{}::'", g.suite, g.kernel);
    let invocation = first.invocation();
    let mut out = vec![("rerun".to_string(), format!("{invocation} {filter}"))];
    out.extend(profile.map(|p| (format!("profile ({})", kernel_and_case(first).1), p)));
    let reblessed: Option<Vec<String>> = g.trials.iter().map(|t| t.rebless()).collect();
    if let Some(each) = reblessed {
        // Against a baseline from another GPU, a run is added (`=add`), never replaced.
        let how = match each.iter().any(|b| b.starts_with("KERNELGATE_BLESS=add")) {
            true => "add",
            false => "1",
        };
        out.push((
            "rebless".to_string(),
            format!("KERNELGATE_BLESS={how} {invocation} {filter}"),
        ));
    }
    out
}

/// The summary section.
pub fn summary(view: &View) -> String {
    let results = view.results;
    let mut counts = std::collections::BTreeMap::<State, usize>::new();
    for t in &results.trials {
        *counts.entry(State::of(t)).or_default() += 1;
    }
    let mut out = String::from("<section id=\"summary\">\n<h2>Summary</h2>\n<p class=\"counts\">");
    for (s, n) in &counts {
        out.push_str(&format!("<span>{} {n}</span>", badge(s.word())));
    }
    if !results.gone.is_empty() {
        out.push_str(&format!(
            "<span>{} {}</span>",
            badge("gone"),
            results.gone.len()
        ));
    }
    out.push_str(&format!(
        "<span>{} trials</span></p>\n",
        results.trials.len()
    ));
    for line in results
        .identical
        .iter()
        .flat_map(crate::report::identical::lines)
    {
        out.push_str(&format!("<p class=\"identical\">{}</p>\n", esc(&line)));
    }
    for line in crate::report::variants::lines(results) {
        out.push_str(&format!("<p class=\"variants\">{}</p>\n", esc(&line)));
    }
    if !results.gone.is_empty() {
        let names: Vec<String> = results
            .gone
            .iter()
            .map(|n| format!("<code>{}</code>", esc(n)))
            .collect();
        out.push_str(&format!(
            "<p class=\"gone-list\" id=\"gone\">{} at {} and not in this run: {}</p>\n",
            badge("gone"),
            view.against(),
            names.join(", ")
        ));
    }
    let groups = groups(&results.trials);
    if groups.is_empty() {
        out.push_str("<p>Nothing needs attention: no trial failed, regressed, was inconclusive, unreliable or machine-slower.</p>\n</section>\n");
        return out;
    }
    out.push_str("<h3>Needs attention</h3>\n");
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let sizes: Vec<String> = g.trials.iter().map(|t| case_link(t)).collect();
            let changes: Vec<String> = g.trials.iter().filter_map(|t| size_change(t)).collect();
            let mut reasons: Vec<String> = g.trials.iter().map(|t| why(view, t)).collect();
            reasons.dedup();
            let cmds: String = group_commands(g)
                .iter()
                .map(|(what, c)| format!("<pre>{}: {}</pre>", esc(what), esc(c)))
                .collect();
            vec![
                format!(
                    "<code>{}::{}</code><div class=\"sizes\">{}</div>",
                    esc(g.suite),
                    esc(g.kernel),
                    sizes.join(" ")
                ),
                badge(g.state.word()),
                if changes.is_empty() {
                    "–".into()
                } else {
                    changes.concat()
                },
                format!("{}{cmds}", reasons.join("<br>")),
            ]
        })
        .collect();
    out.push_str(&table(
        "attention",
        &[
            "kernel, and the sizes",
            "state",
            "change [95% interval]",
            "why, and what to run",
        ],
        &rows,
    ));
    out.push_str("</section>\n");
    out
}
