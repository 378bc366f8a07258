//! `Run`: one blessing of a trial — its samples, with the physical GPU and the host they came
//! from. A baseline entry keeps a list of runs (`KERNELGATE_BLESS=add` appends one,
//! `KERNELGATE_BLESS=1` replaces them all); the gate compares with their pooled samples and
//! requires a slowdown to exceed their between-run spread as well as `max_slowdown`.
//!
//! Why: hosts of one model differ by 3–8% on some kernels, most near the launch floor (seen:
//! baselines blessed on one H200 host, the unchanged suite run on another H200 of the same
//! fingerprint: `reduce::two_pass::n=65536 REGRESSED +4.4% [+3.8%, +5.0%]` in 3 of 3 runs).

use super::{thin, Entry, Stored, MAX_STORED_SAMPLES};
use crate::device::DeviceInfo;
use crate::stats::Summary;
use serde::{Deserialize, Serialize};

/// Most runs an entry keeps; adding one more drops the oldest.
pub const MAX_RUNS: usize = 8;

/// Where samples were measured: the physical GPU and the host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The GPU's UUID (`GPU-xxxxxxxx-…`, as nvidia-smi prints it), when known.
    #[serde(default)]
    pub gpu: Option<String>,
    /// The host's name, when known.
    #[serde(default)]
    pub host: Option<String>,
}

impl Origin {
    /// This host, with the GPU of UUID `gpu` (when known).
    pub fn here(gpu: Option<String>) -> Origin {
        Origin {
            gpu,
            host: host_name(),
        }
    }

    /// This host, with the GPU of ordinal `ordinal`'s UUID when `device` (the run's device, as
    /// the executor reports it) is that GPU. With several GPUs (`KERNELGATE_DEVICE=0,1`) only
    /// the first one's UUID is known here, so trials on the others record none rather than a
    /// wrong one.
    pub fn measured_on(device: Option<&DeviceInfo>, ordinal: i32) -> Origin {
        Origin::here(
            device
                .filter(|d| d.ordinal == ordinal)
                .and_then(|d| d.uuid.clone()),
        )
    }

    /// Whether both GPUs are known and differ: a baseline from another physical GPU.
    pub fn other_gpu_than(&self, here: &Origin) -> bool {
        matches!((&self.gpu, &here.gpu), (Some(a), Some(b)) if a != b)
    }

    /// `GPU-8c1f3f2e on h200-07`: the UUID's first group and the host, for a trial's line.
    pub fn describe(&self) -> String {
        let gpu = match &self.gpu {
            Some(u) => u.split('-').take(2).collect::<Vec<_>>().join("-"),
            None => "an unrecorded GPU".into(),
        };
        match &self.host {
            Some(h) => format!("{gpu} on {h}"),
            None => gpu,
        }
    }
}

/// The machine's host name (`/proc/sys/kernel/hostname`, else `HOSTNAME`), when there is one.
pub fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// One blessing of a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Where it was measured (`null`s in a baseline migrated from format 1).
    #[serde(flatten)]
    pub origin: Origin,
    /// Date recorded, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// kernelgate's version that recorded it.
    pub kernelgate: String,
    /// Median time, seconds.
    pub median: f64,
    /// Median speedup over the reference (absent for the reference itself).
    pub speedup: Option<f64>,
    /// Time samples, seconds (at most `MAX_STORED_SAMPLES`).
    pub time_samples: Vec<f64>,
    /// Per-round speedup samples.
    pub speedup_samples: Vec<f64>,
}

impl Run {
    /// A run of these samples (thinned to `MAX_STORED_SAMPLES`), measured at `origin` today.
    pub fn new(origin: Origin, time_samples: &[f64], speedup_samples: &[f64]) -> Option<Run> {
        let time = Summary::of(time_samples)?;
        Some(Run {
            origin,
            date: super::today(),
            kernelgate: env!("CARGO_PKG_VERSION").to_string(),
            median: time.median,
            speedup: Summary::of(speedup_samples).map(|s| s.median),
            time_samples: thin(time_samples, MAX_STORED_SAMPLES),
            speedup_samples: thin(speedup_samples, MAX_STORED_SAMPLES),
        })
    }
}

/// The between-run spread factor of run medians: the largest over the smallest, 1 for fewer
/// than two runs (or any median not positive and finite).
pub fn spread(medians: impl IntoIterator<Item = f64>) -> f64 {
    let medians: Vec<f64> = medians.into_iter().collect();
    if medians.len() < 2 || medians.iter().any(|m| !(m.is_finite() && *m > 0.0)) {
        return 1.0;
    }
    let max = medians.iter().copied().fold(f64::MIN, f64::max);
    let min = medians.iter().copied().fold(f64::MAX, f64::min);
    max / min
}

impl Entry {
    /// A format-1 entry (samples, no runs) as one run of unknown origin; other entries as
    /// they are.
    pub fn ensure_runs(&mut self) {
        if !self.runs.is_empty() || self.time_samples.is_empty() {
            return;
        }
        self.runs.push(Run {
            origin: Origin::default(),
            date: self.date.clone(),
            kernelgate: self.kernelgate.clone(),
            median: self.time.median,
            speedup: self.speedup.map(|s| s.median),
            time_samples: self.time_samples.clone(),
            speedup_samples: self.speedup_samples.clone(),
        });
    }

