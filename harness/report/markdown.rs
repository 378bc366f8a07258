//! `markdown`: a summary for people (`KERNELGATE_MARKDOWN=path`, and `$GITHUB_STEP_SUMMARY`
//! when set): what needs attention first — failed, regressed, inconclusive, improved and
//! machine-slower trials — then every trial. GitHub caps a step summary at 1 MiB; this stays under `MAX_BYTES`.

use super::reading::{short, State};
use super::results::{GateNote, Results, Status, TrialRecord};
use super::{bytes, duration};
use crate::gate::{Reading, Verdict};
use crate::report::terminal::{
    cause, code_note, headline, identity_change, other_gpu_of, record_change as change,
};
use crate::stats::Summary;

/// The size the summary is kept under.
pub const MAX_BYTES: usize = 1_000_000;

fn cell(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', "<br>")
}

fn verdict(t: &TrialRecord) -> String {
    match State::of(t) {
        s @ (State::Regressed | State::Failed) => format!("**{}**", s.word()),
        s => s.word().into(),
    }
}

/// Why a trial needs attention, in one line: for a verdict, the medians it compared, its
/// adjusted p (the change has its own column) and what moved in its counters; otherwise the
/// record's first reason.
fn why(t: &TrialRecord) -> String {
    let compared = match &t.gate {
        Some(GateNote::Compared { baseline, .. }) => Some((
            baseline.median,
            format!("the baseline of {}", baseline.date),
        )),
        Some(GateNote::Paired { commit, .. }) => t
            .measurement
            .as_ref()
            .and_then(|m| Summary::of(&m.baseline_samples))
            .map(|s| (s.median, format!("base `{}`", short(commit)))),
        _ => None,
    };
    let why = match (compared, &t.verdict, &t.measurement) {
        (Some((old, against)), Some(v), Some(m)) if t.failure_detail.is_none() => format!(
            "{} → {} per run against {}; p = {:.1e} after Benjamini–Hochberg{}",
            duration(old),
            duration(m.time.median),
            cell(&against),
            v.shown().p_adjusted,
            // What changed in the trial, then in its counters: the cause, beside the change.
            cell(&cause(t))
        ),
        _ => return cell(&headline(t)),
    };
    let why = match other_gpu_of(t) {
        Some(g) => format!("{why}; baseline from another physical GPU ({})", cell(&g)),
        None => why,
    };
    match (identity_change(t), code_note(t)) {
        (None, Some(code)) => format!("{why}; {}", cell(&code)),
        _ => why,
    }
}

fn needs_attention(t: &TrialRecord) -> bool {
    t.status == Status::Failed || t.verdict.is_some_and(|v| v.verdict.needs_attention())
}

