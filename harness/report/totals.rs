//! `RunTotals`: where a run's time went — setup, correctness, sampling, counter reads, and the
//! rest of the profile (loading, worker start, compiling, the launch-floor probe, timing copies,
//! warm-up, timed checks, judging, reports) — and what the clocks did, for its closing lines and
//! its results file. The workers' share comes as their answers' [`Spent`] figures.

use crate::measure::Regime;
use crate::spent::Spent;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use std::time::Instant;

/// Where a run's time went, and what the clocks did, for its summary lines. Every phase is
/// optional in a results file (absent in files written before it was measured).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunTotals {
    /// Kernel trials measured (re-measures included).
    pub trials_measured: usize,
    /// Seconds compiling, loading and allocating.
    pub setup_seconds: f64,
    /// Seconds checking correctness.
    pub check_seconds: f64,
    /// Seconds sampling.
    pub sampled_seconds: f64,
    /// Kernel time inside the samples: the samples summed, each the time per launch (one
    /// launch of a graph replay).
    pub kernel_seconds: f64,
    /// GPU time of every launch the kept samples timed: each sample times its launches (a
    /// graph replay's whole batch; a slow side's replay of one launch). What sampling spends
    /// beyond it is the loop's own (prepare, flush, clock probes, waits, the last launches).
    pub launch_seconds: f64,
    /// NVRTC compiles.
    pub compiled: usize,
    /// Modules from the compile cache.
    pub cached: usize,
    /// The last launch floor measured, seconds.
    pub launch_floor: Option<f64>,
    /// Trials timed as CUDA-graph replays.
    pub batched: usize,
    /// Every SM clock reading, MHz.
    pub clock_mhz: Vec<f64>,
    /// Every temperature reading, °C.
    pub celsius: Vec<f64>,
    /// Rounds dropped as throttled.
    pub dropped_rounds: usize,
    /// Trials marked unreliable.
    pub unreliable: usize,
    /// GPU worker processes started.
    pub worker_starts: usize,
    /// Trials whose hardware counters were read (counters-only requests).
    pub counter_reads: usize,
    /// Wall seconds of those requests.
    pub counter_seconds: f64,
    /// Of that, making the CUPTI profiler session (once per worker that reads counters).
    pub counter_setup_seconds: f64,
    /// Of that, where profiling went (the workers' `counters.*` figures): configurations,
    /// replay passes and ranges (counts), and seconds configuring, preparing, in the profiled
    /// launches, starting and stopping, evaluating.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter_profile: Option<Spent>,
    /// Seconds from kernelgate's entry until its options and suites were read and the trials
    /// planned.
    pub load_seconds: f64,
    /// Seconds from kernelgate's entry until the first kernel trial was sent to a GPU worker.
    pub first_gpu_work_seconds: Option<f64>,
    /// Seconds from starting each GPU worker process until it had opened its device, summed.
    pub worker_start_seconds: f64,
    /// Of that, inside the workers: opening the device (`cuInit`, the primary context).
    pub context_seconds: f64,
    /// Of that, how long the run waited (the rest overlapped loading and compiling suites).
    pub worker_wait_seconds: f64,
    /// Seconds compiling (NVRTC, through the cache) and loading modules: the compile trials,
    /// and in workers the suites' kernels and the harness's own.
    pub compile_seconds: f64,
    /// Seconds of the launch-floor probe and the timer's set-up (events, flush buffer, clock).
    pub floor_probe_seconds: f64,
    /// Seconds making timing copies (further input sets, graph copies, further allocations).
    pub copies_seconds: f64,
    /// Seconds warming up and choosing the regime (the pilot).
    pub warmup_seconds: f64,
    /// Seconds checking what the timed launches left.
    pub timed_check_seconds: f64,
    /// Wall seconds of kernel trials (re-measures included) as the run saw them: the workers'
    /// phases plus the exchange with them.
    pub trials_seconds: f64,
    /// Seconds judging (baselines read, the gate), re-measures excluded.
    pub judge_seconds: f64,
    /// Seconds writing the reports other than the results file (written last, holding this).
    pub report_seconds: f64,
    /// Paired mode: seconds preparing the base revision — resolving it, extracting its files
    /// (or finding an earlier extraction of the same commit) and loading its suites; part of
    /// `load_seconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_seconds: Option<f64>,
    /// Seconds computing code identities in this process: each suite (in paired mode the
    /// base's too) compiled through the cache and its kernels identified, once per suite.
    pub code_seconds: f64,
    /// Paired mode: seconds making the SASS diffs of the kernels whose code changed (the
    /// disassembly, `nvdisasm`), while the trials run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sass_seconds: Option<f64>,
    /// Of that, how long the run waited for it once its trials were done.
    pub sass_wait_seconds: f64,
    /// Seconds from kernelgate's entry until the results file was written.
    pub wall_seconds: Option<f64>,
    /// Inside sampling, under `KERNELGATE_PROFILE=1` (the workers' `sampling.*` figures):
    /// samples (a count), and seconds of the GPU's prepare, L2 flush and timed launches and the
    /// host's submit, sync wait, readback, graph capture, last launches and other-process query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling_profile: Option<Spent>,
    /// The costliest kernel trials (re-measures and counter reads apart), most costly first:
    /// the [`COSTLIEST`] dearest, or every trial under `KERNELGATE_PROFILE=1`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub costliest: Vec<TrialCost>,
}

