//! `figures`: what the terminal shows for one measured trial — median with its interval,
//! speedup over the reference with its interval, and achieved rates against the device's peak —
//! and the units every reporter formats with. Reporters render the runner's typed records.

use crate::device::DeviceInfo;
use crate::stats::Summary;
use results::{Measurement, Results};

pub mod added;
pub mod annotations;
pub mod closing;
pub mod compare;
pub mod counters;
mod gate_note;
pub mod identical;
pub mod junit;
pub mod markdown;
pub mod merge;
pub mod pool;
pub mod provenance;
pub mod reading;
pub mod results;
pub mod results_file;
mod skipped;
pub mod terminal;
pub mod totals;
pub mod validate;
pub mod variants;

/// Formats seconds with a unit that keeps three or four significant digits.
pub fn duration(seconds: f64) -> String {
    let (value, unit) = if seconds < 1e-6 {
        (seconds * 1e9, "ns")
    } else if seconds < 1e-3 {
        (seconds * 1e6, "µs")
    } else if seconds < 1.0 {
        (seconds * 1e3, "ms")
    } else {
        (seconds, "s")
    };
    let digits = digits(value, 3);
    format!("{value:.digits$} {unit}")
}

/// How many decimals keep `value` (0 to 999) to `most` + 1 significant digits: `most` under
/// 10, one fewer under 100, two fewer above.
fn digits(value: f64, most: usize) -> usize {
    most - usize::from(value >= 10.0) - usize::from(value >= 100.0)
}

/// Formats a byte count with a binary prefix: `512 B`, `24.0 MiB`, `4.25 GiB`.
pub fn bytes(n: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    match units.iter().find(|(scale, _)| n >= *scale) {
        Some((scale, unit)) => {
            let v = n as f64 / *scale as f64;
            let digits = digits(v, 2);
            format!("{v:.digits$} {unit}")
        }
        None => format!("{n} B"),
    }
}

/// Formats a rate with an SI prefix: `812 GB/s`, `1.21 TFLOP/s`.
pub fn rate(per_second: f64, unit: &str) -> String {
    let prefixes = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let (scale, prefix) = prefixes
        .iter()
        .copied()
        .find(|(s, _)| per_second >= *s)
        .unwrap_or((1.0, ""));
    let value = per_second / scale;
    let digits = digits(value, 2);
    format!("{value:.digits$} {prefix}{unit}")
}

/// A launch's shared memory per block, static and dynamic, bytes.
pub fn shared(l: &crate::measure::Resources) -> u64 {
    l.static_shared.max(0) as u64 + l.dynamic_shared as u64
}

/// One per-launch resource as a table shows it.
pub type Column = fn(&crate::measure::Resources) -> String;

/// The per-launch resources the HTML report's tables show, by name, in their order.
pub const LAUNCH: [(&str, Column); 6] = [
    ("block threads", |l| l.block_threads.to_string()),
    ("blocks / SM", |l| l.blocks_per_sm.to_string()),
    ("threads / SM", |l| {
        (l.block_threads as i64 * l.blocks_per_sm as i64).to_string()
    }),
    ("registers / thread", |l| l.registers.to_string()),
    ("shared / block", |l| bytes(shared(l))),
    ("local / thread", |l| format!("{} B", l.local_bytes)),
];

/// A kernel's memory and resources in a few words: `mem 24.0 MiB · regs 16 · smem 0 B · 8 blocks/SM`
/// (per launch, `/`-separated, for multi-launch kernels; local memory and `fp64 ops N` only
/// when used).
pub fn footprint(f: &crate::measure::Footprint) -> String {
    let join = |column: Column| f.launches.iter().map(column).collect::<Vec<_>>().join("/");
    let regs = join(|l| l.registers.to_string());
    let smem = join(|l| bytes(shared(l)));
    let occupancy = join(|l| l.blocks_per_sm.to_string());
    let mut out = match (&f.library, f.launches.is_empty()) {
        // A library call: its kernels' resources as CUPTI recorded them (docs/suites.md).
        (Some(_), true) => format!("mem {} · library call", bytes(f.pool_peak)),
        (Some(_), false) => format!(
            "mem {} · library call · regs {regs} · smem {smem}",
            bytes(f.pool_peak)
        ),
        (None, _) => format!(
            "mem {} · regs {regs} · smem {smem} · {occupancy} blocks/SM",
            bytes(f.pool_peak)
        ),
    };
    let fp64 = f.fp64.as_ref().filter(|u| u.count > 0);
    out.extend(fp64.map(|fp64| format!(" · fp64 ops {}", fp64.count)));
    if f.launches.iter().any(|l| l.local_bytes > 0) {
        let local = join(|l| format!("{} B", l.local_bytes));
        out.push_str(&format!(
            " · local {local}/thread: up to {} for every resident thread, free memory fell {} as it ran",
            bytes(f.local_reservation),
            bytes(f.free_drop)
        ));
    }
    out
}

