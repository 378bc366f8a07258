//! `judge`: the gate phase. Once every trial has run, each measured trial is matched with its
//! stored baseline (same device fingerprint, same regime), all are decided together (one
//! Benjamini–Hochberg family), inconclusive ones are measured again once with more samples,
//! and the decision is recorded on the trial.

use super::execute::execute;
use super::{GateNote, Outcome, Planned, Run};
use crate::baseline::{self, BaselineFile, Entry, Fingerprint};
use crate::device::DeviceInfo;
use crate::gate::{self, percent, GateInput, TrialVerdict, Verdict};
use crate::measure::Footprint;
use crate::report::results::FailKind;
use crate::report::{bytes, duration};
use crate::suite::Suite;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How much harder an inconclusive trial is measured the second time.
pub const REMEASURE_EFFORT: u32 = 4;

/// A suite's stored baseline on this device, as the gate found it.
struct SuiteBaseline {
    path: PathBuf,
    file: Result<Option<BaselineFile>, String>,
    elsewhere: Vec<Fingerprint>,
}

/// A measured trial with a comparable baseline entry.
struct Compared {
    index: usize,
    old: Entry,
    path: PathBuf,
}

fn input(outcome: &Outcome, old: &Entry, max_slowdown: f64) -> Option<GateInput> {
    let Outcome::Measured(m) = outcome else {
        return None;
    };
    let speedups = (!old.speedup_samples.is_empty() && !m.samples.reference.is_empty())
        .then(|| (old.speedup_samples.clone(), m.samples.ratios()));
    Some(GateInput {
        old_times: old.time_samples.clone(),
        new_times: m.samples.kernel.clone(),
        speedups,
        max_slowdown,
    })
}

/// Judges every measured trial in `outcomes` against the baselines for `device`.
pub(super) fn judge(
    run: &Run,
    suites: &[Suite],
    plan: &[Planned],
    outcomes: &mut [Option<Outcome>],
    device: &DeviceInfo,
) {
    let fingerprint = Fingerprint::of(device);
    // Per suite: the baseline file, and (when there is none) the devices that have one. Both
    // are read once per suite, not once per trial.
    let mut files: BTreeMap<usize, SuiteBaseline> = BTreeMap::new();
    let mut compared = Vec::new();
    for (i, trial) in plan.iter().enumerate() {
        let Some(Outcome::Measured(m)) = &mut outcomes[i] else {
            continue;
        };
        let suite = &suites[trial.suite];
        let SuiteBaseline {
            path,
            file,
            elsewhere,
        } = files.entry(trial.suite).or_insert_with(|| {
            let path = baseline::path(&run.config.baselines, &fingerprint, &suite.name);
            let file = baseline::load(&path);
            let elsewhere = match &file {
                Ok(None) => baseline::recorded_elsewhere(
                    &run.config.baselines,
                    &suite.name,
                    &fingerprint.slug(),
                ),
                _ => Vec::new(),
            };
            SuiteBaseline {
                path,
                file,
                elsewhere,
            }
        });
        if let Ok(Some(f)) = file {
            m.baseline = f.trials.get(&trial.name).cloned().map(Box::new);
        }
        let clocks = &m.samples.clocks;
        if clocks.unreliable || m.samples.kernel.is_empty() {
            m.gate = GateNote::Unreliable(format!(
                "UNRELIABLE: the SM clock was throttled in {} of {} rounds; not gated",
                clocks.discarded_rounds,
                clocks.discarded_rounds + clocks.kept_rounds
            ));
            continue;
        }
        m.gate = match file {
            Err(e) => GateNote::Error(e.clone()),
            Ok(None) => GateNote::NoBaseline {
                elsewhere: elsewhere.clone(),
            },
            Ok(Some(f)) => match f.trials.get(&trial.name) {
                None => GateNote::NoBaseline {
                    elsewhere: Vec::new(),
                },
                Some(old) if old.regime != m.samples.regime => {
                    GateNote::OtherRegime(old.regime.clone())
                }
                Some(old) => {
                    compared.push(Compared {
                        index: i,
                        old: old.clone(),
                        path: path.clone(),
                    });
                    GateNote::Pending
                }
            },
        };
    }
    if compared.is_empty() {
        return;
    }
    let inputs = |outcomes: &[Option<Outcome>]| -> Vec<GateInput> {
        compared
            .iter()
            .map(|c| {
                let max_slowdown = suites[plan[c.index].suite].bench.max_slowdown;
                input(
                    outcomes[c.index].as_ref().expect("measured"),
                    &c.old,
                    max_slowdown,
                )
                .expect("measured")
            })
            .collect()
    };
    let mut verdicts = gate::decide(&inputs(outcomes));
    let mut remeasured = vec![false; compared.len()];
    if !run.config.bless {
        let again: Vec<usize> = (0..compared.len())
            .filter(|&k| verdicts[k].verdict == Verdict::Inconclusive)
            .collect();
        for &k in &again {
            let i = compared[k].index;
            run.progress(&format!(
                "re-measuring {} ({}x the samples: inconclusive)",
                plan[i].name, REMEASURE_EFFORT
            ));
            match execute(run, suites, &plan[i], REMEASURE_EFFORT, 0) {
                Outcome::Measured(m) => {
                    outcomes[i] = Some(Outcome::Measured(m));
                    remeasured[k] = true;
                }
                other => outcomes[i] = Some(other),
            }
        }
        if !again.is_empty() {
            // Decide again, all together, with the new samples; a re-measure that failed
            // outright keeps its failure and leaves the family.
            let keep: Vec<usize> = (0..compared.len())
                .filter(|&k| matches!(outcomes[compared[k].index], Some(Outcome::Measured(_))))
                .collect();
            let all = inputs(outcomes);
            let family: Vec<GateInput> = keep.iter().map(|&k| all[k].clone()).collect();
            let decided = gate::decide(&family);
            for (&k, v) in keep.iter().zip(decided) {
                verdicts[k] = v;
            }
        }
    }
    let family = verdicts.len();
    for (k, c) in compared.into_iter().enumerate() {
        if let Some(Outcome::Measured(m)) = &mut outcomes[c.index] {
            m.gate = GateNote::Compared {
                verdict: verdicts[k],
                old: Box::new(c.old),
                path: c.path,
                remeasured: remeasured[k],
                family,
                max_slowdown: suites[plan[c.index].suite].bench.max_slowdown,
            };
        }
    }
}

