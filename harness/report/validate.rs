//! `validate`: a parsed results file checked before any command uses it — `compare`, `merge`,
//! `report`, `history import` read results through [`super::results::Results::load`], which
//! applies it, and `kernelgate lint FILE.json` applies the same. Every value a command computes
//! with must be usable: a timed trial has at least one time sample, and every sample, median,
//! interval end, ratio and rate is a finite number of the right sign; format 3's code is hashes
//! of their length and its counters are counts ([`crate::code::valid`],
//! [`crate::measure::counters_valid`]). Seen before this: `"time_samples": []` panicked
//! `kernelgate compare` (the median of nothing).

use super::results::{Breach, GateNote, Measurement, Results, TrialRecord};
use crate::gate::Comparison;
use crate::measure::counters_valid as counters;
use crate::problems::{Problem, Problems, MAX_SECONDS};

use crate::config::MAX_SHARDS;

/// The first problem in `results`, if any.
pub fn validate(results: &Results) -> Result<(), Problem> {
    let mut p = Problems::default();
    for (i, t) in results.trials.iter().enumerate() {
        check_trial(&mut p, &format!("trials[{i}]"), t);
        if let Some(k) = results.trials[..i].iter().position(|o| o.name == t.name) {
            p.add(
                format!("trials[{i}].name"),
                format!(
                    "`{}` is trials[{k}] too: a run records each trial once",
                    t.name
                ),
            );
        }
    }
    if let Some(t) = &results.totals {
        let at = "totals";
        for (name, v) in [
            ("setup_seconds", t.setup_seconds),
            ("check_seconds", t.check_seconds),
            ("sampled_seconds", t.sampled_seconds),
            ("kernel_seconds", t.kernel_seconds),
            ("launch_seconds", t.launch_seconds),
        ] {
            p.non_negative(format!("{at}.{name}"), v);
        }
        if let Some(f) = t.launch_floor {
            p.non_negative(format!("{at}.launch_floor"), f);
        }
        finite_all(&mut p, &format!("{at}.clock_mhz"), &t.clock_mhz);
        finite_all(&mut p, &format!("{at}.celsius"), &t.celsius);
    }
    if let Some(s) = results.provenance.shard {
        if !(1..=s.count).contains(&s.index) || s.count > MAX_SHARDS {
            p.add(
                "shard",
                format!("`{s}` is not a shard: k/n with 1 <= k <= n <= {MAX_SHARDS}"),
            );
        }
    }
    if let Some(s) = &results.provenance.started {
        if crate::baseline::parse_rfc3339(s).is_none() {
            p.add(
                "started",
                format!("`{s}` is not a time: kernelgate writes RFC 3339 to the second, e.g. `2026-11-22T14:03:07Z`"),
            );
        }
    }
    if let Some(i) = &results.identical {
        if let Some(s) = i.saved_seconds {
            p.non_negative("identical.saved_seconds", s);
        }
        if let Some(n) = &i.noise {
            check_comparison(&mut p, "identical.noise.change", &n.change);
        }
    }
    pool(&mut p, results);
    p.first().map_or(Ok(()), Err)
}

/// A pool's runs: each a valid run of its own device, none a pool; the pool itself holds no
/// trial of its own.
fn pool(p: &mut Problems, results: &Results) {
    if !results.pool.is_empty() && !results.trials.is_empty() {
        p.add(
            "trials",
            "a pool's trials are in its `pool` runs: write `[]`",
        );
    }
    for (i, run) in results.pool.iter().enumerate() {
        let at = format!("pool[{i}]");
        if !run.pool.is_empty() {
            p.add(
                format!("{at}.pool"),
                "a pool's run is one device's: write `[]`",
            );
        } else if let Err(e) = validate(run) {
            p.add(format!("{at}.{}", e.place), e.message);
        }
        if let Some(k) = results.pool[..i]
            .iter()
            .position(|o| o.device == run.device)
        {
            p.add(
                format!("{at}.device"),
                format!("is pool[{k}]'s too: a pool holds one run per device"),
            );
        }
    }
}

fn finite_all(p: &mut Problems, place: &str, values: &[f64]) {
    if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        p.add(
            format!("{place}[{i}]"),
            format!("is {v}; write a finite number"),
        );
    }
}

fn check_comparison(p: &mut Problems, place: &str, c: &Comparison) {
    p.positive(format!("{place}.slowdown"), c.slowdown);
    p.positive(format!("{place}.low"), c.low);
    p.positive(format!("{place}.high"), c.high);
    p.within(format!("{place}.p"), c.p, (0.0, 1.0));
    p.within(format!("{place}.p_adjusted"), c.p_adjusted, (0.0, 1.0));
}