    /// Recomputes the pooled samples (each run thinned to `MAX_STORED_SAMPLES / runs`, so a
    /// run weighs about as much as another and the pool stays as small as one run's) from the
    /// runs. The summaries (`time`, `speedup`) are recomputed when there is more than one run;
    /// a single run keeps the summary it was stored with.
    pub fn pool(&mut self) {
        if self.runs.is_empty() {
            return;
        }
        let each = (MAX_STORED_SAMPLES / self.runs.len()).max(1);
        self.time_samples = self
            .runs
            .iter()
            .flat_map(|r| thin(&r.time_samples, each))
            .collect();
        self.speedup_samples = self
            .runs
            .iter()
            .flat_map(|r| thin(&r.speedup_samples, each))
            .collect();
        if self.runs.len() > 1 {
            if let Some(time) = Summary::of(&self.time_samples) {
                self.time = Stored::from(time);
            }
            self.speedup = Summary::of(&self.speedup_samples).map(Stored::from);
        }
    }

    /// Adds `run` to this entry (dropping the oldest beyond `MAX_RUNS`) and re-pools.
    pub fn add_run(&mut self, run: Run) {
        self.ensure_runs();
        self.runs.push(run);
        let extra = self.runs.len().saturating_sub(MAX_RUNS);
        self.runs.drain(..extra);
        self.pool();
    }

    /// The between-run spread factor of this entry's time ([`spread`] of its run medians).
    pub fn spread(&self) -> f64 {
        spread(self.runs.iter().map(|r| r.median))
    }

