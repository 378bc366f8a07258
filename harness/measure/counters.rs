//! `Counter`: the hardware counters kernelgate reads for a kernel's profiled launches (CUPTI's
//! range profiler, `device::counters`), their values per operation ([`CounterValues`]), and
//! which of them are exact for a trial ([`stable`]): plain data and pure functions.
//!
//! Why these (measured with CUPTI on 4 H200s and 2 H100s, `docs/counters.md` §5): executed
//! instructions (warp and thread level) and global load/store instructions were bit-identical
//! across allocations, processes, machines and both GPU models on every example trial; DRAM
//! bytes, L2 sectors and occupancy were not (DRAM reads ≤ 0.3% apart where a case reads
//! megabytes, up to 33% where it fits in L2). Which are exact *for a trial* is not assumed:
//! bless records them on fresh allocations, and a counter that differs between reads is
//! information only for that trial.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One hardware counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    /// Warp-level instructions executed (`smsp__inst_executed.sum`).
    Instructions,
    /// Thread-level instructions executed (`smsp__thread_inst_executed.sum`).
    ThreadInstructions,
    /// Global-memory load instructions (`LDG`) executed, warp level, those whose threads were
    /// all predicated off included (`smsp__inst_executed_op_global_ld.sum`; before
    /// [`COUNTER_SET`] 2, the SASS-patched `smsp__sass_inst_executed_op_global_ld.sum`, which
    /// leaves those out and counts generic loads from global memory).
    GlobalLoads,
    /// Global-memory store instructions (`STG`) executed, warp level, as [`Counter::GlobalLoads`]
    /// (`smsp__inst_executed_op_global_st.sum`).
    GlobalStores,
    /// Bytes read from DRAM (`dram__bytes_read.sum`).
    DramReadBytes,
    /// Bytes written to DRAM (`dram__bytes_write.sum`); the L2 writes back lazily, so this is
    /// information only.
    DramWriteBytes,
    /// L2 sectors accessed (`lts__t_sectors.sum`).
    L2Sectors,
    /// Achieved occupancy: active warps over the SM's maximum, 0–1
    /// (`sm__warps_active.avg.pct_of_peak_sustained_active` / 100).
    Occupancy,
}

/// The set of metrics the counters are read from, stored with every bless's reads. Set 1 read
/// thread instructions and global loads and stores from SASS-patched metrics (two replay passes
/// on Hopper, every profiled launch instrumented: `matmul::naive::n=2048` profiled in 0.49 s
/// for 26 ms of kernel time, on an H100); set 2 reads them from hardware counters in one pass
/// (issue 22). Thread instructions were equal under both on every example trial; global loads
/// and stores are counted differently where every thread of a warp is predicated off
/// ([`Counter::redefined_since`]).
pub const COUNTER_SET: u32 = 2;

/// `values` without the counters whose metric changed after counter set `set`.
pub fn comparable(values: &CounterValues, set: u32) -> CounterValues {
    values
        .iter()
        .filter(|(c, _)| !c.redefined_since(set))
        .map(|(c, v)| (*c, *v))
        .collect()
}

impl Counter {
    /// Every counter, in the order they are configured and shown.
    pub const ALL: [Counter; 8] = [
        Counter::Instructions,
        Counter::ThreadInstructions,
        Counter::GlobalLoads,
        Counter::GlobalStores,
        Counter::DramReadBytes,
        Counter::DramWriteBytes,
        Counter::L2Sectors,
        Counter::Occupancy,
    ];

