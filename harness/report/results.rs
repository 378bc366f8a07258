//! `Results`: the whole run as one JSON file (`KERNELGATE_RESULTS=path.json`): the device,
//! every trial with its samples and verdict. The input of `kernelgate compare` and of CI reports.

use crate::baseline::{Fingerprint, Stored};
use crate::code::{CodeChange, TrialCode};
use crate::device::DeviceInfo;
use crate::gate::TrialVerdict;
use serde::{Deserialize, Serialize};

pub use super::totals::RunTotals;

pub use super::gate_note::{BaselineRef, GateNote};
pub use super::skipped::{Identical, Noise, SavedFrom};

/// Format of results files this kernelgate writes (3: each trial carries its code —
/// `TrialRecord::code`, `base_code`, `code_change` — and a paired run its identical trials;
/// 4: a shard's run records which shard it was, `shard`; 5: a pool of GPU models merged, `pool`).
pub const FORMAT: u32 = 5;

/// The oldest format this kernelgate reads. Format 1 (no code) reads with the code absent;
/// there was no format 2 of results files (the number was the baselines').
pub const OLDEST_FORMAT: u32 = 1;

/// How a trial ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran and passed.
    #[default]
    Passed,
    /// Ran and failed (wrong output, fault, regression, ...).
    Failed,
    /// Not run, with a reason (no GPU, no NVRTC).
    Ignored,
}

pub use crate::failure::{FailKind, TrialFailure};

/// A declared limit a measured trial broke, or a change since its baseline that fails it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Breach {
    /// The case's peak device memory is over the suite's `memory_budget`.
    MemoryBudget {
        /// The peak, bytes.
        peak: u64,
        /// The budget, bytes.
        budget: u64,
    },
    /// A launch uses more registers than `max_registers`.
    Registers {
        /// The entry.
        entry: String,
        /// Registers per thread.
        registers: i32,
        /// The limit.
        max: u32,
    },
    /// A kernel holds FP64 instructions under `fp64 = "forbid"`.
    Fp64 {
        /// What it holds, and what to change.
        message: String,
    },
    /// A launch uses local memory under `spills = "forbid"`.
    Spills {
        /// The entry.
        entry: String,
        /// Local bytes per thread.
        local_bytes: i32,
    },
    /// Peak memory grew over the baseline's beyond `memory_growth`.
    MemoryGrowth {
        /// The baseline's peak, bytes.
        old: u64,
        /// This run's peak, bytes.
        new: u64,
        /// The allowed growth, a fraction.
        allowed: f64,
        /// Resources that changed with it.
        changes: Vec<ResourceChange>,
    },
    /// A hardware counter grew over the baseline's (or base's) beyond the suite's gate
    /// (`max_instruction_growth`, `max_dram_read_growth`): an exact gate, no statistics.
    CounterGrowth {
        /// Which counter.
        counter: crate::measure::counters::Counter,
        /// The baseline's (or base's) value.
        old: f64,
        /// This run's.
        new: f64,
        /// The allowed growth, a fraction.
        allowed: f64,
    },
    /// A counter gate could not be applied and `KERNELGATE_REQUIRE_COUNTERS` is set.
    CountersUnavailable {
        /// Why the counters were not read.
        why: String,
    },
}

/// Registers or local memory of a launch that changed since the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceChange {
    /// The entry.
    pub entry: String,
    /// Registers per thread: baseline, now.
    pub registers: [i32; 2],
    /// Local bytes per thread: baseline, now.
    pub local_bytes: [i32; 2],
    /// A library call's algorithm, when the library chose another: baseline, now
    /// (`Footprint::library`; the registers and local bytes are then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<[String; 2]>,
}

/// The commands that re-run, profile and re-bless one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commands {
    /// Re-runs exactly this trial.
    pub rerun: String,
    /// Profiles exactly its kernel launches with Nsight Compute (kernel trials).
    pub profile: Option<String>,
    /// Re-records its baseline (kernel trials).
    pub rebless: Option<String>,
    /// What every command of this run starts with, before libtest's filter: the variables
    /// that make it the same experiment and the launcher (`KERNELGATE_BASE=main ./kernelgate
    /// run`); absent in older files, whose commands were `cargo test --test perf --`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
}

