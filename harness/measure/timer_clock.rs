//! The `Timer`'s watch on the GPU between groups of rounds: the SM clock probe (queued
//! behind the rounds, so that reading it back is the group's one wait) and the host's round
//! trip to the idle GPU (`measure::contention`), which together decide whether a group's
//! rounds are kept, discarded (throttled) or dropped as contended; and NVML's list of the other
//! processes that used the GPU meanwhile.

use super::{Timer, PROBE_SPINS, THROTTLE_FRACTION};
use crate::device::{DeviceError, Gpu, KernelArg as Arg, LaunchDims};
use crate::measure::samples::Clocks;
use std::time::Instant;

impl Timer {
    /// Starts asking NVML which other processes used this GPU's SMs since `since_us`
    /// (microseconds since the Unix epoch, from [`now_us`]), on a thread of its own: the query
    /// took ~1.6 ms on an H200 (issue 22: 0.65 s of the 400-trial sweep), so the worker asks
    /// once per trial, after its last allocation was sampled, and checks what that allocation's
    /// timed launches left meanwhile. [`Timer::others`] waits for the answer.
    pub fn ask_others(&self, since_us: u64) -> OthersQuery {
        let thermal = self.thermal.clone();
        OthersQuery(thermal.map(|t| {
            std::thread::spawn(move || {
                let own = std::process::id();
                t.active_processes(since_us, own)
                    .map(|active| crate::measure::contention::others(&active, own))
                    .unwrap_or_default()
            })
        }))
    }

    /// The other processes `query` found, named (`measure::contention`); empty where NVML
    /// cannot tell. The wait counts in the sampling profile.
    pub fn others(&mut self, query: OthersQuery) -> Vec<String> {
        let at = Instant::now();
        let others = query.0.and_then(|h| h.join().ok()).unwrap_or_default();
        self.host_time(at, "contention");
        others
    }

    /// The host's round trip to the GPU with nothing of ours queued: an empty kernel launched
    /// and waited for, seconds. Long when another context holds the GPU (`contention`).
    pub(super) fn round_trip(&self, gpu: &Gpu) -> Result<f64, DeviceError> {
        let dims = LaunchDims::line(1, 1);
        let start = Instant::now();
        gpu.launch(&self.empty, dims, &[])?;
        gpu.synchronize()?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// Runs the clock probe and returns the SM clock in MHz (0 when it cannot tell).
    pub(super) fn read_clock(&mut self, gpu: &Gpu) -> Result<f64, DeviceError> {
        self.queue_clock(gpu)?;
        self.clock_result(gpu)
    }

    /// Queues the clock probe behind whatever the stream holds.
    pub(super) fn queue_clock(&self, gpu: &Gpu) -> Result<(), DeviceError> {
        let spins = PROBE_SPINS.to_le_bytes();
        let args = [Arg::Buffer(&self.clock_out), Arg::Scalar(&spins)];
        gpu.launch(&self.clock, LaunchDims::line(1, 32), &args)
    }

    /// Waits for the queued clock probe (and everything before it) and returns its reading,
    /// MHz.
    pub(super) fn clock_result(&mut self, gpu: &Gpu) -> Result<f64, DeviceError> {
        gpu.download_into(&self.clock_out, &mut self.clock_host)?;
        let raw = &self.clock_host;
        let word =
            |i: usize| u64::from_le_bytes(raw[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (cycles, ns) = (word(0), word(1));
        let mhz = if ns > 0 {
            cycles as f64 / ns as f64 * 1e3
        } else {
            0.0
        };
        self.max_mhz = self.max_mhz.max(mhz);
        Ok(mhz)
    }

    /// Records the SM clock read after a group of `rounds` rounds (`mhz`) and the host's round
    /// trip to the GPU taken then (`trip`) into `clocks`: whether the clock held and the GPU was ours
    /// (the rounds are kept), or it was throttled (counted as discarded) or held by another
    /// context (counted as contended).
    pub(super) fn clock_held(
        &mut self,
        mhz: f64,
        trip: f64,
        rounds: usize,
        clocks: &mut Clocks,
    ) -> bool {
        if crate::measure::contention::contended(self.latency, trip) {
            clocks.contended_rounds += rounds;
            return false;
        }
        clocks.mhz.push(mhz);
        if let Some(c) = self.thermal.as_ref().and_then(|t| t.celsius()) {
            clocks.celsius.push(c);
        }
        if mhz > 0.0 && mhz < THROTTLE_FRACTION * self.max_mhz {
            // Throttled: these rounds are not the kernel's time.
            clocks.discarded_rounds += rounds;
            return false;
        }
        clocks.kept_rounds += rounds;
        true
    }
}

/// NVML's answer to [`Timer::ask_others`], on its way.
pub struct OthersQuery(Option<std::thread::JoinHandle<Vec<String>>>);

/// Now, in microseconds since the Unix epoch: where [`Timer::ask_others`] looks from.
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}
