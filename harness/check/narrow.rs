//! `narrow`: generated values into `f16` and `bf16`, rounded to nearest-even from the double
//! directly, with the same steps on the host and on the device (`kg_narrow`).
//!
//! Why not the `half` crate: its `from_f64` rounds differently by machine — through `f32` on
//! an x86 CPU with F16C (two roundings), directly on an ARM one with FP16, after truncating
//! the low 32 bits otherwise (half 2.7) — so a seed's `f16` inputs could differ between two
//! hosts near rounding ties. These are exact: scaling by a power of two, then
//! `round_ties_even` (the device's `rint`).

use crate::dtype::{DType, HostData};

/// The bits of `v` rounded to a binary format with `mbits` mantissa bits and exponent bias
/// `bias` (f16: 10, 15; bf16: 7, 127), nearest-even, overflowing to ±∞, NaN to a quiet NaN.
pub fn narrow(v: f64, mbits: i64, bias: i64) -> u16 {
    let sign = ((v.to_bits() >> 48) & 0x8000) as u16;
    let a = v.abs();
    let exp_mask = ((2 * bias + 1) << mbits) as u16;
    if a.is_nan() {
        return sign | exp_mask | (1 << (mbits - 1));
    }
    // At or above the midpoint between the largest finite value and 2^(bias + 1): ∞ (the tie
    // goes to the even neighbour, which is ∞: the largest finite mantissa is all ones).
    if a >= (2.0 - pow2(-(mbits + 1))) * pow2(bias) {
        return sign | exp_mask;
    }
    let emin = 1 - bias;
    if a < pow2(emin) {
        // Subnormal (or zero): multiples of 2^(emin - mbits); rounding up to 2^emin gives the
        // smallest normal's bits by the same addition.
        let m = (a * pow2(mbits - emin)).round_ties_even();
        return sign | m as u16;
    }
    let e = ((a.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let m = (a * pow2(mbits - e)).round_ties_even(); // in [2^mbits, 2^(mbits+1)]
                                                     // A mantissa rounded up to 2^(mbits+1) carries into the exponent through the addition.
    sign | ((((e + bias) << mbits) + (m as i64 - (1 << mbits))) as u16)
}

/// 2^k for a normal double, from its bits.
fn pow2(k: i64) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// `values` as `dtype`, through `narrow` for `f16`/`bf16` and `HostData::from_f64` otherwise.
pub fn store(dtype: DType, values: impl IntoIterator<Item = f64>) -> HostData {
    let (mbits, bias) = match dtype {
        DType::F16 => (10, 15),
        DType::Bf16 => (7, 127),
        _ => return HostData::from_f64(dtype, values),
    };
    let bytes = values
        .into_iter()
        .flat_map(|v| narrow(v, mbits, bias).to_le_bytes());
    HostData {
        dtype,
        bytes: bytes.collect(),
    }
}

/// `narrow` in CUDA C++, line by line.
pub const DEVICE_SOURCE: &str = include_str!("narrow.cu");

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    /// Every finite value maps to itself, every midpoint to its even neighbour, and a value a
    /// hair off a midpoint to the nearer neighbour.
    fn exhaustive(mbits: i64, bias: i64, value: impl Fn(u16) -> f64) {
        let infinity = ((2 * bias + 1) << mbits) as u16;
        for h in 0..infinity - 1 {
            let v = value(h);
            assert_eq!(narrow(v, mbits, bias), h, "{v}");
            assert_eq!(narrow(-v, mbits, bias), h | 0x8000, "-{v}");
            let next = value(h + 1);
            let mid = (v + next) / 2.0;
            let even = if h % 2 == 0 { h } else { h + 1 };
            assert_eq!(narrow(mid, mbits, bias), even, "midpoint of {v}");
            let ulp = (next - v) * 1e-6;
            assert_eq!(narrow(mid - ulp, mbits, bias), h);
            assert_eq!(narrow(mid + ulp, mbits, bias), h + 1);
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even_everywhere() {
        exhaustive(10, 15, |h| f16::from_bits(h).to_f64());
        assert_eq!(narrow(65519.0, 10, 15), 0x7BFF, "below the midpoint: 65504");
        assert_eq!(narrow(65520.0, 10, 15), 0x7C00, "the midpoint: ∞");
        assert_eq!(narrow(f64::NEG_INFINITY, 10, 15), 0xFC00);
        assert!(f16::from_bits(narrow(f64::NAN, 10, 15)).is_nan());
        assert_eq!(narrow(1e-30, 10, 15), 0, "underflow to zero");
    }

    #[test]
    fn bf16_rounds_to_nearest_even_everywhere() {
        exhaustive(7, 127, |h| bf16::from_bits(h).to_f64());
        assert_eq!(narrow(f64::MAX, 7, 127), 0x7F80);
        assert!(bf16::from_bits(narrow(f64::NAN, 7, 127)).is_nan());
    }

    #[test]
    fn other_types_are_stored_as_before() {
        let v = [1.5, -2.25];
        assert_eq!(store(DType::F32, v), HostData::from_f64(DType::F32, v));
        assert_eq!(store(DType::F16, v), HostData::from_f64(DType::F16, v));
    }
}