    /// The CUPTI (and ncu) metric it is read from.
    pub fn metric(self) -> &'static str {
        match self {
            Counter::Instructions => "smsp__inst_executed.sum",
            Counter::ThreadInstructions => "smsp__thread_inst_executed.sum",
            Counter::GlobalLoads => "smsp__inst_executed_op_global_ld.sum",
            Counter::GlobalStores => "smsp__inst_executed_op_global_st.sum",
            Counter::DramReadBytes => "dram__bytes_read.sum",
            Counter::DramWriteBytes => "dram__bytes_write.sum",
            Counter::L2Sectors => "lts__t_sectors.sum",
            Counter::Occupancy => "sm__warps_active.avg.pct_of_peak_sustained_active",
        }
    }

    /// The metrics of [`Counter::ALL`], in order.
    pub fn metrics() -> Vec<&'static str> {
        Counter::ALL.iter().map(|c| c.metric()).collect()
    }

    /// The value kernelgate keeps, from the metric's value (occupancy as a fraction).
    pub fn from_metric(self, value: f64) -> f64 {
        match self {
            Counter::Occupancy => value / 100.0,
            _ => value,
        }
    }

    /// Its name in the user's words: `instructions`, `DRAM read`, ...
    pub fn label(self) -> &'static str {
        match self {
            Counter::Instructions => "instructions",
            Counter::ThreadInstructions => "thread instructions",
            Counter::GlobalLoads => "global loads",
            Counter::GlobalStores => "global stores",
            Counter::DramReadBytes => "DRAM read",
            Counter::DramWriteBytes => "DRAM written",
            Counter::L2Sectors => "L2 sectors",
            Counter::Occupancy => "achieved occupancy",
        }
    }

    /// Whether this counter's metric changed after counter set `set` (reads made with an
    /// older set hold it with another definition, so they are not compared with new ones).
    pub fn redefined_since(self, set: u32) -> bool {
        set < 2 && matches!(self, Counter::GlobalLoads | Counter::GlobalStores)
    }

    /// Whether a change of this counter can name the cause of a code regression (instruction
    /// counts, memory traffic, occupancy); DRAM writes never do (write-back L2).
    pub fn explains(self) -> bool {
        self != Counter::DramWriteBytes
    }

    /// `value` as the trial lines write it: `1.25 M`, `4.19 MB` (decimal units, as ncu),
    /// `0.98`.
    pub fn format(self, value: f64) -> String {
        match self {
            Counter::Occupancy => format!("{value:.2}"),
            Counter::DramReadBytes | Counter::DramWriteBytes if value.abs() < 1e3 => {
                format!("{value:.0} B")
            }
            Counter::DramReadBytes | Counter::DramWriteBytes => format!("{}B", count(value)),
            _ => count(value),
        }
    }
}

/// `589824` → `590 k`, `1.25e9` → `1.25 G`: a count in three digits.
fn count(value: f64) -> String {
    let (v, unit) = match value.abs() {
        a if a >= 1e12 => (value / 1e12, " T"),
        a if a >= 1e9 => (value / 1e9, " G"),
        a if a >= 1e6 => (value / 1e6, " M"),
        a if a >= 1e3 => (value / 1e3, " k"),
        _ => return format!("{value:.0}"),
    };
    let digits = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{v:.digits$}{unit}")
}

/// One operation's counters: each counter's value, for the counters that were read.
pub type CounterValues = BTreeMap<Counter, f64>;

/// Builds [`CounterValues`] from the metric values the profiler returned, in [`Counter::ALL`]'s
/// order; non-finite values are left out.
pub fn from_metrics(values: &[f64]) -> CounterValues {
    Counter::ALL
        .iter()
        .zip(values)
        .filter(|(_, v)| v.is_finite())
        .map(|(c, v)| (*c, c.from_metric(*v)))
        .collect()
}

/// The counters of a trial's profiled operations on one allocation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialCounters {
    /// The kernel under test.
    pub kernel: CounterValues,
    /// What it was timed against: its suite's reference, or in paired mode the base kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<CounterValues>,
}

/// Whether a trial's counters were read, and if not, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterReport {
    /// Read, on each of one or more fresh allocations of the case, in order.
    Collected(Vec<TrialCounters>),
    /// Asked for but not read: CUPTI missing, no permission, a profiling error.
    NotCollected {
        /// Why, in the user's words.
        why: String,
    },
}

impl CounterReport {
    /// The counters read on the first allocation, when read.
    pub fn collected(&self) -> Option<&TrialCounters> {
        self.allocations().first()
    }

    /// The counters of every allocation they were read on (none when not read).
    pub fn allocations(&self) -> &[TrialCounters] {
        match self {
            CounterReport::Collected(c) => c,
            CounterReport::NotCollected { .. } => &[],
        }
    }
}