    /// Where this entry's runs came from, when none of them came from `here`'s GPU and some
    /// came from another known one: a verdict against it is a verdict across physical GPUs.
    pub fn other_gpus(&self, here: &Origin) -> Vec<Origin> {
        let same = |o: &Origin| o.gpu.is_some() && o.gpu == here.gpu;
        if here.gpu.is_none() || self.runs.iter().any(|r| same(&r.origin)) {
            return Vec::new();
        }
        let mut out: Vec<Origin> = Vec::new();
        for r in &self.runs {
            if r.origin.other_gpu_than(here) && !out.contains(&r.origin) {
                out.push(r.origin.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{settle, with_spread, GateInput, Verdict, REMEASURE_EFFORT};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, LogNormal};

    fn on(gpu: &str, host: &str) -> Origin {
        Origin {
            gpu: Some(gpu.into()),
            host: Some(host.into()),
        }
    }

    /// An entry blessed once, from `run`.
    fn entry(run: Run) -> Entry {
        let mut e = Entry {
            kernel: "k".into(),
            case: "n=1".into(),
            regime: crate::measure::Regime::Cold,
            time: Stored::from(Summary::of(&run.time_samples).unwrap()),
            time_samples: Vec::new(),
            speedup: None,
            speedup_samples: Vec::new(),
            footprint: None,
            reference: "k".into(),
            kernelgate: "0.1.0".into(),
            date: run.date.clone(),
            runs: vec![run],
        };
        e.pool();
        e
    }

    fn run(origin: Origin, times: Vec<f64>) -> Run {
        Run::new(origin, &times, &[]).unwrap()
    }

    #[test]
    fn spread_is_the_largest_run_median_over_the_smallest() {
        assert_eq!(spread([]), 1.0);
        assert_eq!(spread([5e-6]), 1.0);
        assert!((spread([5e-6, 5.2e-6, 5.1e-6]) - 1.04).abs() < 1e-12);
        assert_eq!(spread([5e-6, 0.0]), 1.0, "a broken median does not widen");
        assert_eq!(spread([5e-6, f64::NAN]), 1.0);
    }

    #[test]
    fn adding_runs_pools_weighs_and_caps_them() {
        let mut e = entry(run(on("GPU-a", "h1"), vec![1.0; 256]));
        assert_eq!(e.time_samples.len(), 256);
        e.add_run(run(on("GPU-b", "h2"), vec![1.04; 16]));
        assert_eq!(e.runs.len(), 2);
        // Each run thinned to 128: the long one does not drown the short one.
        assert_eq!(e.time_samples.len(), 128 + 16);
        assert!((e.spread() - 1.04).abs() < 1e-12);
        assert_eq!(e.time.median, 1.0, "the pooled summary");
        for k in 0..MAX_RUNS {
            e.add_run(run(on("GPU-c", "h3"), vec![2.0 + k as f64; 4]));
        }
        assert_eq!(e.runs.len(), MAX_RUNS, "the oldest are dropped");
        assert_eq!(e.runs[0].median, 2.0);
        assert!(e.time_samples.len() <= MAX_STORED_SAMPLES);
    }

    #[test]
    fn another_physical_gpu_is_named_only_when_none_of_the_runs_is_this_one() {
        let mut e = entry(run(on("GPU-8c1f3f2e-aaaa-bbbb", "h200-07"), vec![1.0; 4]));
        let here = on("GPU-0000ffff-cccc-dddd", "h200-09");
        assert_eq!(
            e.other_gpus(&here),
            [on("GPU-8c1f3f2e-aaaa-bbbb", "h200-07")]
        );
        assert_eq!(e.other_gpus(&here)[0].describe(), "GPU-8c1f3f2e on h200-07");
        assert!(
            e.other_gpus(&Origin::default()).is_empty(),
            "this GPU unknown"
        );
        e.add_run(run(here.clone(), vec![1.0; 4]));
        assert!(
            e.other_gpus(&here).is_empty(),
            "a run from this GPU is pooled"
        );
        let migrated = entry(run(Origin::default(), vec![1.0; 4]));
        assert!(
            migrated.other_gpus(&here).is_empty(),
            "a format-1 baseline's GPU is unknown: nothing is claimed"
        );
        assert_eq!(Origin::default().describe(), "an unrecorded GPU");
    }

    /// GPU timing noise as the gate's own tests model it (log-normal σ = 1.5%, 3% slow
    /// outliers), on a host whose speed is `host` (1.04: 4% slower) with a kernel `shift`.
    fn samples(rng: &mut ChaCha8Rng, n: usize, host: f64, shift: f64) -> Vec<f64> {
        let body: LogNormal<f64> = LogNormal::new(0.0, 0.015).unwrap();
        (0..n)
            .map(|_| {
                let outlier = if rng.random::<f64>() < 0.03 {
                    1.0 + rng.random_range(0.05..0.40)
                } else {
                    1.0
                };
                5e-6 * host * shift * body.sample(rng) * outlier
            })
            .collect()
    }

    /// The verdict of a run on `host` with a kernel `shift` against `baseline`, through the
    /// run's own policy: the spread-widened threshold and one re-measure.
    fn gate(rng: &mut ChaCha8Rng, baseline: &Entry, host: f64, shift: f64) -> Verdict {
        const N: usize = 16;
        let max_slowdown = with_spread(0.03, baseline.spread());
        let input = |new_times| GateInput {
            old_times: baseline.time_samples.clone(),
            new_times,
            speedups: None,
            max_slowdown,
            paired: None,
        };
        let first = input(samples(rng, N, host, shift));
        let mut again = |_: usize| -> Result<GateInput, ()> {
            Ok(input(samples(
                rng,
                REMEASURE_EFFORT as usize * N,
                host,
                shift,
            )))
        };
        settle(vec![first], Some(&mut again))[0]
            .unwrap()
            .verdict
            .verdict
    }

    /// Hosts of one model 4% apart (seen up to 8% on H200s): blessed on one host only, the
    /// other host's unchanged runs regress; with a run added from each (`KERNELGATE_BLESS=add`)
    /// they do not, and a real 10% slowdown is still caught.
    #[test]
    fn a_a_across_hosts_after_adding_a_run_from_each() {
        const TRIALS: usize = 300;
        let (a, b) = (1.00, 1.04);
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let mut one_host = 0;
        let (mut false_a, mut false_b, mut caught_a, mut caught_b) = (0, 0, 0, 0);
        let mut flagged_a = 0;
        for _ in 0..TRIALS {
            let blessed_on_a = entry(run(on("GPU-a", "h1"), samples(&mut rng, 16, a, 1.0)));
            one_host += (gate(&mut rng, &blessed_on_a, b, 1.0) == Verdict::Regressed) as usize;
            let mut both = blessed_on_a.clone();
            both.add_run(run(on("GPU-b", "h2"), samples(&mut rng, 16, b, 1.0)));
            false_a += (gate(&mut rng, &both, a, 1.0) == Verdict::Regressed) as usize;
            false_b += (gate(&mut rng, &both, b, 1.0) == Verdict::Regressed) as usize;
            let on_a = gate(&mut rng, &both, a, 1.10);
            caught_a += (on_a == Verdict::Regressed) as usize;
            flagged_a += (on_a != Verdict::Unchanged) as usize;
            caught_b += (gate(&mut rng, &both, b, 1.10) == Verdict::Regressed) as usize;
        }
        eprintln!(
            "hosts 4% apart, {TRIALS} trials: blessed on one host, the other regressed {one_host}; \
             runs from both: false regressions {false_a} (fast host), {false_b} (slow host); \
             10% slowdown caught {caught_a} (fast host; {flagged_a} regressed or inconclusive), \
             {caught_b} (slow host)"
        );
        assert!(one_host > TRIALS / 4, "the problem is real: {one_host}");
        assert!(
            false_a + false_b <= 2 * TRIALS / 100,
            "{false_a} + {false_b}"
        );
        assert!(caught_b >= TRIALS * 95 / 100, "{caught_b}");
        // The price of the spread: on the fastest host a 10% slowdown is only 5.8% over the
        // slowest run, under the 7.1% threshold, so it is often inconclusive, not regressed —
        // but it is not passed as unchanged.
        assert!(flagged_a >= TRIALS * 95 / 100, "{flagged_a}");
    }
}
