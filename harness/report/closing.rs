//! The run's closing lines in a terminal: where the time went ([`summary`]), the warnings for
//! trials that passed though inconclusive or `machine-slower`, and paired mode's line (what was
//! compared, identical, new, changed, gone).

use super::duration;
use super::results::{GateNote, Results, RunTotals, Status};
use crate::gate::{Reading, Verdict};

/// The run's closing lines: where the time went, the clocks, the launch floor, the profile.
pub fn summary(t: &RunTotals, wall: f64) -> Vec<String> {
    let mut out = vec![
        format!(
            "kernelgate: {} trial(s) measured in {wall:.1} s of wall time: setup {:.1} s, correctness {:.1} s, sampling {:.1} s (kernel time in samples {:.3} s)",
            t.trials_measured, t.setup_seconds, t.check_seconds, t.sampled_seconds, t.kernel_seconds
        ),
        format!(
            "kernelgate: NVRTC {} compiled, {} from cache; GPU worker started {} time(s)",
            t.compiled, t.cached, t.worker_starts
        ),
    ];
    if t.counter_reads > 0 {
        let profile = t.counter_profile.as_ref().map_or(String::new(), |p| {
            format!(
                "; {} configuration(s), {} pass(es), {} range(s): {}",
                p.get("configurations"),
                p.get("passes"),
                p.get("ranges"),
                p.describe(&super::totals::COUNTERS, 2)
            )
        });
        out.push(format!(
            "kernelgate: hardware counters read for {} trial(s) in {:.1} s (after all timing; CUPTI profiler set-up {:.2} s{profile})",
            t.counter_reads, t.counter_seconds, t.counter_setup_seconds
        ));
    }
    if let Some(s) = crate::stats::Summary::of(&t.clock_mhz) {
        out.push(format!(
            "kernelgate: SM clock while sampling {:.0} / {:.0} / {:.0} MHz (min / median / max); {} round(s) dropped as throttled; {} trial(s) unreliable",
            s.min, s.median, s.max, t.dropped_rounds, t.unreliable
        ));
    }
    if let Some(s) = crate::stats::Summary::of(&t.celsius) {
        out.push(format!(
            "kernelgate: GPU temperature while sampling {:.0} / {:.0} / {:.0} °C (min / median / max)",
            s.min, s.median, s.max
        ));
    }
    if let Some(floor) = t.launch_floor {
        out.push(format!(
            "kernelgate: launch floor (event-timed empty kernel) {}; {} trial(s) under {}x it timed as CUDA-graph replays",
            duration(floor),
            t.batched,
            crate::measure::FLOOR_FACTOR
        ));
    }
    out.extend(t.profile_lines());
    out
}

/// The warning naming the stored-mode trials that passed with `verdict`, which `what` says;
/// `None` where there are none.
fn passed_with(
    results: &Results,
    verdict: Verdict,
    reading: impl Fn(Reading) -> bool,
    what: &str,
) -> Option<String> {
    let names: Vec<&str> = results
        .trials
        .iter()
        .filter(|r| {
            r.status == Status::Passed
                && matches!(r.gate, Some(GateNote::Compared { .. }))
                && r.verdict.is_some_and(|v| v.verdict == verdict)
                && reading(super::terminal::reading(r))
        })
        .map(|r| r.name.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "kernelgate: WARNING: {} trial(s) {what}: {}",
            names.len(),
            names.join(", ")
        )
    })
}

/// The warning for trials that passed though still inconclusive after re-measuring.
/// Those whose interval was narrow and held the threshold itself are said apart: no
/// re-measure could resolve them.
pub fn inconclusive_warning(results: &Results) -> Option<String> {
    let noisy = passed_with(
        results,
        Verdict::Inconclusive,
        |r| r != Reading::OnThreshold,
        "INCONCLUSIVE even after re-measuring (they passed; KERNELGATE_STRICT=1 fails them)",
    );
    let on = passed_with(
        results,
        Verdict::Inconclusive,
        |r| r == Reading::OnThreshold,
        "ON THE THRESHOLD: each change is max_slowdown itself, measured finer than the precision target, which more samples cannot resolve (they passed; KERNELGATE_STRICT=1 fails them)",
    );
    let lines: Vec<String> = noisy.into_iter().chain(on).collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The warning for trials that passed as `machine-slower`: confirmed slower with nothing of
/// the trial changed.
pub fn machine_warning(results: &Results) -> Option<String> {
    passed_with(
        results,
        Verdict::MachineSlower,
        |_| true,
        "machine-slower: confirmed slower with the same code, launches and exact counters as the baseline, so the machine's change (they passed; KERNELGATE_STRICT_TIME=1 fails them)",
    )
}

/// Stored mode's line for trials without a baseline on this device: new, not gated, each with
/// the commit that added it where git knows it (the terminal prefixes `kernelgate: `, the
/// Markdown summary takes it as it is). `None` when there are none.
pub fn new_trials(results: &Results) -> Option<String> {
    let new: Vec<String> = results
        .trials
        .iter()
        .filter_map(|t| match &t.gate {
            Some(GateNote::NoBaseline { added, .. }) => Some(format!(
                "{}{}",
                t.name,
                crate::report::terminal::added_in(added)
            )),
            _ => None,
        })
        .collect();
    (!new.is_empty()).then(|| format!(
        "{} trial(s) new (not gated): no baseline on this device, so they pass without a verdict (KERNELGATE_REQUIRE_BASELINE=1 fails them); bless them on a GPU of this kind: {}",
        new.len(),
        new.join(", ")
    ))
}

/// Paired mode's closing line: the base, how many trials were compared, and what was not.
pub fn paired_summary(results: &Results) -> Option<String> {
    results.base.as_ref()?;
    let named = |f: &dyn Fn(&GateNote) -> bool| -> Vec<&str> {
        results
            .trials
            .iter()
            .filter(|t| t.gate.as_ref().is_some_and(f))
            .map(|t| t.name.as_str())
            .collect()
    };
    let compared = named(&|g| matches!(g, GateNote::Paired { .. })).len();
    let identical = named(&|g| matches!(g, GateNote::IdenticalCode { .. })).len();
    let mut line = format!(
        "kernelgate: {}: {compared} trial(s) compared, {identical} identical code",
        results.mode()
    );
    let new = named(&|g| matches!(g, GateNote::New));
    let changed = named(&|g| matches!(g, GateNote::Changed { .. }));
    for (what, names) in [("new", new), ("changed", changed)] {
        if !names.is_empty() {
            line.push_str(&format!("; {what}: {}", names.join(", ")));
        }
    }
    if !results.gone.is_empty() {
        line.push_str(&format!("; gone: {}", results.gone.join(", ")));
    }
    Some(line)
}