/// The counters bit-identical across every one of `runs` (at least two), and present in all.
/// With fewer than two runs nothing is known to be exact: the set is empty.
pub fn stable<'a>(runs: impl IntoIterator<Item = &'a CounterValues>) -> BTreeSet<Counter> {
    let runs: Vec<&CounterValues> = runs.into_iter().collect();
    if runs.len() < 2 {
        return BTreeSet::new();
    }
    Counter::ALL
        .iter()
        .copied()
        .filter(|c| {
            let first = runs[0].get(c);
            first.is_some() && runs.iter().all(|r| r.get(c) == first)
        })
        .collect()
}

/// The counters a trial is compared with, from one or more reads (a baseline's blesses, or
/// the paired base's allocations): the latest values, which counters were bit-identical in
/// every read, and each counter's lowest and highest read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCounters {
    /// The latest read's values.
    pub values: CounterValues,
    /// The counters equal in every read (none with fewer than two reads).
    pub stable: BTreeSet<Counter>,
    /// How many reads.
    pub runs: usize,
    /// Each counter's lowest read.
    #[serde(default)]
    pub lowest: CounterValues,
    /// Each counter's highest read.
    #[serde(default)]
    pub highest: CounterValues,
}

impl StoredCounters {
    /// The summary of `reads` (oldest first); `None` without any.
    pub fn of<'a>(reads: impl IntoIterator<Item = &'a CounterValues>) -> Option<StoredCounters> {
        let reads: Vec<&CounterValues> = reads.into_iter().collect();
        let latest = (*reads.last()?).clone();
        let fold = |pick: fn(f64, f64) -> f64| -> CounterValues {
            let mut out = CounterValues::new();
            for r in &reads {
                for (c, v) in r.iter() {
                    out.entry(*c)
                        .and_modify(|o| *o = pick(*o, *v))
                        .or_insert(*v);
                }
            }
            out
        };
        Some(StoredCounters {
            stable: stable(reads.iter().copied()),
            runs: reads.len(),
            lowest: fold(f64::min),
            highest: fold(f64::max),
            values: latest,
        })
    }

    /// The highest read of `counter` (the latest value where no range was kept).
    pub fn highest(&self, counter: Counter) -> Option<f64> {
        self.highest
            .get(&counter)
            .or(self.values.get(&counter))
            .copied()
    }
}

/// A counter that differs between a baseline and now.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CounterChange {
    /// Which.
    pub counter: Counter,
    /// The baseline's value.
    pub old: f64,
    /// Now.
    pub new: f64,
    /// Whether it was exact across the baseline's units (then any change is the code's).
    pub stable: bool,
}

impl CounterChange {
    /// The order a cause is said in: the largest relative change first, an exact counter
    /// before an unstable one of the same size.
    pub fn larger_first(a: &CounterChange, b: &CounterChange) -> std::cmp::Ordering {
        b.relative()
            .abs()
            .partial_cmp(&a.relative().abs())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.stable.cmp(&a.stable))
    }

    /// The relative change, `new / old - 1` (0 when both are 0, infinite from 0).
    pub fn relative(&self) -> f64 {
        if self.old == self.new {
            0.0
        } else if self.old == 0.0 {
            f64::INFINITY
        } else {
            self.new / self.old - 1.0
        }
    }

    /// `achieved occupancy 0.98 → 0.49` or `instructions +2.0%`.
    pub fn describe(&self) -> String {
        let c = self.counter;
        let (old, new) = (c.format(self.old), c.format(self.new));
        match c {
            Counter::Occupancy => format!("{} {old} → {new}", c.label()),
            _ => format!(
                "{} {} ({old} → {new})",
                c.label(),
                percent_change(self.relative())
            ),
        }
    }
}

/// A relative change (`new / old - 1`) as a signed percentage with the digits it needs not to
/// read as none: `+6.0%`, `-0.023%` (an exact counter 226640 → 226589); `+0.0%` only for no
/// change.
pub fn percent_change(relative: f64) -> String {
    let pct = relative * 100.0;
    if pct == 0.0 || !pct.is_finite() || pct.abs() >= 0.05 {
        return format!("{pct:+.1}%");
    }
    // Two significant digits: 0.0225 → 3 decimals.
    let digits = ((-pct.abs().log10()).ceil() as usize + 1).min(9);
    format!("{pct:+.digits$}%")
}

