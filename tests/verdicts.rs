//! Every verdict label that a report prints agrees with the interval printed beside it
//! (`gate::semantics`): random pairs of time and speedup comparisons are decided the way a run
//! decides them — some confirmed changes attributed to the machine (`machine-slower`,
//! `machine-faster`) as `runner::attribute` does, some trials paired A/A pairs of identical
//! code (`KERNELGATE_TIME_IDENTICAL=1`) — put into a trial's record, rendered by the terminal
//! line, the `compare` table and the Markdown summary, and the printed label and interval are
//! read back and checked with `Verdict::agrees`. Seen before this: `improved +0.1% [-0.4%,
//! +0.7%]`. Where the plain word would mislead, the words read back are checked too: `within
//! threshold` is a significant change whose whole interval lies inside the threshold (seen:
//! `+2.5% [+2.3%, +2.7%] p=1.8e-20 unchanged`), `on the threshold` an interval no wider than the
//! precision target that holds the threshold (seen: `INCONCLUSIVE +3.0% [+2.8%, +3.1%] … too
//! noisy to tell`).

use kernelgate::gate::{combine, Basis, Comparison, Reading, Strictness, TrialVerdict, Verdict};
use kernelgate::report::compare::{table, Row};
use kernelgate::report::results::{GateNote, Results, Status, TrialRecord};
use kernelgate::report::{markdown, terminal};
use std::path::Path;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

/// A comparison whose interval ends stay 0.3% away from 1 and the thresholds `1 / t` and `t`,
/// so a label read back from one-decimal percentages is judged as it was decided. One in four
/// is narrow: around the threshold (on it, or wider than the precision target) or a
/// significant change inside it — where the plain words misled.
fn comparison(rng: &mut Lcg, t: f64) -> Comparison {
    let far =
        |v: f64| (v - t).abs() > 0.003 && (v - 1.0 / t).abs() > 0.003 && (v - 1.0).abs() > 0.003;
    let end = |rng: &mut Lcg| loop {
        let v = 0.85 + 0.3 * rng.unit();
        if far(v) {
            return v;
        }
    };
    let (low, high) = match rng.unit() {
        u if u < 0.125 => (
            t - 0.003 - 0.012 * rng.unit(),
            t + 0.003 + 0.012 * rng.unit(),
        ),
        u if u < 0.25 => loop {
            let (a, b) = (
                1.003 + (t - 1.006) * rng.unit(),
                1.003 + (t - 1.006) * rng.unit(),
            );
            if far(a) && far(b) {
                break (a.min(b), a.max(b));
            }
        },
        _ => {
            let (a, b) = (end(rng), end(rng));
            (a.min(b), a.max(b))
        }
    };
    let p = if rng.unit() < 0.6 { 1e-4 } else { 0.3 };
    Comparison {
        slowdown: (low * high).sqrt(),
        low,
        high,
        p,
        p_adjusted: p,
    }
}

/// `+8.1% [+6.0%, +10.2%]` read back as a comparison (slowdown factors); with
/// `speedup vs reference` in front, as the speedup's (whose change is 1/s − 1, interval flipped).
fn read(text: &str, p_adjusted: f64) -> Comparison {
    let (speedup, rest) = match text.trim().strip_prefix("speedup vs reference ") {
        Some(rest) => (true, rest),
        None => (false, text.trim()),
    };
    let nums: Vec<f64> = rest
        .split(['[', ']', ','])
        .filter_map(|s| s.trim().trim_end_matches('%').parse::<f64>().ok())
        .take(3)
        .collect();
    assert_eq!(nums.len(), 3, "an interval in `{text}`");
    let f = |x: f64| 1.0 + x / 100.0;
    let (mid, lo, hi) = (f(nums[0]), f(nums[1]), f(nums[2]));
    let (slowdown, low, high) = if speedup {
        (1.0 / mid, 1.0 / hi, 1.0 / lo)
    } else {
        (mid, lo, hi)
    };
    Comparison {
        slowdown,
        low,
        high,
        p: p_adjusted,
        p_adjusted,
    }
}

