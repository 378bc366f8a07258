//! `settle`: what each trial's line says and how it ended, once the gate has decided; the
//! results record of the run; the reports written from it; the run's summary lines.

use super::verdicts;
use super::{GateNote, Measured, Outcome, Planned, Run};
use crate::baseline::Stored;
use crate::config::Config;
use crate::device::DeviceInfo;
use crate::report::results::{FailKind, Measurement, Results, Status, TrialRecord};
use crate::report::TrialLine;
use crate::suite::Suite;
use libtest_mimic::{Completion, Failed, Trial};
use std::io::Write;

/// Writes the results file, JUnit XML and Markdown summary asked for, and prints GitHub
/// annotations; false when a file could not be written (each problem is printed).
pub(super) fn write_reports(config: &Config, results: &Results) -> bool {
    use crate::report::{annotations, junit, markdown};
    let mut ok = true;
    let mut check = |what: &str, r: Result<(), String>| {
        if let Err(e) = r {
            eprintln!("error: cannot write the {what}: {e}");
            ok = false;
        }
    };
    if let Some(path) = &config.results {
        check("results file", results.save(path));
    }
    if let Some(path) = &config.junit {
        check(
            "JUnit report",
            crate::baseline::write_atomically(path, junit::render(results).as_bytes()),
        );
    }
    let summary = (config.markdown.is_some() || config.step_summary.is_some())
        .then(|| markdown::render(results));
    if let (Some(path), Some(text)) = (&config.markdown, &summary) {
        check(
            "Markdown summary",
            crate::baseline::write_atomically(path, text.as_bytes()),
        );
    }
    if let (Some(path), Some(text)) = (&config.step_summary, &summary) {
        use std::io::Write as _;
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("`{}`: {e}", path.display()));
        check("GitHub step summary", appended);
    }
    // issue 12: the HTML report and the run history.
    if let Some(path) = &config.html {
        check("HTML report", crate::html::write(path, results));
    }
    if let Some(path) = &config.history {
        check("run history", crate::history::append(path, results));
    }
    if config.annotations {
        for line in annotations::render(results) {
            println!("{line}");
        }
    }
    ok
}

/// What a trial's line says, and how it ended.
pub(super) struct Settled {
    pub(super) line: String,
    /// `Ok(None)` passed, `Ok(Some(reason))` ignored, `Err` failed.
    pub(super) result: Result<Option<String>, (FailKind, String)>,
}

/// The commands that re-run one failing trial, and profile its kernel with Nsight Compute.
pub(super) fn reproduce(name: &str, suite: &Suite, trial: &Planned) -> String {
    let mut out = format!("\n  rerun:   cargo test --test perf -- --exact '{name}'");
    if let Some((_, kernel)) = trial.case_kernel() {
        let entries = &suite.kernels[kernel].entries;
        let names: Vec<&str> = entries
            .iter()
            .map(|e| e.split('<').next().unwrap_or(e))
            .collect();
        out.push_str(&format!(
            "\n  profile: KERNELGATE_TIMEOUT=600 ncu --target-processes all -k regex:'^({})' -c {} cargo test --test perf -- --exact '{name}'",
            names.join("|"),
            entries.len()
        ));
    }
    out
}