/// The summary: of a pool of GPU models, the devices side by side, then each device's run.
pub fn render(results: &Results) -> String {
    if !results.pool.is_empty() {
        return render_pool(results);
    }
    let count = |f: &dyn Fn(&TrialRecord) -> bool| results.trials.iter().filter(|t| f(t)).count();
    let is = |v: Verdict| move |t: &TrialRecord| t.verdict.is_some_and(|x| x.verdict == v);
    let device = results.described_device();
    let paired = match results.base {
        Some(_) => format!(
            ", {} identical code, {} new, {} changed, {} gone",
            count(&|t| t.decided() == Some(Verdict::IdenticalCode)),
            count(&|t| matches!(t.gate, Some(GateNote::New))),
            count(&|t| matches!(t.gate, Some(GateNote::Changed { .. }))),
            results.gone.len()
        ),
        None => {
            let new = count(&|t| matches!(t.gate, Some(GateNote::NoBaseline { .. })));
            format!(", {new} new (not gated)")
        }
    };
    // The machine's verdicts are counted where there are any (stored mode, with counters).
    let machine: String = [Verdict::MachineSlower, Verdict::MachineFaster]
        .into_iter()
        .map(|v| (count(&is(v)), v))
        .filter(|(n, _)| *n > 0)
        .map(|(n, v)| format!(", {n} {v}"))
        .collect();
    // How many of a verdict read otherwise beside their numbers, said after its count.
    let reads = |r: Reading| match count(&|t| crate::report::reading::reading(t) == r) {
        0 => String::new(),
        n => format!(" ({n} {})", r.phrase(Verdict::Unchanged)),
    };
    let compiled = match count(&|t| t.compiled.is_some()) {
        0 => String::new(),
        n => format!(", {n} compile trial(s)"),
    };
    let mut out = format!(
        "## kernelgate: {} failed, {} regressed, {} inconclusive{}, {} improved{machine}, {} unchanged{}, {} ignored{compiled}{paired}\n\n{device} · {} · {}kernelgate {} · {}\n\n",
        count(&|t| t.status == Status::Failed),
        count(&is(Verdict::Regressed)),
        count(&is(Verdict::Inconclusive)),
        reads(Reading::OnThreshold),
        count(&is(Verdict::Improved)),
        count(&is(Verdict::Unchanged)),
        reads(Reading::WithinThreshold),
        count(&|t| t.status == Status::Ignored),
        results.mode(),
        results.provenance.recorded().map_or(String::new(), |p| format!("{p} · ")),
        results.kernelgate,
        results.date
    );
    if let Some(why) = &results.provenance.incomplete {
        out.push_str(&format!(
            "**Incomplete:** the run was {}: the trials below finished; the others have no verdict.\n\n",
            cell(why)
        ));
    }
    let identical = results.identical.iter().flat_map(super::identical::lines);
    for line in identical.chain(super::closing::new_trials(results)) {
        out.push_str(&format!("{}\n\n", cell(&line)));
    }
    let attention: Vec<&TrialRecord> = results
        .trials
        .iter()
        .filter(|t| needs_attention(t))
        .collect();
    if !attention.is_empty() {
        out.push_str("### Needs attention\n\n| trial | verdict | change [95% interval] | why |\n| --- | --- | --- | --- |\n");
        for t in attention {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                cell(&t.name),
                verdict(t),
                change(t),
                why(t)
            ));
        }
        out.push('\n');
    }
    let variants = super::variants::lines(results);
    if !variants.is_empty() {
        out.push_str("### Variants: the fastest per case\n\n");
        out.extend(variants.iter().map(|l| format!("- {}\n", cell(l))));
        out.push('\n');
    }
    let speedup = (results.base_label()).map_or("speedup".into(), |b| format!("speedup over {b}"));
    out.push_str(&format!("### All trials\n\n| trial | median | {speedup} | roofline | memory | verdict | change [95% interval] |\n| --- | --- | --- | --- | --- | --- | --- |\n"));
    let footer = |shown: usize| {
        format!("\n_{} of {} trials shown: the summary is capped at 1 MiB; the results file has them all._\n", shown, results.trials.len())
    };
    for (i, t) in results.trials.iter().enumerate() {
        let (median, speedup, memory) = match &t.measurement {
            Some(m) => (
                duration(m.time.median),
                m.speedup
                    .map(|s| format!("{:.2}×", s.median))
                    .unwrap_or_else(|| "reference".into()),
                bytes(m.footprint.pool_peak),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        let roofline = (t.measurement.as_ref())
            .and_then(|m| super::recorded_roofline(m, results.device_info.as_ref()));
        let roofline = roofline.map_or("–".into(), |r| {
            format!("{:.0}% {}", 100.0 * r.fraction, r.bound)
        });
        let row = format!(
            "| `{}` | {median} | {speedup} | {roofline} | {memory} | {} | {} |\n",
            cell(&t.name),
            verdict(t),
            change(t)
        );
        if out.len() + row.len() + footer(i).len() > MAX_BYTES {
            out.push_str(&footer(i));
            return out;
        }
        out.push_str(&row);
    }
    for name in &results.gone {
        let row = format!("| `{}` | – | – | – | – | gone | – |\n", cell(name));
        if out.len() + row.len() > MAX_BYTES {
            break;
        }
        out.push_str(&row);
    }
    out
}

/// A pool's summary: each device's counts, every trial on every device side by side, then each
/// device's own summary while the whole stays under `MAX_BYTES`.
fn render_pool(results: &Results) -> String {
    use super::pool;
    let mut out = format!(
        "## kernelgate: a pool of {} GPU models, each decided as its own family\n\n{} · {}kernelgate {} · {}\n\n",
        results.pool.len(),
        results.mode(),
        results.provenance.recorded().map_or(String::new(), |p| format!("{p} · ")),
        results.kernelgate,
        results.date
    );
    for run in &results.pool {
        out.push_str(&format!("- {}\n", cell(&pool::headline(run))));
    }
    let devices: Vec<String> = results
        .pool
        .iter()
        .map(|r| cell(&r.described_device()))
        .collect();
    out.push_str(&format!(
        "\n### Side by side\n\n| trial | {} |\n| --- |{}\n",
        devices.join(" | "),
        " --- |".repeat(devices.len())
    ));
    let rows = pool::rows(results);
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.on.iter().map(|t| cell(&pool::cell(*t))).collect();
        let line = format!("| `{}` | {} |\n", cell(row.name), cells.join(" | "));
        if out.len() + line.len() > MAX_BYTES / 2 {
            out.push_str(&format!("\n_{i} of {} trials shown side by side: the summary is capped at 1 MiB; the results file has them all._\n", rows.len()));
            break;
        }
        out.push_str(&line);
    }
    for run in &results.pool {
        let on = format!("## {}: ", cell(&run.described_device()));
        let own = render(run).replacen("## kernelgate: ", &on, 1);
        match out.len() + own.len() < MAX_BYTES {
            true => out.push_str(&format!("\n{own}")),
            false => out.push_str(&format!(
                "\n_{}'s own summary left out: the summary is capped at 1 MiB._\n",
                cell(&run.described_device())
            )),
        }
    }
    out
}
