//! `Spent`: where time went, by name — kernelgate's one mechanism of self-timing. Code that
//! does a phase adds its seconds (or a count) to the process's registry where it runs
//! ([`add`], [`since`]), instead of threading a field through its callers. The worker takes
//! what the registry holds with each answer ([`take`]), so the work it did ahead of a request
//! (opening the device, loading suites, the probe) goes with the next answer; the run sums
//! the answers into its totals (`report::totals`). Names with a dot belong to a part of the
//! profile: `sampling.*` (inside sampling, under `KERNELGATE_PROFILE=1`) and `counters.*`
//! (inside the CUPTI profiler).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

/// Seconds (and counts) by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Spent(BTreeMap<String, f64>);

impl Spent {
    /// Adds `value` to `name`.
    pub fn add(&mut self, name: &str, value: f64) {
        *self.0.entry(name.to_string()).or_default() += value;
    }

    /// The figure of `name` (0 when nothing was added to it).
    pub fn get(&self, name: &str) -> f64 {
        self.0.get(name).copied().unwrap_or(0.0)
    }

    /// Every figure, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// `label figure s` for each `(name, label)` of `parts`, joined by commas, each with
    /// `digits` decimals.
    pub fn describe(&self, parts: &[(&str, &str)], digits: usize) -> String {
        let each: Vec<String> = parts
            .iter()
            .map(|(name, label)| format!("{label} {:.digits$} s", self.get(name)))
            .collect();
        each.join(", ")
    }
}

/// This process's registry.
static PROCESS: Mutex<Spent> = Mutex::new(Spent(BTreeMap::new()));

/// Adds `value` to `name` in this process's registry.
pub fn add(name: &str, value: f64) {
    PROCESS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .add(name, value);
}

/// Adds the seconds since `at` to `name` in this process's registry.
pub fn since(name: &str, at: Instant) {
    add(name, at.elapsed().as_secs_f64());
}

/// Runs `f`, adding its seconds to `name` in this process's registry; what it returns.
pub fn timed<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let at = Instant::now();
    let out = f();
    since(name, at);
    out
}

/// What this process's registry holds, leaving it empty.
pub fn take() -> Spent {
    std::mem::take(&mut *PROCESS.lock().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_add_up_by_name_and_read_back_as_written() {
        let mut a = Spent::default();
        a.add("copies", 0.25);
        a.add("sampling.samples", 3.0);
        a.add("copies", 0.5);
        assert_eq!(a.get("copies"), 0.75);
        assert_eq!(a.get("warmup"), 0.0);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, r#"{"copies":0.75,"sampling.samples":3.0}"#);
        assert_eq!(serde_json::from_str::<Spent>(&json).unwrap(), a);
        assert_eq!(
            a.describe(&[("copies", "timing copies"), ("warmup", "warm-up")], 2),
            "timing copies 0.75 s, warm-up 0.00 s"
        );
    }
}