pub(super) fn settle(
    run: &Run,
    suites: &[Suite],
    trial: &Planned,
    outcome: &Outcome,
    device: Option<&DeviceInfo>,
) -> Settled {
    let suite = &suites[trial.suite];
    let fail = |kind: FailKind, message: &str| {
        let mut message = format!("{message}{}", reproduce(&trial.name, suite, trial));
        if kind == FailKind::Performance {
            message.push_str(&format!(
                "\n  rebless: KERNELGATE_BLESS=1 cargo test --test perf -- --exact '{}'",
                trial.name
            ));
        }
        Err((kind, message))
    };
    match outcome {
        Outcome::Compiled(line) => Settled {
            line: line.clone(),
            result: Ok(None),
        },
        Outcome::Ignored(reason) => Settled {
            line: String::new(),
            result: Ok(Some(reason.clone())),
        },
        Outcome::Failed(kind, m) => Settled {
            line: String::new(),
            result: fail(*kind, m),
        },
        Outcome::Measured(m) => {
            let (case, kernel) = trial.case_kernel().expect("kernel trials are measured");
            let mut line = match device {
                Some(info) => TrialLine {
                    samples: &m.samples,
                    case: &suite.cases[case],
                    reference: (kernel != suite.reference)
                        .then(|| suite.kernels[suite.reference].name.as_str()),
                    device: info,
                }
                .to_string(),
                None => String::new(),
            };
            line.push_str("  │ ");
            line.push_str(&crate::report::footprint(&m.footprint));
            if let Some(changed) = verdicts::resource_changes(&m.footprint, m.baseline.as_deref()) {
                line.push_str(&format!(" (since the baseline: {changed})"));
            }
            let note = if run.config.bless {
                "blessed".to_string()
            } else {
                verdicts::note(&m.gate)
            };
            if !note.is_empty() {
                line.push_str("  │ ");
                line.push_str(&note);
            }
            let result = match failures(run, suite, kernel, m) {
                Some((kind, message)) => fail(kind, &message),
                None => Ok(None),
            };
            Settled { line, result }
        }
    }
}

pub(super) fn report_trials(
    plan: &[Planned],
    settled: &[Option<Settled>],
    inline: bool,
) -> Vec<Trial> {
    plan.iter()
        .zip(settled)
        .map(|(trial, settled)| {
            let settled = settled.as_ref().map(|s| (s.line.clone(), s.result.clone()));
            Trial::ignorable_test(trial.name.clone(), move || {
                let Some((line, result)) = settled else {
                    return Ok(Completion::Completed);
                };
                if inline && !line.is_empty() {
                    let mut out = std::io::stdout().lock();
                    let _ = write!(out, "{line}  ");
                    let _ = out.flush();
                }
                match result {
                    Ok(None) => Ok(Completion::Completed),
                    Ok(Some(reason)) => Ok(Completion::ignored_with(reason)),
                    Err((_, m)) => Err(Failed::from(m)),
                }
            })
        })
        .collect()
}

/// The results-file record of each selected trial.
pub(super) fn records(
    suites: &[Suite],
    plan: &[Planned],
    outcomes: &[Option<Outcome>],
    settled: &[Option<Settled>],
) -> Vec<TrialRecord> {
    let mut out = Vec::new();
    for ((trial, outcome), settled) in plan.iter().zip(outcomes).zip(settled) {
        let (Some(outcome), Some(settled)) = (outcome, settled) else {
            continue;
        };
        let suite = &suites[trial.suite];
        let line = trial
            .case_kernel()
            .and_then(|(_, k)| suite.kernel_lines.get(k).copied())
            .unwrap_or(1);
        let (status, failure, message) = match (&settled.result, outcome) {
            (Err((kind, m)), _) => (Status::Failed, Some(*kind), Some(m.clone())),
            (Ok(_), Outcome::Ignored(reason)) => (Status::Ignored, None, Some(reason.clone())),
            (Ok(_), Outcome::Measured(m)) => (
                Status::Passed,
                None,
                Some(verdicts::note(&m.gate)).filter(|n| !n.is_empty()),
            ),
            (Ok(_), _) => (
                Status::Passed,
                None,
                Some(settled.line.clone()).filter(|l| !l.is_empty()),
            ),
        };
        let (measurement, verdict, device_ordinal) = match outcome {
            Outcome::Measured(m) => {
                let measurement = m.samples.kernel_summary().map(|time| Measurement {
                    regime: m.samples.regime.clone(),
                    batch: m.samples.batch,
                    launch_floor: m.samples.launch_floor,
                    time: Stored::from(time),
                    time_samples: m.samples.kernel.clone(),
                    speedup: m.samples.speedup().map(Stored::from),
                    speedup_samples: m.samples.ratios(),
                    max_slowdown: suite.bench.max_slowdown,
                    hit_time_cap: m.samples.hit_time_cap,
                    footprint: m.footprint.clone(),
                    clocks: m.samples.clocks.clone(),
                    // For the HTML report and the history (issue 12).
                    bytes: trial.case_kernel().and_then(|(c, _)| suite.cases[c].bytes),
                    flops: trial.case_kernel().and_then(|(c, _)| suite.cases[c].flops),
                    baseline_samples: match &m.gate {
                        GateNote::Compared { old, .. } => old.time_samples.clone(),
                        _ => Vec::new(),
                    },
                });
                let verdict = match &m.gate {
                    GateNote::Compared { verdict, .. } => Some(*verdict),
                    _ => None,
                };
                (measurement, verdict, Some(m.ordinal))
            }
            _ => (None, None, None),
        };
        out.push(TrialRecord {
            name: trial.name.clone(),
            suite: suite.name.clone(),
            file: suite.path.display().to_string(),
            line,
            status,
            failure,
            device_ordinal,
            message,
            measurement,
            verdict,
        });
    }
    out
}