/// Trials kept in [`RunTotals::costliest`] when not profiling.
pub const COSTLIEST: usize = 10;

/// What one kernel trial cost, as its worker and the run saw it (seconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialCost {
    /// `suite::kernel::case`, with `(re-measure)` or `(counters)` after it when it was one.
    pub trial: String,
    /// Wall time of the request as the run saw it.
    pub seconds: f64,
    /// Correctness.
    pub check: f64,
    /// Making timing copies.
    pub copies: f64,
    /// Warm-up and the pilot.
    pub warmup: f64,
    /// Sampling, of which `launches` were the timed launches' GPU time.
    pub sampling: f64,
    /// GPU time of the timed launches (whole graph replays).
    pub launches: f64,
    /// Checking what the timed launches left.
    pub timed_check: f64,
    /// Samples kept, both sides.
    pub samples: usize,
}

/// The sampling profile's figures and how the closing line names them.
const SAMPLING: [(&str, &str); 9] = [
    ("prepare", "GPU prepare"),
    ("flush", "L2 flush"),
    ("launch", "timed launches"),
    ("submit", "host submit"),
    ("sync", "sync wait"),
    ("readback", "readback"),
    ("capture", "graph capture"),
    ("finish", "last launches"),
    ("contention", "other-process query"),
];

/// The counter profile's figures (seconds) and how the closing line names them.
pub const COUNTERS: [(&str, &str); 5] = [
    ("configure", "configure"),
    ("prepare", "prepare"),
    ("launch", "profiled launches"),
    ("start_stop", "start and stop"),
    ("evaluate", "decode and evaluate"),
];

impl RunTotals {
    /// Counts one measured trial's samples.
    pub fn add(&mut self, samples: &crate::measure::Samples) {
        self.trials_measured += 1;
        self.launch_floor = Some(samples.launch_floor);
        self.batched += (samples.regime == Regime::Graph) as usize;
        self.clock_mhz.extend(&samples.clocks.mhz);
        self.celsius.extend(&samples.clocks.celsius);
        self.dropped_rounds += samples.clocks.discarded_rounds;
        self.unreliable += samples.clocks.unreliable as usize;
        self.sampled_seconds += samples.wall_seconds;
        let (kernel, reference) = samples.per_launch_seconds();
        self.kernel_seconds += kernel + reference;
        self.launch_seconds += samples.launch_seconds();
    }

    /// Notes what one trial cost; keeps the [`COSTLIEST`] dearest unless `all`.
    pub fn add_cost(&mut self, cost: TrialCost, all: bool) {
        let at = self
            .costliest
            .partition_point(|c| c.seconds >= cost.seconds);
        self.costliest.insert(at, cost);
        if !all {
            self.costliest.truncate(COSTLIEST);
        }
    }

    /// Adds one worker answer's figures: `sampling.*` and `counters.*` into their profiles,
    /// the rest each into its `*_seconds` field.
    pub fn add_spent(&mut self, spent: &Spent) {
        for (name, value) in spent.iter() {
            let (profile, figure) = match name.split_once('.') {
                Some(("sampling", figure)) => (&mut self.sampling_profile, figure),
                Some(("counters", figure)) => (&mut self.counter_profile, figure),
                _ => {
                    if let Some(field) = self.seconds_of(name) {
                        *field += value;
                    }
                    continue;
                }
            };
            profile
                .get_or_insert_with(Spent::default)
                .add(figure, value);
        }
    }