/// Measurements of one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Timing regime (`cold`, or `graph` near the launch floor).
    pub regime: crate::measure::Regime,
    /// Launches per sample: kernel, reference.
    pub batch: [usize; 2],
    /// The device's launch floor (event-timed empty kernel), seconds.
    pub launch_floor: f64,
    /// Time per run.
    pub time: Stored,
    /// Every time sample, seconds.
    pub time_samples: Vec<f64>,
    /// Speedup over the reference, for other kernels.
    pub speedup: Option<Stored>,
    /// Per-round speedup samples.
    pub speedup_samples: Vec<f64>,
    /// The suite's `max_slowdown`.
    pub max_slowdown: f64,
    /// The precision target the samples were taken to (the suite's `precision`: the relative
    /// half-width of the median's 95% interval; a re-measure's is [`crate::gate::REMEASURE_EFFORT`]
    /// times finer). Absent in older files: reports take the default share of `max_slowdown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Whether sampling stopped at the time cap before the precision target.
    pub hit_time_cap: bool,
    /// How L2 was flushed before each sample: which time this is (`docs/measurement.md`);
    /// absent in files written before it was a choice (they flushed by writing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_flush: Option<crate::suite::Flush>,
    /// Memory and resources of the kernel.
    pub footprint: crate::measure::Footprint,
    /// The reference kernel this trial's speedup is over (`None` for the reference itself).
    pub reference: Option<String>,
    /// The SM clock while sampling.
    pub clocks: crate::measure::Clocks,
    /// Bytes one run moves (the suite's `bench.bytes` for this case), for achieved bandwidth.
    pub bytes: Option<f64>,
    /// Floating-point operations of one run (`bench.flops`), for the achieved FLOP rate.
    pub flops: Option<f64>,
    /// The time samples this trial was compared with (the stored baseline's, or the paired
    /// base's), seconds; empty when it was not compared.
    #[serde(default)]
    pub baseline_samples: Vec<f64>,
    /// The memory and resources it was compared with: the stored baseline's footprint, or in
    /// paired mode the base kernel's (launch shape, registers, blocks per SM); `None` when it
    /// was not compared, or in files written before it was recorded.
    pub baseline_footprint: Option<crate::measure::Footprint>,
    /// Seconds the trial took on the GPU worker: setup, correctness and sampling (format 3;
    /// absent in older files). Paired mode estimates the time identical trials saved from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_seconds: Option<f64>,
    /// The allocations the samples were split over, in order: each one's sample counts, the
    /// kernel's median on it, and the counters read on it (`docs/measurement.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<crate::measure::Unit>,
    /// The hardware counters of the kernel and what it was timed against, or why they were not
    /// read; `None` where the run did not ask for them (`KERNELGATE_COUNTERS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::measure::counters::CounterReport>,
    /// The counters it was compared with: the baseline's (with which were exact across its
    /// units) or, paired, the base kernel's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_counters: Option<crate::baseline::StoredCounters>,
    /// What a suite's counter gate (`max_instruction_growth`, `max_dram_read_growth`) could
    /// not do, in the user's words (`not applied: …`); `None` where it applied or there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_gate: Option<String>,
    /// What `flops` counts (the suite's `flops_type`; absent: FP32, or a file from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops_type: Option<crate::dtype::FlopKind>,
    /// Where the median stands against the device's roofline for the declared work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<Roofline>,
    /// The suite's declared `bytes` where the counters contradict them
    /// (`measure::counters::WorkMismatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_work: Option<crate::measure::counters::WorkMismatch>,
    /// The counters that changed against those, largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counter_changes: Vec<crate::measure::counters::CounterChange>,
    // The code a trial ran is on the record (`TrialRecord::code`, `code_change`), since an
    // identical-code trial has no measurement. Reporters show evidence in
    // `html::compared::evidence` (a row each), `terminal::note` and Markdown's `why`.
}

/// The roofline of a trial: the time its declared work takes at the device's limits — `bytes`
/// at the DRAM bandwidth, `flops` at the peak of their kind (`flops_type`), the longer of the two
/// — beside the measured median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    /// The roofline time, seconds.
    pub seconds: f64,
    /// The roofline time over the median: 1 is the device's limit.
    pub fraction: f64,
    /// Which limit sets it: `"memory"` or `"compute"`.
    pub bound: String,
    /// The roofline from the DRAM bytes the hardware counters read (read + written) instead of
    /// the declared `bytes`, seconds; absent without counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_seconds: Option<f64>,
}

