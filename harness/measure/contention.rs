//! `contended` and `others`: whether something else used the GPU while a trial was timed —
//! decided from what the timing loop measures anyway — and who it was, where NVML can say.
//!
//! Another kernelgate process waits for the GPU's lock (`crate::lock`); anything else (a CuPy
//! loop, a training job, another CI job's tests) does not. Two CUDA contexts on one GPU take
//! turns in time slices of a millisecond or more: a kernel timed while the other context holds
//! the GPU is timed with the other's slice inside it (seen on an H200 with two concurrent runs:
//! `+79.7%` and `+109.4%` on two references, clocks normal). Two signals:
//!
//! - **the host's round trip to an idle GPU**: after every group of rounds the loop launches an
//!   empty kernel and waits for it. When the worker started it took `latency` (tens of
//!   microseconds); when another context is using the GPU, it waits for that context's time
//!   slice. A round trip over [`FACTOR`] times the start's and [`MARGIN`] beyond it marks the
//!   group's rounds contended: they are dropped like throttled ones, and a trial with more than
//!   `UNRELIABLE_FRACTION` of its rounds dropped is unreliable — never gated, never a
//!   regression.
//! - **NVML's per-process SM utilization** over the trial: a process other than the worker that
//!   used the SMs marks the trial unreliable and is named (pid and name), where NVML reports
//!   processes (it does not inside some containers; then the round trips still hold).

/// A round trip this many times the worker's start latency...
pub const FACTOR: f64 = 4.0;
/// ...and at least this much longer (seconds) marks contention: a CPU hiccup on a busy CI host
/// is tens of microseconds; another context's time slice is a millisecond or more.
pub const MARGIN: f64 = 250e-6;

pub use crate::device::thermal::Active;

/// Whether a host round trip of `probe` seconds to the GPU, against `latency` when the worker
/// started, says another context held the GPU.
pub fn contended(latency: f64, probe: f64) -> bool {
    latency > 0.0 && probe > (FACTOR * latency).max(latency + MARGIN)
}

/// The processes other than this worker (`own`) that used the SMs, described for a person
/// (`pid 4242 (python3)`). Inside a container NVML reports the host's pids, which are not this
/// worker's: then, when this worker is not among them, the busiest is taken for this worker
/// and the others are named, `one of` them when two or more remain.
pub fn others(active: &[Active], own: u32) -> Vec<String> {
    let mut busy: Vec<&Active> = active.iter().filter(|a| a.sm_util > 0).collect();
    busy.sort_by_key(|a| std::cmp::Reverse(a.sm_util));
    busy.dedup_by_key(|a| a.pid);
    if !busy.iter().any(|a| a.pid == own) && !busy.is_empty() {
        busy.remove(0);
    }
    busy.iter()
        .filter(|a| a.pid != own)
        .map(|a| {
            (a.name.as_ref()).map_or(format!("pid {}", a.pid), |n| format!("pid {} ({n})", a.pid))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(pid: u32, name: &str, sm_util: u32) -> Active {
        Active {
            pid,
            name: (!name.is_empty()).then(|| name.to_string()),
            sm_util,
        }
    }

    #[test]
    fn a_round_trip_past_a_time_slice_is_contention() {
        let start = 20e-6;
        assert!(!contended(start, 25e-6), "noise");
        assert!(!contended(start, 200e-6), "a CPU hiccup");
        assert!(contended(start, 1.5e-3), "a time slice of another context");
        assert!(!contended(0.0, 1.0), "no start latency: cannot tell");
        // A slow host: the margin scales with what the start took.
        assert!(!contended(400e-6, 1.2e-3) && contended(400e-6, 1.7e-3));
    }

    #[test]
    fn the_processes_named_are_the_others() {
        let own = 100;
        assert!(others(&[a(100, "kernelgate", 90)], own).is_empty());
        assert_eq!(
            others(
                &[
                    a(100, "kernelgate", 60),
                    a(7, "python3", 35),
                    a(8, "idle", 0)
                ],
                own
            ),
            ["pid 7 (python3)"]
        );
        // In a container: host pids, none of them this worker's. The busiest is this worker.
        assert!(others(&[a(31337, "", 80)], own).is_empty());
        assert_eq!(
            others(&[a(31337, "", 80), a(4242, "python3", 40)], own),
            ["pid 4242 (python3)"]
        );
    }
}
