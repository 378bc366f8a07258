//! `Run`: one blessing of a trial — its samples, with the physical GPU and the host they came
//! from. A baseline entry keeps a list of runs (`KERNELGATE_BLESS=add` appends one,
//! `KERNELGATE_BLESS=1` replaces them all); the gate compares with their pooled samples and
//! requires a slowdown to exceed their between-run spread as well as `max_slowdown`.
//!
//! Why: hosts of one model differ by 3–8% on some kernels, most near the launch floor (seen:
//! baselines blessed on one H200 host, the unchanged suite run on another H200 of the same
//! fingerprint: `reduce::two_pass::n=65536 REGRESSED +4.4% [+3.8%, +5.0%]` in 3 of 3 runs).

use super::date::today;
use crate::device::DeviceInfo;
use crate::stats::Summary;
use serde::{Deserialize, Serialize};

/// Samples kept per trial in a baseline (evenly thinned beyond this).
pub const MAX_STORED_SAMPLES: usize = 256;

/// Most runs an entry keeps; adding one more drops the oldest.
pub const MAX_RUNS: usize = 12;

/// Where samples were measured: the physical GPU and the host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The GPU's UUID (`GPU-xxxxxxxx-…`, as nvidia-smi prints it), when known.
    pub gpu: Option<String>,
    /// The host's name, when known.
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
            date: today(),
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

/// The pooled samples of several runs' samples: each run thinned to `MAX_STORED_SAMPLES / runs`,
/// so a run weighs about as much as another and the pool stays as small as one run's.
pub fn pool(runs: &[&[f64]]) -> Vec<f64> {
    let each = (MAX_STORED_SAMPLES / runs.len().max(1)).max(1);
    runs.iter().flat_map(|r| thin(r, each)).collect()
}

/// At most `cap` samples, evenly spaced through `samples` (keeping the measured order).
pub fn thin(samples: &[f64], cap: usize) -> Vec<f64> {
    if samples.len() <= cap {
        return samples.to_vec();
    }
    (0..cap).map(|i| samples[i * samples.len() / cap]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_the_largest_run_median_over_the_smallest() {
        assert_eq!(spread([]), 1.0);
        assert_eq!(spread([5e-6]), 1.0);
        assert!((spread([5e-6, 5.2e-6, 5.1e-6]) - 1.04).abs() < 1e-12);
        assert_eq!(spread([5e-6, 0.0]), 1.0, "a broken median does not widen");
        assert_eq!(spread([5e-6, f64::NAN]), 1.0);
    }

    #[test]
    fn thinning_keeps_the_order_and_spreads_evenly() {
        let s: Vec<f64> = (0..1000).map(f64::from).collect();
        let t = thin(&s, 256);
        assert_eq!(t.len(), 256);
        assert_eq!((t[0], t[255]), (0.0, 996.0));
        assert_eq!(thin(&s[..10], 256).len(), 10);
    }
}
