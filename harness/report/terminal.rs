//! `line`, `note`, `failure`: what a person reads for one trial in a terminal — its line, the
//! gate's note, and why it failed with the commands to re-run, profile and re-bless it —
//! rendered from the runner's typed record alone. Plain-text reporters (JUnit, annotations)
//! take the same text; Markdown and HTML render the record their own way.

pub use super::reading::{
    cause, code_note, identity_change, other_gpu, other_gpu_of, reading, verdict_words,
};
use super::reading::{short, stored_threshold};
use super::results::{Breach, GateNote, ResourceChange, Status, TrialRecord};
use super::{bytes, duration, footprint};
use crate::device::DeviceInfo;
use crate::failure::{FailKind, TrialFailure};
use crate::gate::{
    percent, with_spread, Basis, Comparison, Reading, TrialVerdict, Verdict, REMEASURE_EFFORT,
};

/// "change [low, high]": a comparison's estimate and interval, as signed percentages.
pub fn change(c: &Comparison) -> String {
    interval(c.slowdown, c.low, c.high)
}

/// "estimate [low, high]", each a signed percentage.
fn interval(estimate: f64, low: f64, high: f64) -> String {
    format!(
        "{} [{}, {}]",
        percent(estimate),
        percent(low),
        percent(high)
    )
}

/// A trial's change with its interval — the one its verdict is about — or `–` when it was not
/// compared.
pub fn record_change(r: &TrialRecord) -> String {
    r.verdict
        .map(|v| verdict_change(&v))
        .unwrap_or_else(|| "–".into())
}

/// The interval every report prints beside a verdict's label: the change of the comparison the
/// verdict is about (`gate::semantics`) — `+8.1% [+6.0%, +10.2%]` in time, or
/// `speedup vs reference -0.2% [-0.9%, +0.5%]`.
pub fn verdict_change(v: &TrialVerdict) -> String {
    match (v.shown_basis(), &v.speedup) {
        (Basis::Speedup, Some(s)) => format!("speedup vs reference {}", speedup_change(s)),
        _ => change(&v.time),
    }
}

/// What a verdict's label leaves out, said after it: when it is about the time and the speedup
/// over the reference moved on its own, `speedup vs reference +x% [..]`; when it is about the
/// speedup, the time's change and why it did not decide (`max_slowdown`: the threshold the
/// trial was gated with).
pub fn verdict_aside(v: &TrialVerdict, max_slowdown: f64) -> Option<String> {
    let s = v.speedup.as_ref()?;
    v.verdict.about()?;
    match v.shown_basis() {
        Basis::Speedup => Some(format!(
            "time {}, the reference's too: the whole GPU ran slower, not this kernel",
            change(&v.time)
        )),
        Basis::Time => {
            let moved = s.verdict(max_slowdown);
            (moved != Verdict::Unchanged && moved != v.verdict)
                .then(|| format!("speedup vs reference {}", speedup_change(s)))
        }
    }
}

/// A speedup comparison as the change in speedup: its slowdown factor `s` is old/new, so the
/// change is 1/s − 1 and the interval flips.
fn speedup_change(s: &Comparison) -> String {
    interval(1.0 / s.slowdown, 1.0 / s.high, 1.0 / s.low)
}

pub(super) fn resource_text(c: &ResourceChange) -> String {
    if let Some([old, new]) = &c.algorithm {
        return format!("`{}` algorithm {old} → {new}", c.entry);
    }
    format!(
        "`{}` regs {} → {}, local {} → {} B",
        c.entry, c.registers[0], c.registers[1], c.local_bytes[0], c.local_bytes[1]
    )
}

/// ` since 1a2b3c4`, when the commit that added the trial is known.
pub fn added_in(added: &Option<String>) -> String {
    added
        .as_deref()
        .map(|c| format!(" since {c}"))
        .unwrap_or_default()
}