/// The achieved rates' units and the peaks they are shares of, in [`achieved`]'s order.
pub const PEAKS: [(&str, &str); 2] = [("B/s", "peak"), ("FLOP/s", "FP32 peak")];

/// A measured trial's achieved bandwidth (`bench.bytes`) and FLOP rate (`bench.flops`) over its
/// median time, each with its percentage of the device's peak where that is known.
pub fn achieved(m: &Measurement, device: Option<&DeviceInfo>) -> [Option<(f64, Option<f64>)>; 2] {
    let peaks = device.map_or([0.0; 2], |d| [d.peak_bandwidth(), d.peak_fp32_flops()]);
    let of = |work: Option<f64>, peak: f64| {
        let r = work? / m.time.median;
        Some((r, (peak > 0.0).then(|| 100.0 * r / peak)))
    };
    [of(m.bytes, peaks[0]), of(m.flops, peaks[1])]
}

/// Trial `m`'s roofline on `device` ([`results::Roofline`]): `None` where it declares no work
/// or the device's peak for its kind is not known.
pub fn roofline(m: &Measurement, device: &DeviceInfo) -> Option<results::Roofline> {
    let kind = m.flops_type.unwrap_or(crate::dtype::FlopKind::Fp32);
    let bandwidth = Some(device.peak_bandwidth()).filter(|b| *b > 0.0);
    let memory = |bytes: Option<f64>| bytes.zip(bandwidth).map(|(b, peak)| b / peak);
    let compute = m
        .flops
        .zip(device.peak_flops(kind))
        .map(|(f, peak)| f / peak);
    let (seconds, bound) = match (memory(m.bytes), compute) {
        (Some(a), Some(c)) if c > a => (c, "compute"),
        (Some(a), _) => (a, "memory"),
        (None, Some(c)) => (c, "compute"),
        (None, None) => return None,
    };
    let dram = m
        .counters
        .as_ref()
        .and_then(|c| c.collected())
        .and_then(|c| {
            use crate::measure::counters::Counter;
            let get = |counter| c.kernel.get(&counter).copied();
            Some(get(Counter::DramReadBytes)? + get(Counter::DramWriteBytes)?)
        });
    Some(results::Roofline {
        seconds,
        fraction: seconds / m.time.median,
        bound: bound.into(),
        measured_seconds: memory(dram).map(|d| d.max(compute.unwrap_or(0.0))),
    })
}

/// Trial `m`'s recorded roofline or, in a file from before rooflines were recorded, one on
/// `device` (the one the file ran on).
pub fn recorded_roofline(
    m: &Measurement,
    device: Option<&DeviceInfo>,
) -> Option<results::Roofline> {
    m.roofline.clone().or_else(|| roofline(m, device?))
}

impl Results {
    /// These results with each measured trial's [`roofline`] on their device.
    pub fn with_rooflines(mut self) -> Results {
        if let Some(device) = &self.device_info {
            for m in self
                .trials
                .iter_mut()
                .filter_map(|t| t.measurement.as_mut())
            {
                m.roofline = roofline(m, device);
            }
        }
        self
    }
}

/// `median [low, high]`, each shown by `show`.
pub fn interval(s: &Summary, show: fn(f64) -> String) -> String {
    format!("{} [{}, {}]", show(s.median), show(s.low), show(s.high))
}

