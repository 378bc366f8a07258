//! `junit`: the run as JUnit XML (`KERNELGATE_JUNIT=path`), one `<testcase>` per trial, for CI
//! test views: failures as `<failure>` (performance and correctness), infrastructure problems
//! as `<error>`, ignored trials as `<skipped>`; each with the record's headline as its
//! `message` and, for failures, every reason and command as its text. Written with
//! `quick-junit` (nextest's JUnit writer), which escapes and counts.

use super::results::{FailKind, Results, Status, TrialRecord};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::collections::BTreeMap;

/// One trial as a test case: its status, the file and line it is declared at, and the kernel's
/// median time.
fn test_case(t: &TrialRecord) -> TestCase {
    let first = super::terminal::headline(t);
    let message = match t.status {
        Status::Failed => super::terminal::failure(t),
        _ => first.clone(),
    };
    let (first, message) = (first.as_str(), message.as_str());
    let status = match (t.status, t.failure) {
        (Status::Failed, kind) => {
            let (kind, ty) = match kind {
                Some(FailKind::Infrastructure) => (NonSuccessKind::Error, "infrastructure"),
                Some(FailKind::Performance) => (NonSuccessKind::Failure, "performance"),
                _ => (NonSuccessKind::Failure, "correctness"),
            };
            let mut status = TestCaseStatus::non_success(kind);
            status
                .set_message(first)
                .set_type(ty)
                .set_description(message);
            status
        }
        (Status::Ignored, _) => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(first);
            status
        }
        (Status::Passed, _) => TestCaseStatus::success(),
    };
    let mut case = TestCase::new(t.name.as_str(), status);
    case.set_classname(t.suite.as_str());
    case.extra.insert("file".into(), t.file.as_str().into());
    case.extra.insert("line".into(), t.line.to_string().into());
    if let Some(m) = &t.measurement {
        // The kernel's median, in seconds to the nanosecond: quick-junit's own `time` keeps
        // three decimals, which reads 0.000 for a kernel of microseconds.
        case.extra
            .insert("time".into(), format!("{:.9}", m.time.median).into());
    }
    if t.status == Status::Passed && !message.is_empty() {
        case.set_system_out(message);
    }
    case
}

/// The XML document: a testsuite per suite (of a pool of GPU models, per suite and model:
/// `gemm (NVIDIA H100 80GB HBM3)`).
pub fn render(results: &Results) -> String {
    let mut report = Report::new("kernelgate");
    for run in results.runs() {
        let mut suites: BTreeMap<&str, Vec<&TrialRecord>> = BTreeMap::new();
        for t in &run.trials {
            suites.entry(t.suite.as_str()).or_default().push(t);
        }
        let properties = properties(run);
        for (name, trials) in suites {
            let mut suite = TestSuite::new(match results.pool.is_empty() {
                true => name.to_string(),
                false => format!("{name} ({})", run.described_device()),
            });
            suite.add_properties(properties.iter().cloned());
            suite.add_test_cases(trials.into_iter().map(test_case));
            report.add_test_suite(suite);
        }
    }
    // Serializing into a `String` fails only on invalid UTF-8, which `XmlString` rules out.
    report
        .to_string()
        .expect("quick-junit writes a report of strings")
}

/// The run's mode, base, identical-code skips and provenance, on each of its testsuites.
fn properties(results: &Results) -> Vec<Property> {
    let mut properties = vec![Property::new("kernelgate.mode", results.mode())];
    if let Some(b) = &results.base {
        properties.push(Property::new("kernelgate.base", b.rev.as_str()));
        properties.push(Property::new("kernelgate.base.commit", b.commit.as_str()));
    }
    if let Some(i) = &results.identical {
        properties.push(Property::new(
            "kernelgate.identical.skipped",
            i.skipped.to_string(),
        ));
        if let Some(s) = i.saved_seconds {
            properties.push(Property::new(
                "kernelgate.identical.saved_seconds",
                format!("{s:.1}"),
            ));
        }
        for line in super::identical::lines(i) {
            properties.push(Property::new("kernelgate.identical", line));
        }
    }
    let p = &results.provenance;
    for (name, value) in [
        ("kernelgate.commit", &p.commit),
        ("kernelgate.branch", &p.branch),
        ("kernelgate.started", &p.started),
    ] {
        properties.extend(value.as_ref().map(|v| Property::new(name, v.as_str())));
    }
    properties
}
