//! `counter`: the counter-based generator behind every seeded init form (uniform, normal, int,
//! heavy-tailed, special values, all-equal): element `i` of a buffer is a pure function of
//! `(stream, i)`, so any element can be regenerated alone — on the host for a failure message
//! or an `.npy` dump, or on the device by `DEVICE_SOURCE` (`check::device_fill`), which is the
//! same arithmetic and gives the same bits.
//!
//! The generator (documented in `docs/timing-integrity.md`, so seeds stay reproducible across
//! machines and versions): `bits(stream, i) = splitmix64(stream + (i + 1) * 0x9E3779B97F4A7C15)`,
//! where `splitmix64(z)` is Steele, Lea and Flood's finalizer
//! (`z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31`).
//! `unit` is the top 53 bits over 2^53, in `[0, 1)`. Integer arithmetic, then correctly rounded
//! IEEE operations only (`ln` and `cos_turns` are the project's own, not libm's or CUDA's):
//! the same bits on every machine and on the device.

/// The golden-ratio increment of SplitMix64.
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function.
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64 random bits for element `i` of `stream`.
pub fn bits(stream: u64, i: u64) -> u64 {
    splitmix64(stream.wrapping_add(i.wrapping_add(1).wrapping_mul(GAMMA)))
}

/// A uniform double in `[0, 1)` for element `i` of `stream`.
pub fn unit(stream: u64, i: u64) -> f64 {
    (bits(stream, i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The sub-stream `k` of `stream`, for a second independent draw per element.
pub fn substream(stream: u64, k: u64) -> u64 {
    splitmix64(stream ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// `1/(2k)!` with alternating signs, `k = 0..=12`: the Taylor coefficients of `cos`.
const COS: [f64; 13] = [
    1.0,
    -0.5,
    0.041666666666666664,
    -0.001388888888888889,
    2.48015873015873e-05,
    -2.755731922398589e-07,
    2.08767569878681e-09,
    -1.1470745597729725e-11,
    4.779477332387385e-14,
    -1.5619206968586225e-16,
    4.110317623312165e-19,
    -8.896791392450574e-22,
    1.6117375710961184e-24,
];

/// The natural log of a positive normal `x`, from IEEE `+ - * /` only (so that `kg_ln` on the
/// device gives the same bits): `x = m 2^e` with `m` in `[√½, √2)`, then
/// `ln m = 2 atanh((m - 1)/(m + 1))` by its series to the 23rd power (error under 1e-16).
pub fn ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 0.0;
    for k in (0..12).rev() {
        p = p * s2 + 1.0 / (2 * k + 1) as f64;
    }
    e as f64 * std::f64::consts::LN_2 + 2.0 * s * p
}

/// `cos(2π u)` for `u` in `[0, 1)`, from IEEE `+ - * /` only (the device's `kg_cos_turns`):
/// folded exactly onto `[0, ¼]` turn, then the Taylor series to the 24th power.
pub fn cos_turns(u: f64) -> f64 {
    let mut v = if u >= 0.5 { 1.0 - u } else { u };
    let mut sign = 1.0;
    if v > 0.25 {
        v = 0.5 - v;
        sign = -1.0;
    }
    let x = std::f64::consts::TAU * v;
    let x2 = x * x;
    let mut p = 0.0;
    for c in COS.iter().rev() {
        p = p * x2 + c;
    }
    sign * p
}

/// A standard normal value for element `i` of `stream` (Box–Muller on two sub-streams).
pub fn normal(stream: u64, i: u64) -> f64 {
    let u1 = 1.0 - unit(substream(stream, 1), i); // (0, 1]: the log is finite
    let u2 = unit(substream(stream, 2), i);
    (-2.0 * ln(u1)).sqrt() * cos_turns(u2)
}

/// `min + (max - min) u`: uniform in `[min, max]` (`max` only through rounding).
pub fn uniform(stream: u64, i: u64, min: f64, max: f64) -> f64 {
    min + (max - min) * unit(stream, i)
}

/// An integer in `[min, max]`: `min + ⌊bits · span / 2^64⌋`, `span = max - min + 1` (all 2^64
/// values when that wraps to 0).
pub fn integer(stream: u64, i: u64, min: i64, max: i64) -> i64 {
    let span = (max.wrapping_sub(min) as u64).wrapping_add(1);
    let b = bits(stream, i);
    let offset = if span == 0 {
        b
    } else {
        ((b as u128 * span as u128) >> 64) as u64
    };
    min.wrapping_add(offset as i64)
}

/// The same generator in CUDA C++ (compile with `--fmad=false`: the host never fuses a
/// multiply and an add, so neither may the device): `kg_bits`, `kg_unit`, `kg_substream`,
/// `kg_ln`, `kg_cos_turns`, `kg_normal`, `kg_integer` are `bits`, `unit`, `substream`, `ln`,
/// `cos_turns`, `normal`, `integer` line by line, and give the same bits.
pub const DEVICE_SOURCE: &str = include_str!("counter.cu");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_published_sequence() {
        // The reference implementation seeded with 0 (state += GAMMA, then the finalizer)
        // yields these first outputs; `bits(0, i)` is its (i+1)-th output.
        assert_eq!(bits(0, 0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(bits(0, 1), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(bits(0, 2), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn units_are_in_range_and_spread() {
        let values: Vec<f64> = (0..100_000).map(|i| unit(42, i)).collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert_ne!(unit(42, 7), unit(43, 7), "streams differ");
    }

    #[test]
    fn normals_have_unit_variance() {
        let v: Vec<f64> = (0..200_000).map(|i| normal(5, i)).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(
            mean.abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
        assert!(v.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn ln_and_cos_from_basic_operations_are_accurate() {
        for k in 1..=2000u64 {
            let x = k as f64 / 2000.0;
            assert!(
                (ln(x) - x.ln()).abs() <= 4e-16 * x.ln().abs().max(1.0),
                "ln {x}"
            );
            let u = (k - 1) as f64 / 2000.0;
            let want = (std::f64::consts::TAU * u).cos();
            assert!((cos_turns(u) - want).abs() < 1e-15, "cos {u}");
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(cos_turns(0.0), 1.0);
        assert!(ln(2f64.powi(-53)).is_finite(), "the smallest 1 - unit");
    }

    #[test]
    fn integers_cover_their_range_uniformly() {
        let mut counts = [0usize; 7];
        for i in 0..70_000 {
            let v = integer(9, i, -3, 3);
            counts[(v + 3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|c| (9000..11000).contains(c)),
            "{counts:?}"
        );
        assert_eq!(integer(1, 0, 5, 5), 5);
        let all = integer(1, 0, i64::MIN, i64::MAX);
        assert_eq!(all, i64::MIN.wrapping_add(bits(1, 0) as i64), "span 2^64");
    }
}