/// The verdict whose label `text` starts with (`REGRESSED`, `**regressed**`, `identical code
/// to base ...`, `within threshold`, `ON THE THRESHOLD`), how it reads, and what follows.
fn label(text: &str) -> (Verdict, Reading, &str) {
    let text = text.trim().trim_start_matches('*');
    let phrases = Verdict::ALL.iter().map(|v| (*v, Reading::Plain)).chain([
        (Verdict::Unchanged, Reading::WithinThreshold),
        (Verdict::Inconclusive, Reading::OnThreshold),
    ]);
    phrases
        .filter_map(|(v, r)| {
            let words = r.phrase(v);
            let head = text.get(..words.len())?;
            head.eq_ignore_ascii_case(words)
                .then(|| (v, r, text[words.len()..].trim_start_matches('*')))
        })
        .max_by_key(|(v, r, _)| r.phrase(*v).len())
        .unwrap_or_else(|| panic!("`{text}` is not a verdict"))
}

/// Whether interval `c`, read back from one-decimal percentages, holds what `reading` claims
/// of it at threshold `t` and `precision` (0.06% of rounding allowed).
fn holds(reading: Reading, c: &Comparison, t: f64, precision: f64) -> bool {
    let slack = 6e-4;
    match reading {
        Reading::Plain => true,
        Reading::WithinThreshold => {
            (c.low > 1.0 - slack || c.high < 1.0 + slack)
                && c.low >= 1.0 / t - slack
                && c.high <= t + slack
                && c.p_adjusted < kernelgate::gate::FDR
        }
        Reading::OnThreshold => {
            c.low <= t + slack
                && t <= c.high + slack
                && (c.high - c.low) / 2.0 / c.slowdown
                    <= precision * std::f64::consts::SQRT_2 + slack
        }
    }
}

