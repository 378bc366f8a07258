//! `code_changes` and `code_line`: what the report says of the code — per suite, every kernel
//! whose code changed since the base with its SASS diff, instruction-mix deltas and resource
//! changes (carried in the results file, so the page stays self-contained); per compared trial,
//! whether it ran the same code as what it was compared with, linking each changed kernel to
//! its diff.

use super::page::{anchor, esc, table};
use super::view::View;
use crate::report::results::TrialRecord;
use crate::report::terminal::code_note;
use crate::sass::change::{EntryDiff, KernelDiff, SassText};

/// The anchor of a kernel's SASS diff.
pub fn diff_anchor(suite: &str, kernel: &str) -> String {
    anchor("sass", &format!("{suite}::{kernel}"))
}

/// What a compared trial's code was against the other side's, with a link to the SASS diff
/// of each kernel that changed and has one: a paragraph, or nothing when no code was recorded.
pub fn code_line(view: &View, t: &TrialRecord) -> String {
    let Some(text) = code_note(t) else {
        return String::new();
    };
    let links: Vec<String> = t
        .code_change
        .iter()
        .flat_map(|c| c.changed_kernels())
        .filter(|(_, kernel)| {
            view.results
                .sass
                .iter()
                .any(|d| d.suite == t.suite && d.kernel == *kernel)
        })
        .map(|(_, kernel)| {
            format!(
                r##"<a href="#{}">SASS diff of <code>{}</code></a>"##,
                diff_anchor(&t.suite, kernel),
                esc(kernel)
            )
        })
        .collect();
    let links = if links.is_empty() {
        String::new()
    } else {
        format!(" — {}", links.join(", "))
    };
    format!("<p class=\"code\">Code: {}{links}</p>", esc(&text))
}

/// A diff's lines, each marked by what it does (`add`, `del`, `hunk`), escaped.
fn diff_html(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let class = match l.as_bytes().first() {
                Some(b'+') if !l.starts_with("+++") => "add",
                Some(b'-') if !l.starts_with("---") => "del",
                Some(b'@') => "hunk",
                _ => "ctx",
            };
            format!("<span class=\"{class}\">{}</span>", esc(l))
        })
        .collect();
    format!("<pre class=\"diff\">{}</pre>", lines.join("\n"))
}

fn entry_html(e: &EntryDiff, several: bool) -> String {
    let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
    let name = match (&e.was, several) {
        (Some(was), _) => format!(
            "<code>{}</code> (was <code>{}</code>): ",
            esc(&e.name),
            esc(was)
        ),
        (None, true) => format!("<code>{}</code>: ", esc(&e.name)),
        (None, false) => String::new(),
    };
    let mut out = format!(
        "<p>{name}{} changed: <code>{}</code> → <code>{}</code></p>",
        esc(&e.what),
        short(&e.hashes[0]),
        short(&e.hashes[1])
    );
    out.extend(e.resources.as_ref().map(|r| format!("<p>{}</p>", esc(r))));
    if !e.mix.is_empty() {
        let rows: Vec<Vec<String>> = e
            .mix
            .iter()
            .map(|d| {
                let change = i64::from(d.new) - i64::from(d.old);
                vec![
                    esc(&d.class),
                    format!("\u{1}{}", d.old),
                    format!("\u{1}{}", d.new),
                    format!("\u{1}{change:+}"),
                ]
            })
            .collect();
        out.push_str(&table(
            "mix",
            &["instruction class", "base", "head", "change"],
            &rows,
        ));
    }
    out.push_str(&match &e.sass {
        SassText::Diff { text } if text.is_empty() => format!(
            "<p class=\"note\">The SASS is the same: the {} changed.</p>",
            esc(&e.what)
        ),
        SassText::Diff { text } => diff_html(text),
        SassText::Ptx => {
            "<p class=\"note\">PTX: its SASS comes from the driver, on a GPU.</p>".into()
        }
        SassText::Unavailable { why } | SassText::Failed { error: why } => {
            format!("<p class=\"note\">No SASS: {}</p>", esc(why))
        }
    });
    out
}

fn kernel_html(d: &KernelDiff) -> String {
    let mut out = format!(
        "<div class=\"sass\" id=\"{}\"><h4><code>{}</code> ({})</h4>",
        diff_anchor(&d.suite, &d.kernel),
        esc(&d.name()),
        esc(&d.arch)
    );
    if let Some([old, new]) = &d.launches {
        out.push_str(&format!(
            "<p>launches: {} → {}</p>",
            esc(&old.join(", ")),
            esc(&new.join(", "))
        ));
    }
    for e in &d.entries {
        out.push_str(&entry_html(e, d.launched > 1));
    }
    out.push_str("</div>");
    out
}

/// The kernels of `suite` whose code changed since the base, each with its SASS diff; and why
/// there is no SASS where there is none. Empty when no kernel of the suite changed.
pub fn code_changes(view: &View, suite: &str) -> String {
    let diffs: Vec<&KernelDiff> = view
        .results
        .sass
        .iter()
        .filter(|d| d.suite == suite)
        .collect();
    if diffs.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<h3>Code changed since {}</h3>\n<p class=\"note\">Static instruction counts (a loop body counts once); addresses stripped and branch targets as labels, so a one-instruction change is a few lines.</p>\n",
        view.against()
    );
    if let Some(note) = &view.results.sass_note {
        out.push_str(&format!(
            "<p class=\"note\">SASS diffs are missing: {}</p>\n",
            esc(note)
        ));
    }
    for d in diffs {
        out.push_str(&kernel_html(d));
        out.push('\n');
    }
    out
}