/// The short text for a trial's line.
pub(super) fn note(gate: &GateNote) -> String {
    match gate {
        GateNote::Pending => String::new(),
        GateNote::NoBaseline { elsewhere } if elsewhere.is_empty() => {
            "no baseline — run with KERNELGATE_BLESS=1".into()
        }
        GateNote::NoBaseline { elsewhere } => format!(
            "no baseline for this device — run with KERNELGATE_BLESS=1 (recorded on {})",
            elsewhere
                .iter()
                .map(Fingerprint::describe)
                .collect::<Vec<_>>()
                .join("; ")
        ),
        GateNote::OtherRegime(r) => {
            format!("baseline measured in the `{r}` regime, not comparable — re-bless")
        }
        GateNote::Error(e) => format!("baseline unusable: {e}"),
        GateNote::Unreliable(why) => why.clone(),
        GateNote::Compared {
            verdict,
            remeasured,
            max_slowdown,
            ..
        } => {
            let t = &verdict.time;
            let change = format!(
                "{} [{}, {}]",
                percent(t.slowdown),
                percent(t.low),
                percent(t.high)
            );
            let again = if *remeasured {
                ", after re-measuring"
            } else {
                ""
            };
            // Slower in time, yet not regressed: say why, or the line reads as nonsense.
            let held = match &verdict.speedup {
                Some(s)
                    if t.verdict(*max_slowdown) == Verdict::Regressed
                        && verdict.verdict != Verdict::Regressed =>
                {
                    format!(
                        " in time, but its speedup over the reference held ({} [{}, {}]): the reference slowed as much, so the whole GPU ran slower",
                        percent(1.0 / s.slowdown),
                        percent(1.0 / s.high),
                        percent(1.0 / s.low)
                    )
                }
                _ => String::new(),
            };
            match verdict.verdict {
                Verdict::Inconclusive => format!("INCONCLUSIVE {change}{again}{held}: too noisy to tell (KERNELGATE_STRICT=1 fails it)"),
                Verdict::Regressed => format!("REGRESSED {change}{again}"),
                v => format!("{v} {change}{again}{held}"),
            }
        }
    }
}

