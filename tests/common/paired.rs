//! The paired results fixture, derived from the real stored run on an H200
//! (`tests/fixtures/results/h200-run.json`) until a real paired GPU run replaces it:
//! `BLESS=1 cargo test --test html_report` rewrites `tests/fixtures/results/h200-paired.json`.
//!
//! What the derivation does, trial by trial (the README beside the fixtures says the same):
//! - the base's samples are the stored run's real samples of that trial; the candidate's are
//!   the same samples half a run later (rotated), so every pair is an A/A of real noise;
//! - `saxpy::vec4` changed its launch: block 256 → 32, resident blocks per SM 8 → 32 (the
//!   SM's limit), so threads per SM 2048 → 1024: occupancy halved; at n = 1048576 its
//!   candidate samples are 16.6% slower (as measured on an H200 for that change);
//! - the `bfloat` suite is new since the base; `half`'s n = 1000003 cases changed their
//!   buffers; two `softmax::two_pass` trials are gone;
//! - verdicts come from kernelgate's own paired gate (Wilcoxon signed-rank on the per-round
//!   log-ratios, Hodges–Lehmann, Benjamini–Hochberg over the compared trials).

use kernelgate::baseline::Stored;
use kernelgate::gate::{decide, GateInput, Verdict};
use kernelgate::report::results::{BaseRevision, FailKind, GateNote, Results, Status, TrialRecord};
use kernelgate::stats::Summary;

/// The base revision the fixture pairs against.
pub const BASE: &str = "c7b4c3e0f1a2b3c4d5e6f708192a3b4c5d6e7f80";
/// The trial that regressed.
pub const REGRESSED: &str = "saxpy::vec4::n=1048576";

/// Whether a trial is new, changed, or compared with its base.
fn standing(name: &str) -> Option<GateNote> {
    if name.starts_with("bfloat::") {
        Some(GateNote::New)
    } else if name.starts_with("half::") && name.ends_with("::n=1000003") {
        Some(GateNote::Changed {
            why: "its buffers changed since the base (x: f16[1000000], y: f16[1000000] → x: f16[1000003], y: f16[1000003])".into(),
        })
    } else {
        None
    }
}

/// The paired run derived from `stored`.
pub fn derive(stored: &Results) -> Results {
    let mut out = stored.clone();
    out.base = Some(BaseRevision {
        rev: "origin/main".into(),
        commit: BASE.into(),
    });
    out.gone = vec![
        "softmax::two_pass::rows=4096,cols=128".into(),
        "softmax::two_pass::rows=4096,cols=1024".into(),
    ];
    out.provenance.commit = Some("5e1f9d2a7b3c4d5e6f708192a3b4c5d6e7f8091a".into());
    out.provenance.branch = Some("saxpy-vec4-block".into());
    out.provenance.dirty = Some(false);
    out.provenance.started = Some("2026-11-22T14:03:07Z".into());
    let mut inputs = Vec::new();
    let mut compared = Vec::new();
    for (i, t) in out.trials.iter_mut().enumerate() {
        derive_trial(t);
        if t.gate.is_none() {
            if let Some(m) = &t.measurement {
                inputs.push(GateInput {
                    old_times: m.baseline_samples.clone(),
                    new_times: m.time_samples.clone(),
                    speedups: None,
                    max_slowdown: m.max_slowdown,
                    paired: Some(
                        m.time_samples
                            .iter()
                            .zip(&m.baseline_samples)
                            .map(|(c, b)| c / b)
                            .collect(),
                    ),
                });
                compared.push(i);
            }
        }
    }
    let family = compared.len();
    for (i, v) in compared.into_iter().zip(decide(&inputs)) {
        let t = &mut out.trials[i];
        t.verdict = Some(v);
        t.gate = Some(GateNote::Paired {
            rev: "origin/main".into(),
            commit: BASE.into(),
            remeasured: false,
            family,
        });
        if v.verdict == Verdict::Regressed {
            t.status = Status::Failed;
            t.failure = Some(FailKind::Performance);
        }
    }
    out
}

/// One trial as the paired run would have recorded it; the gate's note stays `None` for the
/// trials to compare.
fn derive_trial(t: &mut TrialRecord) {
    t.status = Status::Passed;
    t.failure = None;
    t.verdict = None;
    t.gate = None;
    t.breaches.clear();
    t.resource_changes.clear();
    if let Some(c) = &mut t.commands {
        c.rebless = None;
    }
    let Some(m) = &mut t.measurement else {
        return;
    };
    let base = m.time_samples.clone();
    let mut footprint = m.footprint.clone();
    if t.name.starts_with("saxpy::vec4::") {
        for l in &mut footprint.launches {
            l.block_threads = 32;
            l.blocks_per_sm = 32;
        }
    }
    m.reference = Some(format!("base {}", &BASE[..7]));
    m.speedup = None;
    m.speedup_samples.clear();
    m.baseline_samples.clear();
    m.baseline_footprint = None;
    if let Some(note) = standing(&t.name) {
        m.footprint = footprint;
        t.gate = Some(note);
        return;
    }
    let slower = if t.name == REGRESSED { 1.166 } else { 1.0 };
    let n = base.len();
    let candidate: Vec<f64> = (0..n).map(|i| base[(i + n / 2) % n] * slower).collect();
    let ratios: Vec<f64> = base.iter().zip(&candidate).map(|(b, c)| b / c).collect();
    m.time = Stored::from(Summary::of(&candidate).expect("samples"));
    m.time_samples = candidate;
    m.speedup = Summary::of(&ratios).map(Stored::from);
    m.speedup_samples = ratios;
    m.baseline_samples = base;
    m.baseline_footprint = Some(m.footprint.clone());
    m.footprint = footprint;
}
