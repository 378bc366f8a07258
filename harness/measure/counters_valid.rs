//! `check_*`: stored hardware counters checked where their file is read — a baseline entry's
//! reads (`counters`), a results trial's `counters`, `baseline_counters`, `counter_changes`
//! and `declared_work`. Their values decide machine attribution (an exact counter equal to the
//! baseline's) and the counter gates, so each must be a count from 0 to
//! [`crate::problems::MAX_MAGNITUDE`], and the achieved occupancy a fraction from 0 to 1.

use super::counters::{
    Counter, CounterChange, CounterReport, CounterValues, StoredCounters, WorkMismatch,
};
use crate::problems::Problems;

/// One counter's value at `place`.
fn value(p: &mut Problems, place: String, counter: Counter, v: f64) {
    match counter {
        Counter::Occupancy => p.within(place, v, (0.0, 1.0)),
        _ => p.non_negative(place, v),
    }
}

/// One operation's counters, stored at `place` (`{"instructions": 928.0, ...}`).
pub fn check_values(p: &mut Problems, place: &str, values: &CounterValues) {
    for (c, v) in values {
        let name = serde_json::to_value(c)
            .ok()
            .and_then(|n| n.as_str().map(str::to_string))
            .unwrap_or_default();
        value(p, format!("{place}.{name}"), *c, *v);
    }
}

/// A trial's counter reads: at least one allocation when collected.
pub fn check_report(p: &mut Problems, place: &str, report: &CounterReport) {
    if let CounterReport::Collected(reads) = report {
        if reads.is_empty() {
            p.add(
                format!("{place}.collected"),
                "is empty; counters that were read hold one read per allocation (write `not_collected` with a `why` otherwise)",
            );
        }
        for (i, r) in reads.iter().enumerate() {
            check_values(p, &format!("{place}.collected[{i}].kernel"), &r.kernel);
            if let Some(against) = &r.against {
                check_values(p, &format!("{place}.collected[{i}].against"), against);
            }
        }
    }
}

/// The counters a trial was compared with: their values and range, from at least one read.
pub fn check_stored(p: &mut Problems, place: &str, stored: &StoredCounters) {
    if stored.runs == 0 {
        p.add(
            format!("{place}.runs"),
            "is 0; stored counters come from at least one read",
        );
    }
    check_values(p, &format!("{place}.values"), &stored.values);
    check_values(p, &format!("{place}.lowest"), &stored.lowest);
    check_values(p, &format!("{place}.highest"), &stored.highest);
    for (c, low) in &stored.lowest {
        if stored.highest.get(c).is_some_and(|high| high < low) {
            p.add(
                format!("{place}.highest"),
                format!(
                    "holds a {} below its lowest; write the highest read",
                    c.label()
                ),
            );
        }
    }
}

/// Counters that changed against the baseline's.
pub fn check_changes(p: &mut Problems, place: &str, changes: &[CounterChange]) {
    for (i, c) in changes.iter().enumerate() {
        value(p, format!("{place}[{i}].old"), c.counter, c.old);
        value(p, format!("{place}[{i}].new"), c.counter, c.new);
    }
}

/// Declared bytes the counters contradicted: byte counts.
pub fn check_work(p: &mut Problems, place: &str, w: &WorkMismatch) {
    p.non_negative(format!("{place}.declared"), w.declared);
    p.non_negative(format!("{place}.dram_read"), w.dram_read);
    p.non_negative(format!("{place}.through_l2"), w.through_l2);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_counts_and_occupancy_a_fraction() {
        let good: CounterValues = [(Counter::Instructions, 928.0), (Counter::Occupancy, 0.12)]
            .into_iter()
            .collect();
        let mut p = Problems::default();
        check_values(&mut p, "counters[0]", &good);
        check_stored(
            &mut p,
            "baseline_counters",
            &StoredCounters::of([&good]).unwrap(),
        );
        assert!(p.0.is_empty(), "{:?}", p.0);

        let bad: CounterValues = [(Counter::Instructions, -1.0), (Counter::Occupancy, 12.0)]
            .into_iter()
            .collect();
        let mut p = Problems::default();
        check_values(&mut p, "counters[0]", &bad);
        check_report(&mut p, "counters", &CounterReport::Collected(Vec::new()));
        let mut stored = StoredCounters::of([&good]).unwrap();
        stored.runs = 0;
        stored.highest.insert(Counter::Instructions, 1.0);
        check_stored(&mut p, "baseline_counters", &stored);
        let shown: Vec<String> = p.0.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "`counters[0].instructions` is -1; write a number from 0 to 1e18",
                "`counters[0].occupancy` is 12; write a number from 0 to 1",
                "`counters.collected` is empty; counters that were read hold one read per allocation (write `not_collected` with a `why` otherwise)",
                "`baseline_counters.runs` is 0; stored counters come from at least one read",
                "`baseline_counters.highest` holds a instructions below its lowest; write the highest read",
            ]
        );
    }
}