/// One trial of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// `suite::kernel::case`, or `suite::compile`.
    pub name: String,
    /// The suite.
    pub suite: String,
    /// The suite file and the line of the kernel's `[[kernel]]` (for annotations).
    pub file: String,
    /// Line in `file`.
    pub line: usize,
    /// How it ended.
    pub status: Status,
    /// For failures, what kind.
    pub failure: Option<FailKind>,
    /// The GPU it ran on, when it ran on one.
    pub device_ordinal: Option<i32>,
    /// Why it was not run (ignored trials): no GPU, no NVRTC. Everything else a reporter
    /// says about a trial it renders from the typed fields below.
    pub ignored: Option<String>,
    /// Measurements, when it was timed.
    pub measurement: Option<Measurement>,
    /// The gate's verdict, when a comparable baseline existed.
    pub verdict: Option<TrialVerdict>,
    /// What the gate made of it (measured trials).
    pub gate: Option<GateNote>,
    /// Declared limits broken, and growth over the baseline.
    #[serde(default)]
    pub breaches: Vec<Breach>,
    /// Registers or local memory changed since the baseline.
    #[serde(default)]
    pub resource_changes: Vec<ResourceChange>,
    /// The typed failure, when the trial itself failed (not the gate).
    pub failure_detail: Option<TrialFailure>,
    /// Commands to re-run, profile and re-bless this trial.
    pub commands: Option<Commands>,
    /// What a compile trial compiled.
    pub compiled: Option<Compiled>,
    /// The code this trial ran (format 3): its kernel's and its reference's code identities
    /// for the run's architecture, the toolchain, and the trial identity. `None` where it could
    /// not be had (no NVRTC, a suite that does not compile) and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<TrialCode>,
    /// Paired mode: the same trial's code at the base revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_code: Option<TrialCode>,
    /// What differs between `code` and the code it was compared with: the stored baseline's
    /// (or that the baseline recorded none), or the base's in paired mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_change: Option<CodeChange>,
    /// A shard's trial: what the gate saw of it (its measurements' inputs, the re-measure and
    /// confirmation the shard made), for `merge` to decide the whole run as one family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Box<crate::gate::Evidence>>,
}

/// What a suite's compile trial did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compiled {
    /// Sources compiled.
    pub sources: usize,
    /// Of those, compiled now; the rest came from the cache or were built.
    pub fresh: usize,
    /// Of those, PTX/CUBIN/fatbin loaded as built and library calls (neither compiled nor
    /// cached).
    #[serde(default)]
    pub built: usize,
    /// The target architecture.
    pub arch: String,
    /// The kernels that use FP64 instructions, with their counts (empty when none).
    #[serde(default)]
    pub fp64: String,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// `FORMAT`.
    pub format: u32,
    /// kernelgate's version.
    pub kernelgate: String,
    /// Date of the run (UTC).
    pub date: String,
    /// The device's fingerprint, when a GPU was used.
    pub device: Option<Fingerprint>,
    /// The device's full description.
    pub device_info: Option<DeviceInfo>,
    /// Every trial that was selected, in run order.
    pub trials: Vec<TrialRecord>,
    /// Where the run's time went.
    pub totals: Option<RunTotals>,
    /// Paired mode: the base revision every trial was compared with.
    pub base: Option<BaseRevision>,
    /// Paired mode: trials of the base that the candidate no longer has.
    #[serde(default)]
    pub gone: Vec<String>,
    /// Paired mode: the trials whose code was identical at the base (format 3): how many were
    /// skipped, the time that saved (an estimate), and under `KERNELGATE_TIME_IDENTICAL=1` the
    /// largest change timed among them. `None` outside paired mode and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identical: Option<Identical>,
    /// Paired mode: each changed kernel's SASS against the base's (diff, instruction-mix
    /// deltas, resources), for the HTML report; empty where none changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sass: Vec<crate::sass::change::KernelDiff>,
    /// Why `sass` is missing kernels that changed (no `nvdisasm`, a module that cannot be
    /// disassembled), when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sass_note: Option<String>,
    /// A merged sharded run: the trials decided as one family whose decision needs a re-measure
    /// or a fresh-worker confirmation their shard did not make (left `inconclusive`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<String>,
    /// A pool of GPU models merged (format 5): one run per device fingerprint, each merged and
    /// decided as its own family; the pool's own `trials` are empty. Empty for any other run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pool: Vec<Results>,
    /// Where the run came from: commit, branch, dirty state, start time, suite digests
    /// (top-level fields of the file; absent in files written before they were recorded).
    #[serde(flatten)]
    pub provenance: super::provenance::Provenance,
}

/// The base revision of a paired run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseRevision {
    /// As given in `KERNELGATE_BASE`.
    pub rev: String,
    /// Its commit (or `folder` for a folder of suites).
    pub commit: String,
}

impl TrialRecord {
    /// The command that re-records this trial's stored baseline, where that is a fix: it was
    /// compared with a stored baseline (not in paired mode, where bless is refused) and its
    /// output was right (a wrong result is never blessed). Against a baseline from another
    /// physical GPU it adds this GPU's run (`KERNELGATE_BLESS=add`) instead of replacing the
    /// baseline: hosts of one model differ, and the spread between them is what the gate needs.
    pub fn rebless(&self) -> Option<String> {
        let stored = matches!(
            self.gate,
            Some(GateNote::Compared { .. } | GateNote::OtherRegime { .. })
        );
        let correct = self.failure != Some(FailKind::Correctness) && self.failure_detail.is_none();
        if !(stored && correct) {
            return None;
        }
        let command = self.commands.as_ref()?.rebless.clone()?;
        let cross_host = matches!(&self.gate, Some(GateNote::Compared { baseline, .. }) if !baseline.other_gpus.is_empty());
        Some(match cross_host {
            true => command.replacen("KERNELGATE_BLESS=1", "KERNELGATE_BLESS=add", 1),
            false => command,
        })
    }