    /// The field that sums a worker's figure `name`.
    fn seconds_of(&mut self, name: &str) -> Option<&mut f64> {
        Some(match name {
            "setup" => &mut self.setup_seconds,
            "check" => &mut self.check_seconds,
            "context" => &mut self.context_seconds,
            "compile" => &mut self.compile_seconds,
            "floor_probe" => &mut self.floor_probe_seconds,
            "copies" => &mut self.copies_seconds,
            "warmup" => &mut self.warmup_seconds,
            "timed_check" => &mut self.timed_check_seconds,
            "counter_setup" => &mut self.counter_setup_seconds,
            _ => return None,
        })
    }

    /// The profile's closing lines: what the first line (setup, correctness, sampling) leaves
    /// out, and, when profiled, what sampling is made of. None for a run that measured nothing.
    pub fn profile_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.load_seconds == 0.0 && self.worker_start_seconds == 0.0 {
            return out;
        }
        let first = self
            .first_gpu_work_seconds
            .map_or(String::new(), |s| format!("first GPU work at {s:.2} s; "));
        let base = self
            .base_seconds
            .map_or(String::new(), |s| format!(" (base revision {s:.2} s)"));
        let sass = self.sass_seconds.map_or(String::new(), |s| {
            format!(
                "SASS diffs {s:.2} s ({:.2} s waited for); ",
                self.sass_wait_seconds
            )
        });
        out.push(format!(
            "kernelgate: profile: {first}suites loaded {:.2} s{base}; worker start {:.2} s (CUDA context {:.2} s, {:.2} s waited for); compile and load {:.2} s; code identities {:.2} s; launch-floor probe {:.2} s; timing copies {:.2} s; warm-up {:.2} s; sampled launches {:.3} s (whole graph replays); timed checks {:.2} s; judging {:.2} s; {sass}reports {:.2} s",
            self.load_seconds,
            self.worker_start_seconds,
            self.context_seconds,
            self.worker_wait_seconds,
            self.compile_seconds,
            self.code_seconds,
            self.floor_probe_seconds,
            self.copies_seconds,
            self.warmup_seconds,
            self.launch_seconds,
            self.timed_check_seconds,
            self.judge_seconds,
            self.report_seconds,
        ));
        if let Some(p) = &self.sampling_profile {
            out.push(format!(
                "kernelgate: inside sampling (KERNELGATE_PROFILE=1), {} sample(s): {}",
                p.get("samples"),
                p.describe(&SAMPLING, 3)
            ));
        }
        if !self.costliest.is_empty() {
            let dearest: Vec<String> = self
                .costliest
                .iter()
                .take(3)
                .map(|c| {
                    format!(
                        "{} {:.3} s (warm-up {:.3}, sampling {:.3} of which launches {:.3}, {} samples; timed checks {:.3})",
                        c.trial, c.seconds, c.warmup, c.sampling, c.launches, c.samples, c.timed_check
                    )
                })
                .collect();
            out.push(format!(
                "kernelgate: costliest trials: {}",
                dearest.join("; ")
            ));
        }
        out
    }
}

static ENTRY: OnceLock<Instant> = OnceLock::new();

/// Marks now as kernelgate's entry, from which the profile's phases are placed (the first call
/// wins; the worker process never marks one).
pub fn mark_entry() -> Instant {
    *ENTRY.get_or_init(Instant::now)
}