/// The gate's note for a trial's line: the verdict with its change, or why there is none.
pub fn note(r: &TrialRecord) -> String {
    let Some(gate) = &r.gate else {
        return String::new();
    };
    match gate {
        GateNote::Blessed => "blessed".into(),
        GateNote::NoBaseline { elsewhere, added } if elsewhere.is_empty() => format!(
            "new (not gated){}: no baseline — bless it with KERNELGATE_BLESS=1 on a GPU of this kind",
            added_in(added)
        ),
        GateNote::NoBaseline { elsewhere, added } => format!(
            "new (not gated){}: no baseline for this device — bless it with KERNELGATE_BLESS=1 on a GPU of this kind (recorded on {})",
            added_in(added),
            elsewhere
                .iter()
                .map(|f| f.describe())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        GateNote::OtherRegime { regime } => {
            format!("baseline measured in the `{regime}` regime, not comparable — re-bless")
        }
        GateNote::BaselineError { message } => format!("baseline unusable: {message}"),
        GateNote::Unreliable {
            discarded,
            rounds,
            contended,
            others,
        } => unreliable(*discarded, *rounds, *contended, others),
        GateNote::RemeasureFailed => "INCONCLUSIVE, and measuring it again failed".into(),
        GateNote::New => "new: not at the base revision, not compared".into(),
        GateNote::IdenticalCode {
            commit,
            timed: false,
            ..
        } => format!(
            "identical code to base {}: not timed, correctness not run (the base passed it)",
            short(commit)
        ),
        GateNote::IdenticalCode { commit, .. } => {
            let timed = r
                .verdict
                .map(|v| format!(": {} (an A/A pair)", change(&v.time)))
                .unwrap_or_default();
            format!(
                "identical code to base {}, timed anyway (KERNELGATE_TIME_IDENTICAL){timed}",
                short(commit)
            )
        }
        GateNote::Changed { why } => format!("changed: {why}; not compared"),
        GateNote::Compared { remeasured, .. } | GateNote::Paired { remeasured, .. } => {
            let Some(verdict) = &r.verdict else {
                return String::new();
            };
            let (max_slowdown, origin) = stored_threshold(r);
            let change = format!("{}{origin}", verdict_change(verdict));
            let again = remeasured.then_some(", after re-measuring").unwrap_or_default();
            let held = verdict_aside(verdict, max_slowdown)
                .map(|a| format!(" ({a})"))
                .unwrap_or_default();
            let change = match gate {
                GateNote::Paired { commit, .. } => {
                    format!("{change} vs base {} (paired)", short(commit))
                }
                _ => change,
            };
            let why = cause(r);
            let matched = r
                .measurement
                .as_ref()
                .map(super::counters::matched)
                .unwrap_or_default();
            let text = match (verdict.verdict, reading(r)) {
                (Verdict::Inconclusive, Reading::OnThreshold) => format!("ON THE THRESHOLD {change}{again}{held}: a change of max_slowdown itself (threshold {}), measured finer than the precision target — more samples cannot resolve it (KERNELGATE_STRICT=1 fails it)", percent(1.0 + max_slowdown)),
                (Verdict::Unchanged, Reading::WithinThreshold) => format!("within threshold {change}{again}{held}: a real change, smaller than the threshold {}", percent(1.0 + max_slowdown)),
                (Verdict::Inconclusive, _) => format!("INCONCLUSIVE {change}{again}{held}: too noisy to tell (KERNELGATE_STRICT=1 fails it)"),
                (Verdict::Regressed, _) => format!("REGRESSED {change}{again}{why}"),
                (v @ (Verdict::MachineSlower | Verdict::MachineFaster), _) => format!(
                    "{v} {change}, confirmed in a fresh worker: the same code and launches as the baseline, {matched} — the machine's change, not the code's (KERNELGATE_STRICT_TIME=1 fails a slowdown)"
                ),
                (Verdict::Improved, _) => format!("improved {change}{again}{held}{why}"),
                (v, _) => format!("{v} {change}{again}{held}"),
            };
            // A machine verdict already says the code is the baseline's; a change's cause
            // already began with what changed in the trial.
            let said = match verdict.verdict {
                Verdict::MachineSlower | Verdict::MachineFaster => true,
                Verdict::Regressed | Verdict::Improved => identity_change(r).is_some(),
                _ => false,
            };
            let text = match code_note(r) {
                Some(code) if !said => format!("{text} · {code}"),
                _ => text,
            };
            match &r.evidence {
                Some(e) if !e.merged => format!("deferred to `kernelgate merge` (this shard's trials alone read: {text})"),
                _ => text,
            }
        }
    }
}

/// Why a trial's times were not gated: throttled rounds, rounds another context held the GPU
/// in, the other processes NVML saw.
fn unreliable(discarded: usize, rounds: usize, contended: usize, others: &[String]) -> String {
    let why: Vec<String> = [
        (discarded > 0)
            .then(|| format!("the SM clock was throttled in {discarded} of {rounds} rounds")),
        (contended > 0)
            .then(|| format!("another process held the GPU in {contended} of {rounds} rounds")),
        (!others.is_empty())
            .then(|| format!("{} used the GPU while it was timed", others.join(", "))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let why = if why.is_empty() {
        "it has no samples".into()
    } else {
        why.join("; ")
    };
    format!(
        "UNRELIABLE: {why}; not gated (its times are not this kernel's alone: re-run when the GPU is free)"
    )
}

/// A trial's line before libtest's verdict: a compile trial's counts, a measured trial's
/// figures, footprint and gate note; empty otherwise.
pub fn line(r: &TrialRecord, device: Option<&DeviceInfo>) -> String {
    if let Some(c) = &r.compiled {
        let mut line = format!(
            "{} source(s) for {}, {} compiled, {} from cache",
            c.sources,
            c.arch,
            c.fresh,
            c.sources - c.fresh - c.built
        );
        let built = (c.built > 0).then_some(c.built);
        line.extend(built.map(|n| format!(", {n} not compiled (PTX/CUBIN/fatbin, library calls)")));
        line.extend((!c.fp64.is_empty()).then(|| format!(" · {}", c.fp64)));
        return line;
    }
    let Some(m) = &r.measurement else {
        // A paired trial decided without timing: `identical code to base 1a2b3c4: ...`.
        return note(r);
    };
    let mut line = device.map_or(String::new(), |d| super::figures(m, d));
    line.push_str(&format!("  │ {}", footprint(&m.footprint)));
    line.extend(super::counters::short(m).map(|c| format!(" · {c}")));
    line.extend(
        m.counter_gate
            .as_ref()
            .map(|g| format!(" · counter gate {g}")),
    );
    line.extend(super::counters::declared_work(m).map(|w| format!(" · warning: {w}")));
    if !r.resource_changes.is_empty() {
        let changes: Vec<String> = r.resource_changes.iter().map(resource_text).collect();
        // Against what the trial was compared: the paired base, or the stored baseline.
        let since = match &r.gate {
            Some(GateNote::Paired { commit, .. }) => format!("base {}", short(commit)),
            _ => "the baseline".into(),
        };
        line.push_str(&format!(" (since {since}: {})", changes.join("; ")));
    }
    let note = note(r);
    line.extend((!note.is_empty()).then(|| format!("  │ {note}")));
    line
}

fn breach_text(b: &Breach) -> String {
    match b {
        Breach::Fp64 { message } => message.clone(),
        Breach::MemoryBudget { peak, budget } => format!(
            "over memory_budget: the case peaked at {} ({peak} bytes: its buffers and scratch, the pool's high-water mark), the budget is {}",
            bytes(*peak),
            bytes(*budget)
        ),
        Breach::Registers {
            entry,
            registers,
            max,
        } => format!("`{entry}` uses {registers} registers per thread, over max_registers = {max}"),
        Breach::Spills { entry, local_bytes } => format!(
            "`{entry}` uses {local_bytes} bytes of local memory per thread (spills or a run-time-indexed array) and the suite says spills = \"forbid\""
        ),
        Breach::MemoryGrowth {
            old,
            new,
            allowed,
            changes,
        } => {
            let mut text = format!(
                "peak memory grew: {} → {} ({old} → {new} bytes, {}), over the allowed growth of {}%",
                bytes(*old),
                bytes(*new),
                percent(*new as f64 / (*old).max(1) as f64),
                allowed * 100.0
            );
            text.extend(changes.iter().map(|c| format!(
                "\n  `{}`: registers {} → {}, local memory {} → {} bytes per thread",
                c.entry, c.registers[0], c.registers[1], c.local_bytes[0], c.local_bytes[1]
            )));
            text
        }
        Breach::CounterGrowth {
            counter,
            old,
            new,
            allowed,
        } => format!(
            "{} grew {} ({} → {}), over the suite's allowed growth of {}% (an exact count: no statistics)",
            counter.label(),
            percent(new / old.max(f64::MIN_POSITIVE)),
            counter.format(*old),
            counter.format(*new),
            allowed * 100.0
        ),
        Breach::CountersUnavailable { why } => format!(
            "the suite's counter gate could not be applied (KERNELGATE_REQUIRE_COUNTERS is set): {why}"
        ),
    }
}

/// The gate's evidence for a failing verdict: the change, how it was tested, and what it was
/// compared with (a stored baseline, or the base revision in paired mode).
fn evidence(r: &TrialRecord) -> Option<String> {
    let (Some(gate), Some(verdict), Some(m)) = (&r.gate, &r.verdict, &r.measurement) else {
        return None;
    };
    let (old, against, method, trailer) = match gate {
        GateNote::Compared {
            baseline, family, ..
        } => {
            let spread = if baseline.runs > 1 {
                format!(
                    " × the spread {} between the baseline's {} runs: threshold {}",
                    percent(baseline.spread),
                    baseline.runs,
                    percent(1.0 + with_spread(m.max_slowdown, baseline.spread))
                )
            } else {
                String::new()
            };
            let mut trailer = String::new();
            if let (Some(s), Some(old), Some(new)) =
                (&verdict.speedup, baseline.speedup, &m.speedup)
            {
                trailer.push_str(&format!(
                    "\n  speedup vs {}: {old:.2}× → {:.2}×, {} (p = {:.2e})",
                    baseline.reference,
                    new.median,
                    speedup_change(s),
                    s.p_adjusted
                ));
            }
            let mut source = format!(
                "\n  baseline: {} (recorded {} by kernelgate {})",
                baseline.path, baseline.date, baseline.kernelgate
            );
            if let Some(gpus) = other_gpu(baseline) {
                source.push_str(&format!(
                    "\n  the baseline came from another physical GPU ({gpus}): hosts of one model differ by several percent; KERNELGATE_BLESS=add on this one adds a run and its spread"
                ));
            }
            (
                baseline.median,
                other_gpu(baseline)
                    .map(|g| format!(" against a baseline from another physical GPU ({g})"))
                    .unwrap_or_default(),
                format!(
                    "p = {:.2e} after Benjamini–Hochberg over {family} comparison(s); max_slowdown {}%{spread}",
                    verdict.time.p_adjusted,
                    m.max_slowdown * 100.0
                ),
                (trailer, source),
            )
        }
        GateNote::Paired {
            rev,
            commit,
            family,
            ..
        } => (
            crate::stats::Summary::of(&m.baseline_samples).map_or(f64::NAN, |s| s.median),
            " against the base revision".to_string(),
            format!(
                "paired per-round ratios: Hodges–Lehmann, p = {:.2e} by Wilcoxon signed-rank after Benjamini–Hochberg over {family} comparison(s); max_slowdown {}%",
                verdict.time.p_adjusted,
                m.max_slowdown * 100.0
            ),
            (
                String::new(),
                format!("\n  base: KERNELGATE_BASE={rev} ({commit})"),
            ),
        ),
        _ => return None,
    };
    let what = match verdict.verdict {
        Verdict::Regressed => format!("regressed{against}"),
        Verdict::Inconclusive if reading(r) == Reading::OnThreshold => format!("on the threshold{against} (KERNELGATE_STRICT is set): the change is max_slowdown itself, measured finer than the precision target"),
        Verdict::Inconclusive => format!("inconclusive{against} (KERNELGATE_STRICT is set): too noisy to tell whether it is meaningfully slower"),
        Verdict::MachineSlower => format!("machine-slower{against} (KERNELGATE_STRICT_TIME is set): confirmed slower in a fresh worker with the same code, launches and exact counters"),
        _ => return None,
    };
    let mut out = format!(
        "{what}: {} → {} per run, {} ({method})",
        duration(old),
        duration(m.time.median),
        change(&verdict.time),
    );
    out.push_str(&trailer.0);
    out.extend(
        cause(r)
            .strip_prefix(" — ")
            .map(|w| format!("\n  cause: {w}")),
    );
    if gate.remeasured() {
        out.push_str(&format!(
            "\n  measured again with {REMEASURE_EFFORT}x the samples after an inconclusive first run"
        ));
    }
    out.push_str(&trailer.1);
    Some(out)
}

/// Why a failed trial failed, every reason, then the commands to re-run and profile it (and
/// to re-bless it, for performance failures against a stored baseline).
pub fn failure(r: &TrialRecord) -> String {
    let mut out = reasons(r).join("\n");
    if r.commands.is_some() {
        let c = r.repeat();
        out.push_str(&format!("\n  rerun:   {}", c.rerun));
        out.extend(c.profile.as_ref().map(|p| format!("\n  profile: {p}")));
        if let (Some(FailKind::Performance), Some(b)) = (r.failure, r.rebless()) {
            out.push_str(&format!("\n  rebless: {b}"));
        }
    }
    out
}

/// A trial in one line, for reporters with room for one (JUnit's `message`, a table cell):
/// a failed trial's first reason, an ignored one's reason, a measured one's gate note, a
/// compile trial's counts.
pub fn headline(r: &TrialRecord) -> String {
    match r.status {
        Status::Ignored => r.ignored.clone().unwrap_or_else(|| "ignored".into()),
        Status::Failed => reasons(r)
            .first()
            .and_then(|t| t.lines().next())
            .unwrap_or("failed")
            .to_string(),
        Status::Passed if r.measurement.is_some() || r.gate.is_some() => note(r),
        Status::Passed => line(r, None),
    }
}

/// Every reason a failed trial failed: its own failure, the gate's evidence or an unusable
/// baseline, the limits it broke; each may run over several lines.
pub fn reasons(r: &TrialRecord) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let remeasure = matches!(r.gate, Some(GateNote::RemeasureFailed));
    if let Some(f) = &r.failure_detail {
        let mut text = if remeasure {
            format!("inconclusive, and measuring it again ({REMEASURE_EFFORT}x the samples) failed: {f}")
        } else {
            f.to_string()
        };
        // Failures the worker found in the kernel's own trial point at its declaration.
        let kernel_trial = r.commands.as_ref().is_some_and(|c| c.profile.is_some());
        let from_the_kernel = kernel_trial
            && !matches!(
                f,
                TrialFailure::Timeout { .. }
                    | TrialFailure::Crashed { .. }
                    | TrialFailure::Unavailable(_)
            );
        if from_the_kernel {
            text.push_str(&format!("\n  kernel declared at {}:{}", r.file, r.line));
        }
        parts.push(text);
    }
    match &r.gate {
        Some(GateNote::BaselineError { message }) => parts.push(message.clone()),
        Some(GateNote::NoBaseline { .. } | GateNote::OtherRegime { .. })
            if r.failure == Some(FailKind::Infrastructure) && r.failure_detail.is_none() =>
        {
            parts.push(format!("{} (KERNELGATE_REQUIRE_BASELINE is set)", note(r)));
        }
        _ => parts.extend(evidence(r)),
    }
    parts.extend(r.breaches.iter().map(breach_text));
    parts
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreliable_trial_says_who_else_used_the_gpu() {
        assert_eq!(
            unreliable(0, 40, 16, &["pid 4242 (python3)".into()]),
            "UNRELIABLE: another process held the GPU in 16 of 40 rounds; pid 4242 (python3) used the GPU while it was timed; not gated (its times are not this kernel's alone: re-run when the GPU is free)"
        );
        assert!(unreliable(12, 40, 0, &[])
            .starts_with("UNRELIABLE: the SM clock was throttled in 12 of 40 rounds; not gated"));
    }
}