#[test]
fn every_rendered_label_agrees_with_the_interval_beside_it() {
    let example = Results::load(Path::new("tests/fixtures/results/example.json")).unwrap();
    let template = example
        .trials
        .iter()
        .find(|t| {
            matches!(t.gate, Some(GateNote::Compared { .. }))
                && t.measurement.as_ref().is_some_and(|m| m.speedup.is_some())
        })
        .expect("a compared kernel with a speedup")
        .clone();
    let mut rng = Lcg(5);
    let mut seen = std::collections::BTreeMap::<(String, String), usize>::new();
    for i in 0..3000 {
        let max_slowdown = [0.02, 0.03, 0.05][i % 3];
        let t = 1.0 + max_slowdown;
        let time = comparison(&mut rng, t);
        let speedup = (i % 4 != 0).then(|| comparison(&mut rng, t));
        let (mut verdict, basis) = combine(
            time.verdict(max_slowdown),
            speedup.map(|s| s.verdict(max_slowdown)),
        );
        let mut r: TrialRecord = template.clone();
        match verdict.machine(basis) {
            // A confirmed change of the baseline's own trial, every exact counter equal.
            Some(machine) if i % 3 == 0 => verdict = machine,
            // Paired, identical at the base and timed anyway: an A/A pair.
            _ if i % 13 == 7 => {
                verdict = Verdict::IdenticalCode;
                r.gate = Some(GateNote::IdenticalCode {
                    rev: "HEAD~1".into(),
                    commit: "c7b4c3e0123456789abcdef0123456789abcdef0".into(),
                    timed: true,
                });
            }
            _ => {}
        }
        let v = TrialVerdict {
            verdict,
            time,
            speedup,
            basis,
        };
        r.name = format!("prop::k::n={i}");
        r.verdict = Some(v);
        r.status = if verdict.fails(Strictness::default()) {
            Status::Failed
        } else {
            Status::Passed
        };
        if let Some(GateNote::Compared { baseline, .. }) = &mut r.gate {
            baseline.runs = 1;
            baseline.spread = 1.0;
            baseline.other_gpus.clear();
        }
        if let Some(GateNote::Compared { remeasured, .. }) = &mut r.gate {
            *remeasured = false;
        }
        let precision = max_slowdown / 3.0;
        if let Some(m) = &mut r.measurement {
            m.max_slowdown = max_slowdown;
            m.precision = Some(precision);
        }
        let p = v.shown().p_adjusted;
        let reading = verdict.reading(v.shown(), max_slowdown, precision);
        let check = |what: &str, printed_label: &str, printed: &str| {
            let (l, how, _) = label(printed_label);
            assert_eq!(l, verdict, "{what}: `{printed_label}`");
            assert_eq!(how, reading, "{what}: `{printed_label}` beside `{printed}`");
            let c = read(printed, p);
            assert!(
                l.agrees(&c, max_slowdown),
                "{what}: `{printed_label}` beside `{printed}` (max_slowdown {max_slowdown}; decided from time {time:?}, speedup {speedup:?})"
            );
            assert!(
                holds(how, &c, t, precision),
                "{what}: `{printed_label}` beside `{printed}` (max_slowdown {max_slowdown}, precision {precision})"
            );
            if l.about().is_none() {
                // A verdict no interval decided (an A/A pair's): what is beside it is the time.
                let near = |a: f64, b: f64| (a / b - 1.0).abs() < 2e-3;
                assert!(
                    near(c.low, time.low) && near(c.high, time.high),
                    "{what}: `{printed}` is not the time {time:?}"
                );
            }
        };

        // The terminal: `<label> <interval>...` in the gate's note (an A/A pair's interval
        // after its label's explanation: `identical code to base ..., timed anyway (..): <interval>`).
        let note = terminal::note(&r);
        let (_, _, rest) = label(&note);
        let rest = match verdict.about() {
            Some(_) => rest,
            None => rest.rsplit_once("): ").map_or(rest, |(_, after)| after),
        };
        let interval = rest.split(" (").next().unwrap().split(':').next().unwrap();
        check("terminal", &note, interval);

        // `kernelgate compare`: the change column and the verdict column of one row.
        let row = Row {
            name: r.name.clone(),
            old: Some(1e-5),
            new: Some(1e-5),
            status: [Some(Status::Passed), Some(r.status)],
            verdict: Some(v),
            note: None,
            failed: None,
            words: Some(reading.phrase(verdict)),
        };
        let text = table(&[&row]);
        let line = text.lines().find(|l| l.starts_with(&r.name)).unwrap();
        let cols: Vec<&str> = line.split("  ").filter(|c| !c.trim().is_empty()).collect();
        check("compare", cols[cols.len() - 1], cols[cols.len() - 3]);

        // The Markdown summary: the verdict and change cells of the trial's row.
        let mut results = example.clone();
        results.trials = vec![r.clone()];
        let md = markdown::render(&results);
        for line in md.lines().filter(|l| l.contains(&format!("`{}`", r.name))) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            // `| trial | verdict | change | why |` (needs attention) or
            // `| trial | median | speedup | roofline | memory | verdict | change |` (all trials).
            let (l, c) = if cells.len() == 6 { (2, 3) } else { (6, 7) };
            check("markdown", cells[l], cells[c]);
        }
        *seen
            .entry((reading.phrase(verdict).to_string(), format!("{basis:?}")))
            .or_default() += 1;
    }
    for reading in [Reading::WithinThreshold, Reading::OnThreshold] {
        assert!(
            seen.keys().any(|(l, _)| l
                == reading.phrase(match reading {
                    Reading::WithinThreshold => Verdict::Unchanged,
                    _ => Verdict::Inconclusive,
                })),
            "{reading:?} never occurred"
        );
    }
    println!("verdicts rendered and read back: {seen:?}");
    for v in Verdict::ALL {
        assert!(
            seen.keys().any(|(l, _)| l == v.label()),
            "{v} never occurred"
        );
    }
    assert!(seen
        .keys()
        .any(|(_, b)| b == &format!("{:?}", Basis::Speedup)));
}