/// Seconds since kernelgate's entry (since this first call, when none was marked).
pub fn since_entry() -> f64 {
    mark_entry().elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_into_the_totals_and_old_files_read_without_them() {
        let mut p = Spent::default();
        for (name, value) in [
            ("context", 0.2),
            ("compile", 0.1),
            ("floor_probe", 0.01),
            ("copies", 0.02),
            ("warmup", 0.03),
            ("timed_check", 0.04),
            ("counter_setup", 0.5),
            ("counters.configurations", 1.0),
            ("counters.passes", 1.0),
            ("counters.ranges", 4.0),
            ("counters.start_stop", 0.03),
            ("a figure of a newer worker", 1.0),
        ] {
            p.add(name, value);
        }
        let mut t = RunTotals::default();
        t.add_spent(&p);
        t.add_spent(&p);
        assert!((t.context_seconds - 0.4).abs() < 1e-12 && (t.warmup_seconds - 0.06).abs() < 1e-12);
        assert_eq!(
            t.sampling_profile, None,
            "nothing sampled, no sampling profile"
        );
        let counters = t.counter_profile.as_ref().expect("summed");
        assert_eq!(
            (counters.get("configurations"), counters.get("ranges")),
            (2.0, 8.0)
        );
        assert!((counters.get("start_stop") - 0.06).abs() < 1e-12);
        assert!((t.timed_check_seconds - 0.08).abs() < 1e-12);
        assert!((t.counter_setup_seconds - 1.0).abs() < 1e-12);
        // A results file from before the profile: every new field is optional.
        let old = r#"{"trials_measured":1,"setup_seconds":0.1,"check_seconds":0.2,"sampled_seconds":0.3,"kernel_seconds":0.1,"compiled":0,"cached":2,"launch_floor":null,"batched":0,"clock_mhz":[],"celsius":[],"dropped_rounds":0,"unreliable":0,"worker_starts":1}"#;
        let read: RunTotals = serde_json::from_str(old).unwrap();
        assert_eq!(read.first_gpu_work_seconds, None);
        assert_eq!(read.sampling_profile, None);
        assert!(
            read.profile_lines().is_empty(),
            "nothing profiled, nothing said"
        );
        let json = serde_json::to_string(&RunTotals::default()).unwrap();
        assert!(!json.contains("sampling_profile"), "{json}");
    }

    #[test]
    fn sampled_launches_count_every_launch_of_a_graph_replay() {
        let mut s = crate::measure::Samples::none();
        s.regime = Regime::Graph;
        // 4 µs kernels in replays of 32, a 7 ms reference replayed one launch per graph.
        s.batch = [32, 1];
        s.kernel = vec![4e-6; 10];
        s.reference = vec![7e-3; 10];
        let mut t = RunTotals::default();
        t.add(&s);
        assert!((t.kernel_seconds - (40e-6 + 70e-3)).abs() < 1e-12);
        assert!(
            (t.launch_seconds - (32.0 * 40e-6 + 70e-3)).abs() < 1e-12,
            "{}",
            t.launch_seconds
        );
    }

    #[test]
    fn the_profile_line_names_every_phase() {
        let t = RunTotals {
            load_seconds: 0.05,
            first_gpu_work_seconds: Some(0.41),
            worker_start_seconds: 0.35,
            context_seconds: 0.2,
            worker_wait_seconds: 0.1,
            compile_seconds: 0.3,
            warmup_seconds: 0.6,
            sampling_profile: Some({
                let mut p = Spent::default();
                p.add("samples", 10.0);
                p
            }),
            ..Default::default()
        };
        let lines = t.profile_lines();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], "kernelgate: profile: first GPU work at 0.41 s; suites loaded 0.05 s; worker start 0.35 s (CUDA context 0.20 s, 0.10 s waited for); compile and load 0.30 s; code identities 0.00 s; launch-floor probe 0.00 s; timing copies 0.00 s; warm-up 0.60 s; sampled launches 0.000 s (whole graph replays); timed checks 0.00 s; judging 0.00 s; reports 0.00 s");
        assert!(
            lines[1].starts_with(
                "kernelgate: inside sampling (KERNELGATE_PROFILE=1), 10 sample(s): GPU prepare"
            ),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn a_paired_profile_says_what_the_base_and_its_sass_diffs_cost() {
        let t = RunTotals {
            load_seconds: 0.06,
            base_seconds: Some(0.02),
            code_seconds: 0.04,
            sass_seconds: Some(0.7),
            sass_wait_seconds: 0.25,
            ..Default::default()
        };
        assert_eq!(t.profile_lines(), ["kernelgate: profile: suites loaded 0.06 s (base revision 0.02 s); worker start 0.00 s (CUDA context 0.00 s, 0.00 s waited for); compile and load 0.00 s; code identities 0.04 s; launch-floor probe 0.00 s; timing copies 0.00 s; warm-up 0.00 s; sampled launches 0.000 s (whole graph replays); timed checks 0.00 s; judging 0.00 s; SASS diffs 0.70 s (0.25 s waited for); reports 0.00 s"]);
        // Written only where there was a base; read back as written.
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains(r#""base_seconds":0.02"#), "{json}");
        assert_eq!(serde_json::from_str::<RunTotals>(&json).unwrap(), t);
        let stored = serde_json::to_string(&RunTotals::default()).unwrap();
        assert!(
            !stored.contains("base_seconds") && !stored.contains(r#""sass_seconds""#),
            "{stored}"
        );
    }
}
