//! `plausible`: a measured time that implies more bandwidth or arithmetic than the device has
//! means the suite's `bytes`/`flops` are wrong or the kernel skipped work; either way the
//! trial's number is not a time to gate on.

use crate::device::DeviceInfo;
use crate::report::rate;

/// A measured rate above what the device can do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Implausible {
    /// More bytes per second than the device's memory can move.
    #[error("achieved {} is above this device's peak memory bandwidth of {}: either `bytes` in [bench] overstates what the kernel moves, or the kernel skipped work", rate(*.achieved, "B/s"), rate(*.peak, "B/s"))]
    Bandwidth {
        /// Bytes per second measured.
        achieved: f64,
        /// The device's peak.
        peak: f64,
    },
    /// More operations per second than the device's peak for the declared kind (`flops_type`).
    #[error("achieved {} is above this device's roofline for {}: its peak is {} (docs/measurement.md, \"The roofline\"): either `flops` in [bench] overstates what the kernel computes, `flops_type` names slower arithmetic than the kernel does, or the kernel skipped work", rate(*.achieved, "FLOP/s"), .kind.name(), rate(*.peak, "FLOP/s"))]
    Roofline {
        /// Operations per second measured.
        achieved: f64,
        /// The device's peak for `kind`.
        peak: f64,
        /// The suite's `flops_type`.
        kind: crate::dtype::FlopKind,
    },
    /// More operations per second than any arithmetic of the device.
    #[error("achieved {} is above any arithmetic rate of this device ({}, {FLOPS_OVER_FP32}× its FP32 peak): either `flops` in [bench] overstates what the kernel computes, or the kernel skipped work", rate(*.achieved, "FLOP/s"), rate(*.peak, "FLOP/s"))]
    Arithmetic {
        /// Operations per second measured.
        achieved: f64,
        /// `FLOPS_OVER_FP32` times the FP32 peak.
        peak: f64,
    },
}

/// Measurement slack over a peak from the device's attributes (the memory clock the driver
/// reports is rounded, sustained copies reach about 90% of it; the median has its error).
pub const PEAK_SLACK: f64 = 1.05;

/// No arithmetic on a current GPU is this many times faster than its FP32 peak (sparse FP8
/// tensor cores on sm_90 are about 60×); `flops` counts operations of any kind, so this is
/// the only bound that holds for every kernel.
pub const FLOPS_OVER_FP32: f64 = 64.0;

/// Checks the kernel's median time `seconds` against the device's peaks. Bandwidth is
/// checked only where the kernel's data cannot be served from L2 (`from_dram`: L2 flushed
/// before each sample and, in a graph, the copies together larger than L2); `flops` against the
/// peak of `kind` where the suite declares one (with the same slack), else against any
/// arithmetic's bound.
pub fn plausible(
    bytes: Option<f64>,
    (flops, kind): (Option<f64>, Option<crate::dtype::FlopKind>),
    seconds: f64,
    device: &DeviceInfo,
    from_dram: bool,
) -> Result<(), Implausible> {
    if seconds.is_nan() || seconds <= 0.0 {
        return Ok(());
    }
    let peak = device.peak_bandwidth();
    if let (Some(b), true, true) = (bytes, from_dram, peak > 0.0) {
        let achieved = b / seconds;
        if achieved > PEAK_SLACK * peak {
            return Err(Implausible::Bandwidth { achieved, peak });
        }
    }
    let declared = kind.and_then(|kind| Some((kind, device.peak_flops(kind)?)));
    if let (Some(f), Some((kind, peak))) = (flops, declared) {
        let achieved = f / seconds;
        if achieved > PEAK_SLACK * peak {
            return Err(Implausible::Roofline {
                achieved,
                peak,
                kind,
            });
        }
    }
    let peak = device.peak_fp32_flops() * FLOPS_OVER_FP32;
    if let (Some(f), true) = (flops, peak > 0.0) {
        let achieved = f / seconds;
        if achieved > peak {
            return Err(Implausible::Arithmetic { achieved, peak });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceInfo {
        DeviceInfo::for_tests("NVIDIA H100 80GB HBM3", "580.0")
    }

    #[test]
    fn bandwidth_above_peak_fails_with_both_figures() {
        // 3.352e12 B/s peak; 12 MB in 3 µs is 4 TB/s.
        let e = plausible(Some(12e6), (None, None), 3e-6, &h100(), true)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "achieved 4.00 TB/s is above this device's peak memory bandwidth of 3.35 TB/s"
            ),
            "{e}"
        );
        assert_eq!(
            plausible(Some(12e6), (None, None), 4e-6, &h100(), true),
            Ok(())
        );
        assert_eq!(
            plausible(Some(12e6), (None, None), 3e-6, &h100(), false),
            Ok(()),
            "from L2 it may be faster"
        );
    }

    #[test]
    fn flops_above_any_rate_fail() {
        let peak = h100().peak_fp32_flops() * FLOPS_OVER_FP32;
        assert!(plausible(None, (Some(peak * 2e-3), None), 1e-3, &h100(), true).is_err());
        assert_eq!(
            plausible(None, (Some(peak * 0.5e-3), None), 1e-3, &h100(), true),
            Ok(())
        );
    }

    /// Declared as BF16 tensor work, a rate over that peak fails naming the roofline; the same
    /// rate declared as FP32 fails too, far sooner than the any-arithmetic bound.
    #[test]
    fn flops_above_their_kinds_peak_fail_naming_the_roofline() {
        use crate::dtype::FlopKind;
        let d = h100();
        let peak = d.peak_flops(FlopKind::Bf16Tensor).unwrap();
        assert!((peak - 132.0 * 4096.0 * 1.98e9).abs() < 1e6);
        let ok = plausible(
            None,
            (Some(0.9 * peak * 1e-3), Some(FlopKind::Bf16Tensor)),
            1e-3,
            &d,
            true,
        );
        assert_eq!(ok, Ok(()));
        let e = plausible(
            None,
            (Some(1.2 * peak * 1e-3), Some(FlopKind::Bf16Tensor)),
            1e-3,
            &d,
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("above this device's roofline for bf16-tensor: its peak is 1.07 PFLOP/s"),
            "{e}"
        );
        let fp32 = plausible(
            None,
            (Some(0.9 * peak * 1e-3), Some(FlopKind::Fp32)),
            1e-3,
            &d,
            true,
        );
        assert!(
            matches!(fp32, Err(Implausible::Roofline { .. })),
            "{fp32:?}"
        );
        // A kind whose peak is not known here: the any-arithmetic bound alone.
        let mut ada = d.clone();
        ada.compute_capability = (8, 9);
        let unknown = plausible(
            None,
            (Some(0.9 * peak * 1e-3), Some(FlopKind::Bf16Tensor)),
            1e-3,
            &ada,
            true,
        );
        assert_eq!(unknown, Ok(()));
    }
}