/// Why a trial fails at the gate, with the evidence; `None` when it passes.
pub(super) fn failure(
    run: &Run,
    suite: &Suite,
    new_samples: &crate::measure::Samples,
    gate: &GateNote,
) -> Option<(FailKind, String)> {
    match gate {
        GateNote::Error(e) => Some((FailKind::Infrastructure, e.clone())),
        GateNote::NoBaseline { .. } | GateNote::OtherRegime(_)
            if run.config.require_baseline && !run.config.bless =>
        {
            Some((
                FailKind::Infrastructure,
                format!("{} (KERNELGATE_REQUIRE_BASELINE is set)", note(gate)),
            ))
        }
        GateNote::Compared {
            verdict,
            old,
            path,
            remeasured,
            family,
            ..
        } if !run.config.bless => {
            let fails = match verdict.verdict {
                Verdict::Regressed => true,
                Verdict::Inconclusive => run.config.strict,
                _ => false,
            };
            fails.then(|| {
                (
                    FailKind::Performance,
                    evidence(suite, new_samples, verdict, old, path, *remeasured, *family),
                )
            })
        }
        _ => None,
    }
}

fn evidence(
    suite: &Suite,
    new_samples: &crate::measure::Samples,
    verdict: &TrialVerdict,
    old: &Entry,
    path: &std::path::Path,
    remeasured: bool,
    family: usize,
) -> String {
    let t = &verdict.time;
    let new_median = new_samples
        .kernel_summary()
        .map(|s| s.median)
        .unwrap_or(f64::NAN);
    let what = match verdict.verdict {
        Verdict::Regressed => "regressed",
        _ => "inconclusive (KERNELGATE_STRICT is set): too noisy to tell whether it is meaningfully slower",
    };
    let mut out = format!(
        "{what}: {} → {} per run, {} [{}, {}] (p = {:.2e} after Benjamini–Hochberg over {family} comparison(s); max_slowdown {}%)",
        duration(old.time.median),
        duration(new_median),
        percent(t.slowdown),
        percent(t.low),
        percent(t.high),
        t.p_adjusted,
        suite.bench.max_slowdown * 100.0,
    );
    if let (Some(s), Some(old_speedup), Some(new_speedup)) =
        (&verdict.speedup, &old.speedup, new_samples.speedup())
    {
        // A speedup's slowdown factor s is old/new: the change in speedup is 1/s − 1.
        out.push_str(&format!(
            "\n  speedup vs {}: {:.2}× → {:.2}×, {} [{}, {}] (p = {:.2e})",
            old.reference,
            old_speedup.median,
            new_speedup.median,
            percent(1.0 / s.slowdown),
            percent(1.0 / s.high),
            percent(1.0 / s.low),
            s.p_adjusted
        ));
    }
    if remeasured {
        out.push_str(&format!("\n  measured again with {REMEASURE_EFFORT}x the samples after an inconclusive first run"));
    }
    out.push_str(&format!(
        "\n  baseline: {} (recorded {} by kernelgate {})",
        path.display(),
        old.date,
        old.kernelgate
    ));
    out
}

/// Breaches of the kernel's declared limits: memory budget, registers, spills.
pub(super) fn limit_failures(suite: &Suite, kernel: usize, f: &Footprint) -> Vec<String> {
    let limits = &suite.kernels[kernel].limits;
    let mut out = Vec::new();
    if let Some(fp64) = &f.fp64 {
        out.extend(crate::mix::fp64_breach(
            &suite.kernels[kernel].name,
            limits.forbid_fp64,
            fp64,
        ));
    }
    if let Some(budget) = limits.memory_budget {
        if f.pool_peak > budget {
            out.push(format!(
                "over memory_budget: the case peaked at {} ({} bytes: its buffers and scratch, the pool's high-water mark), the budget is {}",
                bytes(f.pool_peak),
                f.pool_peak,
                bytes(budget)
            ));
        }
    }
    for l in &f.launches {
        if let Some(max) = limits.max_registers {
            if l.registers as u32 > max {
                out.push(format!(
                    "`{}` uses {} registers per thread, over max_registers = {max}",
                    l.entry, l.registers
                ));
            }
        }
        if limits.forbid_spills && l.local_bytes > 0 {
            out.push(format!(
                "`{}` uses {} bytes of local memory per thread (spills or a run-time-indexed array) and the suite says spills = \"forbid\"",
                l.entry, l.local_bytes
            ));
        }
    }
    out
}

