//! `vacuous_on_device`: `check::vacuous`'s question — would an output holding no answer (all
//! zeros, all poison, one constant: the expected values' mean) pass its tolerance? — asked of
//! the reference's outputs where they stay on the device, so that they are never downloaded
//! unless a check fails (issue 22). Two launches, each read back as per-block partials:
//! `kernelgate_stats` (sum, count and largest magnitude of the finite values), then
//! `kernelgate_vacuous` (per candidate, the elements it fails on and those whose bytes differ
//! from it). The candidates and the rule are `check::vacuous`'s own ([`candidates`]); the
//! kernels' source is `check::vacuous_kernels`.

use super::kernels::{blocks_for, code, in_blocks, Kernels};
use super::vacuous::{candidates, mean_of, Vacuous};
use crate::device::{DeviceBuffer, DeviceError, Function, Gpu, KernelArg};
use crate::dtype::DType;
use crate::suite::Tolerance;

/// Bytes of one `KgStats`.
pub const STATS_BYTES: usize = 24;
/// Bytes of one `KgVacuous`.
pub const VACUOUS_BYTES: usize = 48;

/// The sum, count and largest magnitude of the finite values, from `kernelgate_stats`'s
/// partials, combined in block order (as `check::vacuous` combines its chunks).
pub fn merge_stats(raw: &[u8]) -> (f64, usize, f64) {
    raw.chunks_exact(STATS_BYTES)
        .map(|p| {
            let word = |k: usize| u64::from_le_bytes(p[8 * k..8 * k + 8].try_into().expect("8"));
            (
                f64::from_bits(word(0)),
                word(1) as usize,
                f64::from_bits(word(2)),
            )
        })
        .fold((0.0, 0, 0.0f64), |(s, k, m), (cs, ck, cm)| {
            (s + cs, k + ck, m.max(cm))
        })
}

/// Per candidate, the elements it fails on and those whose bytes differ from it, from
/// `kernelgate_vacuous`'s partials.
pub fn merge_candidates(raw: &[u8]) -> [(u64, u64); 3] {
    let mut out = [(0u64, 0u64); 3];
    for p in raw.chunks_exact(VACUOUS_BYTES) {
        let word = |k: usize| u64::from_le_bytes(p[8 * k..8 * k + 8].try_into().expect("8"));
        for (k, o) in out.iter_mut().enumerate() {
            o.0 += word(k);
            o.1 += word(3 + k);
        }
    }
    out
}

/// The first candidate that passes everywhere without being the expected output itself
/// (`check::vacuous`'s rule): `(fails, differs)` per candidate, as `merge_candidates` gives.
pub fn first_passing(found: &[(u64, u64); 3]) -> Option<usize> {
    found
        .iter()
        .position(|&(fails, differs)| fails == 0 && differs > 0)
}