    /// The kind of failure this trial counts as: the recorded kind; for a failed trial whose
    /// file records none, its typed failure's, else correctness — a failed trial never counts as
    /// passed. `compare`, `merge` and the run's exit code use this one rule.
    pub fn fail_kind(&self) -> Option<FailKind> {
        match self.status {
            Status::Failed => Some(
                self.failure
                    .or(self.failure_detail.as_ref().map(|f| f.kind()))
                    .unwrap_or(FailKind::Correctness),
            ),
            _ => self.failure,
        }
    }

    /// What this trial's commands start with before libtest's filter
    /// ([`Commands::invocation`]); for files that did not record it, the perf binary under
    /// cargo, with the paired base where the trial was compared with one.
    pub fn invocation(&self) -> String {
        if let Some(i) = self.commands.as_ref().and_then(|c| c.invocation.clone()) {
            return i;
        }
        let base = self.base_word().unwrap_or_default();
        format!("{base}{}", crate::shell::DEFAULT_LAUNCHER)
    }

    /// `KERNELGATE_BASE=<rev> ` where the trial was compared with a paired base.
    fn base_word(&self) -> Option<String> {
        match &self.gate {
            Some(GateNote::Paired { rev, .. } | GateNote::IdenticalCode { rev, .. }) => Some(
                format!("KERNELGATE_BASE={} ", crate::shell::shell_word(rev)),
            ),
            _ => None,
        }
    }

    /// The commands that repeat this trial's experiment: as recorded, and in files written
    /// before commands carried the run's mode, a paired trial's rerun and profile with its
    /// `KERNELGATE_BASE` (without it they would re-run it against stored baselines).
    pub fn repeat(&self) -> Commands {
        let Some(mut c) = self.commands.clone() else {
            return Commands {
                rerun: format!(
                    "{} --exact {}",
                    self.invocation(),
                    crate::shell::quoted(&self.name)
                ),
                profile: None,
                rebless: None,
                invocation: None,
            };
        };
        let base = match self.base_word() {
            Some(base) if c.invocation.is_none() && !c.rerun.contains("KERNELGATE_BASE=") => base,
            _ => return c,
        };
        c.rerun = format!("{base}{}", c.rerun);
        c.profile = c.profile.map(|p| format!("{base}{p}"));
        c
    }

    /// The verdict reports show: the gate's, or `identical code` for a paired trial decided
    /// without timing (its code identical at the base).
    pub fn decided(&self) -> Option<crate::gate::Verdict> {
        self.verdict.map(|v| v.verdict).or_else(|| {
            matches!(self.gate, Some(GateNote::IdenticalCode { .. }))
                .then_some(crate::gate::Verdict::IdenticalCode)
        })
    }
}

impl Results {
    /// The base's short label in paired mode: `base c7b4c3e` (a folder's name as given).
    pub fn base_label(&self) -> Option<String> {
        self.base.as_ref().map(|b| {
            let commit = if b.commit == "folder" {
                &b.rev
            } else {
                b.commit.get(..7).unwrap_or(&b.commit)
            };
            format!("base {commit}")
        })
    }

    /// How the run decided: `paired against base <rev> (<commit>)`, or `against stored
    /// baselines`; every report says it.
    pub fn mode(&self) -> String {
        match &self.base {
            Some(b) => format!(
                "paired against KERNELGATE_BASE={} ({})",
                b.rev,
                b.commit.get(..12).unwrap_or(&b.commit)
            ),
            None => "against stored baselines".into(),
        }
    }

    /// The device's fingerprint, described (`no GPU` when none).
    pub fn described_device(&self) -> String {
        self.device
            .as_ref()
            .map_or_else(|| "no GPU".into(), |d| d.describe())
    }

    /// The worst failure of the run, which decides its exit code (of a pool: its devices').
    pub fn worst_failure(&self) -> Option<FailKind> {
        let runs = self.runs();
        let trials = runs.iter().flat_map(|r| &r.trials);
        trials.filter_map(TrialRecord::fail_kind).max()
    }

    /// The runs it holds: a pool's, one per device, else itself.
    pub fn runs(&self) -> Vec<&Results> {
        match self.pool.is_empty() {
            true => vec![self],
            false => self.pool.iter().collect(),
        }
    }
}