fn check_trial(p: &mut Problems, at: &str, t: &TrialRecord) {
    if t.name.is_empty() {
        p.add(
            format!("{at}.name"),
            "is empty; a trial is named `suite::kernel::case`",
        );
    }
    if let Some(m) = &t.measurement {
        check_measurement(p, &format!("{at}.measurement"), m);
    }
    if let Some(v) = &t.verdict {
        check_comparison(p, &format!("{at}.verdict.time"), &v.time);
        if let Some(s) = &v.speedup {
            check_comparison(p, &format!("{at}.verdict.speedup"), s);
        }
    }
    for (name, code) in [("code", &t.code), ("base_code", &t.base_code)] {
        if let Some(code) = code {
            crate::code::valid::check(p, &format!("{at}.{name}"), code);
        }
    }
    for (i, b) in t.breaches.iter().enumerate() {
        if let Breach::CounterGrowth {
            old, new, allowed, ..
        } = b
        {
            let at = format!("{at}.breaches[{i}]");
            p.non_negative(format!("{at}.old"), *old);
            p.non_negative(format!("{at}.new"), *new);
            p.non_negative(format!("{at}.allowed"), *allowed);
        }
    }
    if let Some(GateNote::Compared { baseline, .. }) = &t.gate {
        let b = format!("{at}.gate.baseline");
        p.seconds(format!("{b}.median"), baseline.median);
        if let Some(s) = baseline.speedup {
            p.positive(format!("{b}.speedup"), s);
        }
        p.positive(format!("{b}.spread"), baseline.spread);
    }
}

fn check_measurement(p: &mut Problems, at: &str, m: &Measurement) {
    p.stored(
        format!("{at}.time"),
        [m.time.median, m.time.low, m.time.high],
        true,
    );
    p.seconds_samples(format!("{at}.time_samples"), &m.time_samples, 1);
    if let Some(s) = &m.speedup {
        p.stored(format!("{at}.speedup"), [s.median, s.low, s.high], false);
    }
    p.samples(format!("{at}.speedup_samples"), &m.speedup_samples, 0);
    p.seconds_samples(format!("{at}.baseline_samples"), &m.baseline_samples, 0);
    p.non_negative(format!("{at}.launch_floor"), m.launch_floor);
    // The smallest slowdown worth failing for: a fraction, as the suite's `max_slowdown`.
    p.within(format!("{at}.max_slowdown"), m.max_slowdown, (0.0, 100.0));
    for (i, b) in m.batch.iter().enumerate() {
        if *b == 0 {
            p.add(
                format!("{at}.batch[{i}]"),
                "is 0; a sample times at least one launch",
            );
        }
    }
    for (name, v) in [("bytes", m.bytes), ("flops", m.flops)] {
        if let Some(v) = v {
            p.non_negative(format!("{at}.{name}"), v);
        }
    }
    finite_all(p, &format!("{at}.clocks.mhz"), &m.clocks.mhz);
    finite_all(p, &format!("{at}.clocks.celsius"), &m.clocks.celsius);
    check_evidence(p, at, m);
}

/// Format 3's evidence beside the times: the trial's time in the worker, its units, its
/// counters and what they were compared with.
fn check_evidence(p: &mut Problems, at: &str, m: &Measurement) {
    if let Some(s) = m.trial_seconds {
        p.non_negative(format!("{at}.trial_seconds"), s);
    }
    if let Some(r) = &m.roofline {
        p.non_negative(format!("{at}.roofline.seconds"), r.seconds);
        p.non_negative(format!("{at}.roofline.fraction"), r.fraction);
    }
    for (i, u) in m.units.iter().enumerate() {
        let median = u.kernel_median;
        p.within(
            format!("{at}.units[{i}].kernel_median"),
            median,
            (0.0, MAX_SECONDS),
        );
    }
    if let Some(c) = &m.counters {
        counters::check_report(p, &format!("{at}.counters"), c);
    }
    if let Some(c) = &m.baseline_counters {
        counters::check_stored(p, &format!("{at}.baseline_counters"), c);
    }
    counters::check_changes(p, &format!("{at}.counter_changes"), &m.counter_changes);
    if let Some(w) = &m.declared_work {
        counters::check_work(p, &format!("{at}.declared_work"), w);
    }
}