/// Whether the tolerance `tol` accepts an output with no answer in it, against `expected` (`n`
/// elements of `dtype`, on the device): `check::vacuous::vacuous`, computed there.
pub fn vacuous_on_device(
    kernels: &Kernels,
    gpu: &Gpu,
    (expected, dtype, n): (&DeviceBuffer, DType, usize),
    tol: Tolerance,
) -> Result<Option<Vacuous>, DeviceError> {
    if n == 0 {
        return Ok(None);
    }
    let blocks = blocks_for(n);
    let dims = in_blocks(blocks);
    let len = (n as u64).to_le_bytes();
    let dtype_code = code(dtype).to_le_bytes();
    // Both kernels take the expected values, their count and type, then their own scalars,
    // then where their partials go.
    let launch = |f: &Function, own: &[&[u8]], at: u64| {
        let at = at.to_le_bytes();
        let mut args = vec![
            KernelArg::Buffer(expected),
            KernelArg::Scalar(&len),
            KernelArg::Scalar(&dtype_code),
        ];
        args.extend(own.iter().map(|s| KernelArg::Scalar(s)));
        args.push(KernelArg::Scalar(&at));
        gpu.launch(f, dims, &args)
    };
    let launch_stats = |at| launch(&kernels.stats, &[], at);
    let (sum, count, largest) =
        kernels.with_partials(gpu, blocks * STATS_BYTES, launch_stats, merge_stats)?;
    let kinds = candidates(dtype, mean_of(sum, count, dtype));
    let size = (dtype.size() as i32).to_le_bytes();
    let values = kinds.each_ref().map(|c| c.value.to_le_bytes());
    let bits = kinds.each_ref().map(|c| c.bits.to_le_bytes());
    let (rtol, atol) = (tol.rtol.to_le_bytes(), tol.atol.to_le_bytes());
    let allow_nan = (tol.allow_nan as i32).to_le_bytes();
    let [v0, v1, v2] = &values;
    let [b0, b1, b2] = &bits;
    let scalars: [&[u8]; 10] = [&size, v0, v1, v2, b0, b1, b2, &rtol, &atol, &allow_nan];
    let launch_candidates = |at| launch(&kernels.vacuous, &scalars, at);
    let found = kernels.with_partials(
        gpu,
        blocks * VACUOUS_BYTES,
        launch_candidates,
        merge_candidates,
    )?;
    Ok(first_passing(&found).map(|k| Vacuous {
        holds: kinds[k].name.clone(),
        largest,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::compare::excess;
    use crate::dtype::HostData;

    /// What the two kernels compute for `blocks` blocks of 256 threads striding over `data`,
    /// written again in Rust, then merged as the host merges the partials.
    fn simulate(data: &HostData, tol: Tolerance, blocks: usize) -> Option<Vacuous> {
        let n = data.len();
        let mut stats = Vec::new();
        for b in 0..blocks {
            let (mut s, mut c, mut m) = (0.0f64, 0u64, 0.0f64);
            for t in 0..256 {
                let (mut ts, mut tc, mut tm) = (0.0f64, 0u64, 0.0f64);
                let mut i = b * 256 + t;
                while i < n {
                    let v = data.get(i);
                    if v.is_finite() {
                        ts += v;
                        tc += 1;
                        tm = tm.max(v.abs());
                    }
                    i += blocks * 256;
                }
                // (The device's tree adds in another order; the sum may differ in its last
                // bits, which this check does not depend on.)
                s += ts;
                c += tc;
                m = m.max(tm);
            }
            stats.extend(s.to_le_bytes());
            stats.extend(c.to_le_bytes());
            stats.extend(m.to_le_bytes());
        }
        let (sum, count, largest) = merge_stats(&stats);
        let kinds = candidates(data.dtype, mean_of(sum, count, data.dtype));
        let size = data.dtype.size();
        let mut found = [(0u64, 0u64); 3];
        for i in 0..n {
            let e = data.get(i);
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&data.bytes[i * size..(i + 1) * size]);
            let bits = u64::from_le_bytes(b);
            for (k, c) in kinds.iter().enumerate() {
                found[k].0 += (excess(c.value, e, &tol) > 0.0) as u64;
                found[k].1 += (bits != c.bits) as u64;
            }
        }
        let mut raw = Vec::new();
        for f in found {
            raw.extend(f.0.to_le_bytes());
        }
        for f in found {
            raw.extend(f.1.to_le_bytes());
        }
        first_passing(&merge_candidates(&raw)).map(|k| Vacuous {
            holds: kinds[k].name.clone(),
            largest,
        })
    }

    fn tol(rtol: f64, atol: f64) -> Tolerance {
        Tolerance {
            rtol,
            atol,
            allow_nan: false,
        }
    }

    #[test]
    fn the_device_rule_finds_what_the_host_rule_finds() {
        use crate::check::vacuous::vacuous;
        let ramp = HostData::from_f64(DType::F32, (0..3000).map(|i| (i as f64 - 1500.0) / 300.0));
        let ints = HostData::from_f64(DType::I32, (0..900).map(|i| (i % 3) as f64 - 1.0));
        let constant = HostData::from_f64(DType::F16, (0..700).map(|_| 2.0));
        let halves = HostData::from_f64(DType::Bf16, (0..513).map(|i| 1000.0 + i as f64));
        let cases = [
            (&ramp, tol(1e-5, 10.0)),
            (&ramp, tol(1.0, 0.0)),
            (&ramp, tol(1e-5, 1e-6)),
            (&ints, tol(0.0, 2.0)),
            (&ints, tol(0.0, 0.0)),
            (&constant, tol(1e-5, 1e-6)),
            (&constant, tol(0.0, 100.0)),
            (&halves, tol(0.0, 600.0)),
            (&halves, tol(1e-3, 0.0)),
        ];
        for (data, t) in cases {
            for blocks in [1, 3, blocks_for(data.len())] {
                assert_eq!(
                    simulate(data, t, blocks),
                    vacuous(data, t),
                    "{:?} {t:?} over {blocks} blocks",
                    data.dtype
                );
            }
        }
        // The rule itself: a candidate that is the expected output is not counted.
        assert_eq!(first_passing(&[(0, 0), (5, 9), (0, 9)]), Some(2));
        assert_eq!(first_passing(&[(1, 9), (5, 9), (2, 9)]), None);
    }

    #[test]
    fn partials_merge_in_block_order() {
        let mut raw = Vec::new();
        for (s, c, m) in [(1.5f64, 3u64, 2.0f64), (-0.5, 1, 7.0), (0.0, 0, 0.0)] {
            raw.extend(s.to_le_bytes());
            raw.extend(c.to_le_bytes());
            raw.extend(m.to_le_bytes());
        }
        assert_eq!(merge_stats(&raw), (1.0, 4, 7.0));
        let mut raw = Vec::new();
        for block in [[1u64, 0, 2, 5, 5, 5], [0, 0, 1, 3, 0, 1]] {
            for w in block {
                raw.extend(w.to_le_bytes());
            }
        }
        assert_eq!(merge_candidates(&raw), [(1, 8), (0, 5), (3, 6)]);
    }
}