/// The smallest `max_dram_read_growth` kernelgate applies, over the highest of the baseline's
/// reads: DRAM bytes read vary by up to ~0.3% between launches of a case that reads megabytes
/// with L2 left clean (H100 and H200, `docs/counters.md` §5).
pub const DRAM_READ_TOLERANCE: f64 = 0.005;

/// How far a suite's declared `bytes` may be from what the counters measured before the run
/// warns: more than twice what passed through L2 (sectors × 32 bytes, reads and writes), or
/// less than half of what was read from DRAM alone.
pub const DECLARED_WORK_FACTOR: f64 = 2.0;

/// Declared bytes that the counters contradict (see [`DECLARED_WORK_FACTOR`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkMismatch {
    /// The suite's `bytes` for the case.
    pub declared: f64,
    /// Bytes read from DRAM (measured).
    pub dram_read: f64,
    /// Bytes through L2 (L2 sectors × 32, measured).
    pub through_l2: f64,
}

impl WorkMismatch {
    /// The mismatch between `declared` bytes and the kernel's counters, if any.
    pub fn check(declared: f64, counters: &CounterValues) -> Option<WorkMismatch> {
        let dram_read = *counters.get(&Counter::DramReadBytes)?;
        let through_l2 = counters.get(&Counter::L2Sectors)? * 32.0;
        let off = declared > DECLARED_WORK_FACTOR * through_l2
            || declared * DECLARED_WORK_FACTOR < dram_read;
        (declared > 0.0 && off).then_some(WorkMismatch {
            declared,
            dram_read,
            through_l2,
        })
    }
}

/// How far an unstable counter may move before its change is shown (a counter exact across
/// the baseline's units is shown on any change).
pub const UNSTABLE_NOISE: f64 = 0.02;