/// Peak memory growth over the baseline beyond `memory_growth` fails; registers and local
/// memory that grew are said too (they fail only through the suite's limits).
pub(super) fn memory_growth(suite: &Suite, f: &Footprint, old: Option<&Entry>) -> Vec<String> {
    let Some(old) = old.and_then(|e| e.footprint.as_ref()) else {
        return Vec::new();
    };
    let allowed = old.pool_peak as f64 * (1.0 + suite.bench.memory_growth);
    if (f.pool_peak as f64) <= allowed {
        return Vec::new();
    }
    let mut text = format!(
        "peak memory grew: {} → {} ({} → {} bytes, {}), over the allowed growth of {}%",
        bytes(old.pool_peak),
        bytes(f.pool_peak),
        old.pool_peak,
        f.pool_peak,
        percent(f.pool_peak as f64 / old.pool_peak.max(1) as f64),
        suite.bench.memory_growth * 100.0
    );
    for (new, was) in f.launches.iter().zip(&old.launches) {
        if new.registers != was.registers || new.local_bytes != was.local_bytes {
            text.push_str(&format!(
                "\n  `{}`: registers {} → {}, local memory {} → {} bytes per thread",
                new.entry, was.registers, new.registers, was.local_bytes, new.local_bytes
            ));
        }
    }
    vec![text]
}

/// Registers or local memory that changed since the baseline, for the trial's line.
pub(super) fn resource_changes(f: &Footprint, old: Option<&Entry>) -> Option<String> {
    let old = old.and_then(|e| e.footprint.as_ref())?;
    let changes: Vec<String> = f
        .launches
        .iter()
        .zip(&old.launches)
        .filter(|(n, o)| n.registers != o.registers || n.local_bytes != o.local_bytes)
        .map(|(n, o)| {
            format!(
                "`{}` regs {} → {}, local {} → {} B",
                n.entry, o.registers, n.registers, o.local_bytes, n.local_bytes
            )
        })
        .collect();
    (!changes.is_empty()).then(|| changes.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::Stored;
    use crate::gate::{combine, Comparison};

    fn compared(time: Comparison, speedup: Option<Comparison>) -> GateNote {
        let verdict = combine(time.verdict(0.03), speedup.map(|s| s.verdict(0.03)));
        let stored = Stored {
            median: 1e-5,
            low: 1e-5,
            high: 1e-5,
        };
        GateNote::Compared {
            verdict: TrialVerdict {
                verdict,
                time,
                speedup,
            },
            old: Box::new(Entry {
                kernel: "k".into(),
                case: String::new(),
                regime: "cold".into(),
                time: stored,
                time_samples: vec![],
                speedup: None,
                speedup_samples: vec![],
                footprint: None,
                reference: "naive".into(),
                kernelgate: "0.1.0".into(),
                date: "2026-11-21".into(),
            }),
            path: PathBuf::from("b.json"),
            remeasured: false,
            family: 1,
            max_slowdown: 0.03,
        }
    }

    #[test]
    fn a_slower_gpu_is_explained_not_called_a_regression() {
        // Seen under ncu: every launch 26x slower, the reference as much as the kernel.
        let time = Comparison {
            slowdown: 26.2,
            low: 25.8,
            high: 26.7,
            p: 1e-9,
            p_adjusted: 1e-9,
        };
        let speedup = Comparison {
            slowdown: 1.0,
            low: 0.99,
            high: 1.01,
            p: 0.8,
            p_adjusted: 0.8,
        };
        let text = note(&compared(time, Some(speedup)));
        assert!(text.starts_with("unchanged +2520.0%"), "{text}");
        assert!(
            text.contains("but its speedup over the reference held"),
            "{text}"
        );
        let regressed = Comparison {
            slowdown: 1.2,
            low: 1.15,
            high: 1.25,
            p: 1e-9,
            p_adjusted: 1e-9,
        };
        assert!(note(&compared(time, Some(regressed))).starts_with("REGRESSED"));
        let quiet = Comparison {
            slowdown: 1.001,
            low: 0.99,
            high: 1.01,
            p: 0.7,
            p_adjusted: 0.7,
        };
        assert!(
            !note(&compared(quiet, Some(speedup))).contains("held"),
            "nothing to explain"
        );
    }
}
