//! `junit`: the run as JUnit XML (`KERNELGATE_JUNIT=path`), one `<testcase>` per trial, for CI
//! test views: failures as `<failure>` (performance and correctness), infrastructure problems
//! as `<error>`, ignored trials as `<skipped>`; each with the record's headline as its
//! `message` and, for failures, every reason and command as its text.

use super::results::{FailKind, Results, Status, TrialRecord};
use std::collections::BTreeMap;

/// Escapes text for XML attributes and content.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn counts<'a>(
    trials: impl Iterator<Item = &'a TrialRecord> + Clone,
) -> (usize, usize, usize, usize) {
    let n = trials.clone().count();
    let errors = trials
        .clone()
        .filter(|t| t.failure == Some(FailKind::Infrastructure))
        .count();
    let failures = trials
        .clone()
        .filter(|t| t.status == Status::Failed)
        .count()
        - errors;
    let skipped = trials.filter(|t| t.status == Status::Ignored).count();
    (n, failures, errors, skipped)
}

/// The XML document.
pub fn render(results: &Results) -> String {
    let mut suites: BTreeMap<&str, Vec<&TrialRecord>> = BTreeMap::new();
    for t in &results.trials {
        suites.entry(t.suite.as_str()).or_default().push(t);
    }
    let (n, failures, errors, skipped) = counts(results.trials.iter());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"kernelgate\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n"
    ));
    let mut properties = vec![("kernelgate.mode", results.mode())];
    if let Some(b) = &results.base {
        properties.push(("kernelgate.base", b.rev.clone()));
        properties.push(("kernelgate.base.commit", b.commit.clone()));
    }
    let p = &results.provenance;
    for (name, value) in [
        ("kernelgate.commit", &p.commit),
        ("kernelgate.branch", &p.branch),
        ("kernelgate.started", &p.started),
    ] {
        if let Some(v) = value {
            properties.push((name, v.clone()));
        }
    }
    for (name, trials) in suites {
        let (n, failures, errors, skipped) = counts(trials.iter().copied());
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{n}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n",
            escape(name)
        ));
        out.push_str("    <properties>\n");
        for (k, v) in &properties {
            out.push_str(&format!(
                "      <property name=\"{k}\" value=\"{}\"/>\n",
                escape(v)
            ));
        }
        out.push_str("    </properties>\n");
        for t in trials {
            let time = t
                .measurement
                .as_ref()
                .map(|m| format!(" time=\"{:.9}\"", m.time.median))
                .unwrap_or_default();
            out.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\"{time}>",
                escape(&t.name),
                escape(&t.suite),
                escape(&t.file),
                t.line
            ));
            let first = super::terminal::headline(t);
            let message = match t.status {
                Status::Failed => super::terminal::failure(t),
                _ => first.clone(),
            };
            let (first, message) = (first.as_str(), message.as_str());
            match (t.status, t.failure) {
                (Status::Failed, Some(FailKind::Infrastructure)) => out.push_str(&format!(
                    "\n      <error message=\"{}\" type=\"infrastructure\">{}</error>\n    ",
                    escape(first),
                    escape(message)
                )),
                (Status::Failed, kind) => out.push_str(&format!(
                    "\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    ",
                    escape(first),
                    match kind {
                        Some(FailKind::Performance) => "performance",
                        _ => "correctness",
                    },
                    escape(message)
                )),
                (Status::Ignored, _) => out.push_str(&format!(
                    "\n      <skipped message=\"{}\"/>\n    ",
                    escape(first)
                )),
                (Status::Passed, _) if !message.is_empty() => out.push_str(&format!(
                    "\n      <system-out>{}</system-out>\n    ",
                    escape(message)
                )),
                (Status::Passed, _) => {}
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