/// Everything that fails a measured trial: the gate's verdict, its limits, memory growth. The
/// kind is the worst of them.
pub(super) fn failures(
    run: &Run,
    suite: &Suite,
    kernel: usize,
    m: &Measured,
) -> Option<(FailKind, String)> {
    let mut out: Vec<(FailKind, String)> = Vec::new();
    out.extend(verdicts::failure(run, suite, &m.samples, &m.gate));
    for f in verdicts::limit_failures(suite, kernel, &m.footprint) {
        out.push((FailKind::Performance, f));
    }
    if !run.config.bless {
        for f in verdicts::memory_growth(suite, &m.footprint, m.baseline.as_deref()) {
            out.push((FailKind::Performance, f));
        }
    }
    let kind = out.iter().map(|(k, _)| *k).max()?;
    Some((
        kind,
        out.into_iter()
            .map(|(_, m)| m)
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

pub(super) fn summary(run: &Run, wall: f64) {
    let t = run.totals();
    let (compiled, cached) = (
        crate::device::compile::counts().0 + t.compiled,
        crate::device::compile::counts().1 + t.cached,
    );
    let starts: usize = (0..run.workers.len()).map(|w| run.worker(w).starts).sum();
    println!(
        "kernelgate: {} trial(s) measured in {wall:.1} s of wall time: setup {:.1} s, correctness {:.1} s, sampling {:.1} s (kernel time in samples {:.3} s)",
        t.trials_measured, t.setup_seconds, t.check_seconds, t.sampled_seconds, t.kernel_seconds
    );
    println!("kernelgate: NVRTC {compiled} compiled, {cached} from cache; GPU worker started {starts} time(s)");
    if let Some(s) = crate::stats::Summary::of(&t.clock_mhz) {
        println!(
            "kernelgate: SM clock while sampling {:.0} / {:.0} / {:.0} MHz (min / median / max); {} round(s) dropped as throttled; {} trial(s) unreliable",
            s.min, s.median, s.max, t.dropped_rounds, t.unreliable
        );
    }
    if let Some(s) = crate::stats::Summary::of(&t.celsius) {
        println!("kernelgate: GPU temperature while sampling {:.0} / {:.0} / {:.0} °C (min / median / max)", s.min, s.median, s.max);
    }
    if let Some(floor) = t.launch_floor {
        println!(
            "kernelgate: launch floor (event-timed empty kernel) {}; {} trial(s) under {}x it timed as CUDA-graph replays",
            crate::report::duration(floor),
            t.batched,
            crate::measure::FLOOR_FACTOR
        );
    }
}