/// One measured trial's figures, as the terminal shows them: median with its interval, speedup
/// over the reference, achieved rates against `device`'s peaks, the sample count and regime.
pub fn figures(m: &Measurement, device: &DeviceInfo) -> String {
    let Some(k) = Summary::of(&m.time_samples) else {
        return "no samples".into();
    };
    let mut out = interval(&k, duration);
    match (&m.reference, Summary::of(&m.speedup_samples)) {
        (Some(name), Some(s)) => out.push_str(&format!(
            "  {:.2}× [{:.2}, {:.2}] vs {name}",
            s.median, s.low, s.high
        )),
        _ => out.push_str("  reference"),
    }
    for (a, (unit, of)) in achieved(m, Some(device)).into_iter().zip(PEAKS) {
        if let Some((r, share)) = a {
            out.push_str(&format!("  {}", rate(r, unit)));
            out.extend(share.map(|p| format!(" ({p:.0}% of {of})")));
        }
    }
    if let Some(r) = roofline(m, device) {
        out.push_str(&format!(
            "  roofline {:.0}% ({}",
            100.0 * r.fraction,
            r.bound
        ));
        if let Some(measured) = r.measured_seconds {
            let counted = 100.0 * measured / m.time.median;
            out.push_str(&format!("; {counted:.0}% from the DRAM bytes counted"));
        }
        out.push(')');
    }
    out.push_str(&format!("  n={}", k.n));
    if m.regime == crate::measure::Regime::Graph {
        match m.batch[0] {
            1 => out.push_str(" as graphs of one launch"),
            n => out.push_str(&format!(" as graphs of {n} launches")),
        }
    }
    let c = &m.clocks;
    if c.discarded_rounds > 0 {
        out.push_str(&format!(
            " ({} of {} rounds dropped: SM clock throttled)",
            c.discarded_rounds,
            c.discarded_rounds + c.kept_rounds
        ));
    }
    if m.hit_time_cap {
        let half = 100.0 * k.relative_half_width();
        out.push_str(&format!(" (±{half:.1}% at the time cap)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(duration(3.4e-6), "3.400 µs");
        assert_eq!(duration(12.41e-6), "12.41 µs");
        assert_eq!(duration(123.4e-6), "123.4 µs");
        assert_eq!(duration(2.5e-3), "2.500 ms");
        assert_eq!(duration(850e-9), "850.0 ns");
        assert_eq!(rate(812e9, "B/s"), "812 GB/s");
        assert_eq!(rate(2.86e12, "B/s"), "2.86 TB/s");
        assert_eq!(rate(12.0, "FLOP/s"), "12.0 FLOP/s");
    }

    #[test]
    fn a_library_calls_kernels_are_shown_as_cupti_recorded_them() {
        use crate::measure::{Footprint, Resources};
        let kernel = |entry: &str, registers| Resources {
            entry: entry.into(),
            registers,
            static_shared: 0,
            dynamic_shared: 213 * 1024,
            local_bytes: 0,
            max_threads: 0,
            block_threads: 384,
            blocks_per_sm: 0,
        };
        let call = |algorithm: &str, launches| Footprint {
            pool_peak: 80 << 20,
            launches,
            library: Some(algorithm.into()),
            ..Default::default()
        };
        let old = call("algo 66 · tile 20", vec![kernel("sm90_xmma_gemm", 168)]);
        assert_eq!(
            footprint(&old),
            "mem 80.0 MiB · library call · regs 168 · smem 213 KiB"
        );
        assert_eq!(
            footprint(&call("algo 66", Vec::new())),
            "mem 80.0 MiB · library call",
            "where CUPTI could not load"
        );
        let change = results::ResourceChange {
            entry: "library call".into(),
            registers: [0; 2],
            local_bytes: [0; 2],
            algorithm: Some(["algo 66 · tile 20".into(), "algo 21 · tile 18".into()]),
        };
        assert_eq!(
            terminal::resource_text(&change),
            "`library call` algorithm algo 66 · tile 20 → algo 21 · tile 18"
        );
    }

    #[test]
    fn a_trial_line() {
        let device = DeviceInfo::for_tests("Test GPU", "580.159.04");
        assert!((device.peak_bandwidth() - 3.352e12).abs() < 1e9);
        let measurement = Measurement {
            regime: crate::measure::Regime::Cold,
            batch: [1, 1],
            launch_floor: 3.4e-6,
            time: crate::baseline::Stored {
                median: 10e-6,
                low: 10e-6,
                high: 10e-6,
            },
            time_samples: vec![10e-6; 20],
            speedup: None,
            speedup_samples: vec![2.0; 20],
            max_slowdown: 0.03,
            precision: None,
            hit_time_cap: false,
            l2_flush: None,
            footprint: Default::default(),
            clocks: Default::default(),
            bytes: Some(3.352e7),
            flops: None,
            reference: Some("naive".into()),
            baseline_samples: Vec::new(),
            baseline_footprint: None,
            trial_seconds: None,
            units: Vec::new(),
            counters: None,
            baseline_counters: None,
            counter_changes: Vec::new(),
            counter_gate: None,
            declared_work: None,
            flops_type: None,
            roofline: None,
        };
        assert_eq!(
            figures(&measurement, &device),
            "10.00 µs [10.00 µs, 10.00 µs]  2.00× [2.00, 2.00] vs naive  3.35 TB/s (100% of peak)  roofline 100% (memory)  n=20"
        );
        // Declared as BF16 tensor work that takes 18.7 µs at the peak: compute-bound, and the
        // median of 10 µs is 1.87 of it (a trial the worker fails as implausible).
        let mut m = measurement.clone();
        (m.flops, m.flops_type) = (Some(2e10), Some(crate::dtype::FlopKind::Bf16Tensor));
        let r = roofline(&m, &device).unwrap();
        assert_eq!(r.bound, "compute");
        assert!(
            (r.seconds - 2e10 / (132.0 * 4096.0 * 1.98e9)).abs() < 1e-12,
            "{r:?}"
        );
        assert!((r.fraction - 1.868).abs() < 1e-3, "{r:?}");
        // No declared work, no roofline.
        (m.bytes, m.flops) = (None, None);
        assert_eq!(roofline(&m, &device), None);
    }
}