/// The counters of `new` that differ from `old`: every change of a counter exact across its
/// reads, and of the others that can explain a time change, a value outside the range of its
/// reads widened by [`UNSTABLE_NOISE`] (small cases read DRAM and L2 differently from launch
/// to launch: `docs/counters.md` §5); largest relative change first.
pub fn changes(old: &StoredCounters, new: &CounterValues) -> Vec<CounterChange> {
    let mut out: Vec<CounterChange> = Counter::ALL
        .iter()
        .filter_map(|c| {
            let (o, n) = (*old.values.get(c)?, *new.get(c)?);
            let change = CounterChange {
                counter: *c,
                old: o,
                new: n,
                stable: old.stable.contains(c),
            };
            let moved = if change.stable {
                o != n
            } else {
                // The latest value where no range was kept.
                let (lo, hi) = (
                    old.lowest.get(c).unwrap_or(&o),
                    old.highest.get(c).unwrap_or(&o),
                );
                c.explains() && (n > hi * (1.0 + UNSTABLE_NOISE) || n < lo * (1.0 - UNSTABLE_NOISE))
            };
            moved.then_some(change)
        })
        .collect();
    out.sort_by(CounterChange::larger_first);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(Counter, f64)]) -> CounterValues {
        pairs.iter().copied().collect()
    }

    #[test]
    fn metrics_come_back_in_order_with_occupancy_as_a_fraction() {
        let v = from_metrics(&[589824.0, 1.0, 2.0, 3.0, 4.0, f64::NAN, 6.0, 72.5]);
        assert_eq!(v[&Counter::Instructions], 589824.0);
        assert_eq!(v[&Counter::Occupancy], 0.725);
        assert!(!v.contains_key(&Counter::DramWriteBytes), "NaN is left out");
        assert_eq!(Counter::metrics().len(), Counter::ALL.len());
    }

    #[test]
    fn reads_of_the_first_counter_set_drop_the_redefined_counters() {
        let read = values(&[
            (Counter::Instructions, 10.0),
            (Counter::ThreadInstructions, 320.0),
            (Counter::GlobalLoads, 4.0),
            (Counter::GlobalStores, 2.0),
        ]);
        let old = comparable(&read, 1);
        assert_eq!(
            old.keys().copied().collect::<Vec<_>>(),
            [Counter::Instructions, Counter::ThreadInstructions]
        );
        assert_eq!(comparable(&read, COUNTER_SET), read);
        assert!(Counter::ALL.iter().all(|c| !c.redefined_since(COUNTER_SET)));
    }

    #[test]
    fn only_counters_equal_in_every_run_are_stable() {
        let a = values(&[
            (Counter::Instructions, 10.0),
            (Counter::DramReadBytes, 100.0),
        ]);
        let b = values(&[
            (Counter::Instructions, 10.0),
            (Counter::DramReadBytes, 101.0),
        ]);
        let s = stable([&a, &b]);
        assert_eq!(s, [Counter::Instructions].into_iter().collect());
        assert!(stable([&a]).is_empty(), "one run proves nothing exact");
        let c = values(&[(Counter::DramReadBytes, 100.0)]);
        assert_eq!(
            stable([&a, &c]),
            [Counter::DramReadBytes].into_iter().collect(),
            "a counter missing in a run is not stable"
        );
    }

    #[test]
    fn a_small_change_of_an_exact_counter_does_not_read_as_none() {
        assert_eq!(percent_change(0.06), "+6.0%");
        assert_eq!(percent_change(0.0), "+0.0%");
        assert_eq!(percent_change(226589.0 / 226640.0 - 1.0), "-0.023%");
        assert_eq!(percent_change(1e-5), "+0.0010%");
        let c = CounterChange {
            counter: Counter::Instructions,
            old: 226640.0,
            new: 226589.0,
            stable: true,
        };
        assert_eq!(c.describe(), "instructions -0.023% (227 k → 227 k)");
    }

    #[test]
    fn a_stable_counter_changes_on_any_difference_an_unstable_one_beyond_noise() {
        let stable: BTreeSet<Counter> = [Counter::Instructions].into_iter().collect();
        let old = values(&[
            (Counter::Instructions, 1000.0),
            (Counter::DramReadBytes, 1000.0),
            (Counter::DramWriteBytes, 10.0),
            (Counter::Occupancy, 0.98),
        ]);
        let new = values(&[
            (Counter::Instructions, 1001.0),
            (Counter::DramReadBytes, 1010.0),
            (Counter::DramWriteBytes, 40.0),
            (Counter::Occupancy, 0.49),
        ]);
        let old = StoredCounters {
            stable,
            runs: 2,
            lowest: old.clone(),
            highest: old.clone(),
            values: old,
        };
        let c = changes(&old, &new);
        let which: Vec<Counter> = c.iter().map(|c| c.counter).collect();
        // Largest change first: occupancy halving, then the exact count's 0.1%.
        assert_eq!(which, vec![Counter::Occupancy, Counter::Instructions]);
        assert_eq!(c[0].describe(), "achieved occupancy 0.98 → 0.49");
        assert_eq!(c[1].describe(), "instructions +0.1% (1.00 k → 1.00 k)");
    }

    #[test]
    fn declared_bytes_far_from_the_counters_are_a_mismatch() {
        let c = values(&[
            (Counter::DramReadBytes, 4.2e6),
            (Counter::L2Sectors, 262144.0),
        ]);
        assert_eq!(
            WorkMismatch::check(8.4e6, &c),
            None,
            "read 4 MB, wrote 4 MB"
        );
        let too_much = WorkMismatch::check(3.0 * 8.4e6, &c).unwrap();
        assert_eq!(too_much.through_l2, 262144.0 * 32.0);
        assert!(
            WorkMismatch::check(1.0e6, &c).is_some(),
            "less than half the DRAM reads"
        );
        assert_eq!(
            WorkMismatch::check(8.4e6, &values(&[])),
            None,
            "not read: no claim"
        );
    }

    #[test]
    fn counts_read_in_three_digits() {
        assert_eq!(count(589824.0), "590 k");
        assert_eq!(count(5275648.0), "5.28 M");
        assert_eq!(count(12.0), "12");
        assert_eq!(Counter::DramWriteBytes.format(512.0), "512 B");
        assert_eq!(Counter::DramReadBytes.format(4199168.0), "4.20 MB");
        assert_eq!(count(1.25e9), "1.25 G");
    }
}
