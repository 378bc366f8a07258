//! `compare`: element-by-element comparison of an output with its expected values.
//!
//! An element passes when `|a - e| <= atol` or `|a - e| <= rtol * max(|a|, |e|)` (the rule of
//! the `approx` crate's `relative_eq!`, symmetric in its arguments). NaN passes only against
//! NaN, and only where the suite says `allow_nan`; infinities must match exactly.

use crate::dtype::HostData;
use crate::suite::Tolerance;

/// Equal bit for bit: no tolerance, no NaN.
pub const EXACT: Tolerance = Tolerance {
    rtol: 0.0,
    atol: 0.0,
    allow_nan: false,
};

/// How an output differs from what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{count} of {total} elements differ; worst at index {worst}: got {actual}, expected {expected} (rtol {:e}, atol {:e}{})",
    .tolerance.rtol,
    .tolerance.atol,
    if .tolerance.allow_nan { ", NaN allowed" } else { "" }
)]
pub struct Mismatch {
    /// Elements outside the tolerance.
    pub count: usize,
    /// Elements compared.
    pub total: usize,
    /// The element that is furthest outside it.
    pub worst: usize,
    /// Its value.
    pub actual: String,
    /// What was expected there.
    pub expected: String,
    /// The tolerance applied.
    pub tolerance: Tolerance,
}

/// How far outside the tolerance `a` is from `e`: 0 when within it, infinite for NaN/∞
/// disagreements.
///
/// Written out step by step (the `approx` crate's `relative_eq!`, then the ratio) because
/// `check::kernels`' `kg_excess` is this function line by line in CUDA: IEEE double
/// operations only, no fused multiply-add (that module compiles with `--fmad=false`), so the
/// device and the host agree on every element (tested against `approx` here).
pub(crate) fn excess(a: f64, e: f64, tol: &Tolerance) -> f64 {
    if a.is_nan() || e.is_nan() {
        return if a.is_nan() && e.is_nan() && tol.allow_nan {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if a.is_infinite() || e.is_infinite() {
        return if a == e { 0.0 } else { f64::INFINITY };
    }
    if a == e {
        return 0.0;
    }
    let diff = (a - e).abs();
    if diff <= tol.atol {
        return 0.0;
    }
    let largest = if e.abs() > a.abs() { e.abs() } else { a.abs() };
    if diff <= largest * tol.rtol {
        return 0.0;
    }
    let allowed = if tol.atol > tol.rtol * largest {
        tol.atol
    } else {
        tol.rtol * largest
    };
    if allowed > 0.0 {
        diff / allowed
    } else {
        // Exact comparison: rank by the raw difference, above any in-tolerance ratio.
        1.0 + diff
    }
}

/// Compares `actual` with `expected` (same type and length), in parallel chunks.
pub fn compare(actual: &HostData, expected: &HostData, tol: Tolerance) -> Result<(), Mismatch> {
    use rayon::prelude::*;
    assert_eq!(actual.dtype, expected.dtype, "compare needs one type");
    assert_eq!(actual.len(), expected.len(), "compare needs one length");
    const CHUNK: usize = 1 << 16;
    // (count, worst index, its excess) per chunk; the earliest index wins ties.
    let (count, worst, _) = (0..actual.len().div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut acc = (0usize, 0usize, 0.0f64);
            for i in c * CHUNK..((c + 1) * CHUNK).min(actual.len()) {
                let x = excess(actual.get(i), expected.get(i), &tol);
                if x > 0.0 {
                    acc.0 += 1;
                    if acc.0 == 1 || x > acc.2 {
                        (acc.1, acc.2) = (i, x);
                    }
                }
            }
            acc
        })
        .reduce(
            || (0, usize::MAX, 0.0),
            |a, b| {
                let pick = match (a.0, b.0) {
                    (0, _) => (b.1, b.2),
                    (_, 0) => (a.1, a.2),
                    _ if b.2 > a.2 || (b.2 == a.2 && b.1 < a.1) => (b.1, b.2),
                    _ => (a.1, a.2),
                };
                (a.0 + b.0, pick.0, pick.1)
            },
        );
    if count == 0 {
        return Ok(());
    }
    Err(Mismatch {
        count,
        total: actual.len(),
        worst,
        actual: actual.show(worst),
        expected: expected.show(worst),
        tolerance: tol,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    const TOL: Tolerance = Tolerance {
        rtol: 1e-3,
        atol: 1e-6,
        allow_nan: false,
    };

    fn f32s(v: &[f64]) -> HostData {
        HostData::from_f64(DType::F32, v.iter().copied())
    }

    #[test]
    fn within_tolerance_passes() {
        assert_eq!(
            compare(
                &f32s(&[1.0, 1000.0, 0.0]),
                &f32s(&[1.0005, 1000.9, 1e-7]),
                TOL
            ),
            Ok(())
        );
    }

    #[test]
    fn reports_count_worst_and_values() {
        let m = compare(
            &f32s(&[1.0, 2.0, 3.0, 4.0]),
            &f32s(&[1.0, 2.1, 3.0, 5.0]),
            TOL,
        )
        .unwrap_err();
        assert_eq!((m.count, m.total, m.worst), (2, 4, 3));
        assert_eq!((m.actual.as_str(), m.expected.as_str()), ("4e0", "5e0"));
        let text = m.to_string();
        assert!(
            text.contains("2 of 4 elements differ; worst at index 3"),
            "{text}"
        );
        assert!(text.contains("rtol 1e-3"), "{text}");
    }

    #[test]
    fn nan_never_passes_unless_allowed() {
        let nan = f32s(&[f64::NAN]);
        assert!(
            compare(&nan, &nan, TOL).is_err(),
            "NaN == NaN is not a pass by default"
        );
        assert!(compare(&nan, &f32s(&[1.0]), TOL).is_err());
        assert!(compare(&f32s(&[1.0]), &nan, TOL).is_err());
        let allow = Tolerance {
            allow_nan: true,
            ..TOL
        };
        assert_eq!(compare(&nan, &nan, allow), Ok(()));
        assert!(compare(&nan, &f32s(&[1.0]), allow).is_err());
        // The poison pattern (all bytes 0xFF) is NaN and fails against any real value.
        assert!(compare(&HostData::poison(DType::F32, 1), &f32s(&[0.0]), TOL).is_err());
    }

    #[test]
    fn infinities_must_match() {
        let inf = f32s(&[f64::INFINITY]);
        assert_eq!(compare(&inf, &inf, TOL), Ok(()));
        assert!(compare(&inf, &f32s(&[f64::NEG_INFINITY]), TOL).is_err());
        assert!(compare(&inf, &f32s(&[3.4e38]), TOL).is_err());
    }

    #[test]
    fn large_arrays_find_the_worst_across_chunks() {
        let n = 300_000;
        let expected = f32s(&vec![1.0; n]);
        let mut values = vec![1.0; n];
        values[5] = 1.01;
        values[200_001] = 1.5;
        values[250_000] = 1.5;
        let m = compare(&f32s(&values), &expected, TOL).unwrap_err();
        assert_eq!(
            (m.count, m.worst),
            (3, 200_001),
            "the first of two equal worsts"
        );
    }

    #[test]
    fn the_written_out_rule_is_approx_relative_eq() {
        let values = [
            0.0,
            -0.0,
            1e-300,
            1e-7,
            1e-6,
            0.999,
            1.0,
            1.0005,
            1.001,
            2.0,
            -1.0,
            1e3,
            3.4e38,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        for tol in [
            TOL,
            Tolerance {
                rtol: 0.0,
                atol: 0.0,
                allow_nan: false,
            },
            Tolerance {
                rtol: 1e-5,
                atol: 0.0,
                allow_nan: false,
            },
        ] {
            for a in values {
                for e in values {
                    let within =
                        approx::relative_eq!(a, e, epsilon = tol.atol, max_relative = tol.rtol);
                    assert_eq!(excess(a, e, &tol) == 0.0, within, "{a} {e} {tol:?}");
                    let allowed = tol.atol.max(tol.rtol * a.abs().max(e.abs()));
                    if !within && allowed > 0.0 {
                        assert_eq!(excess(a, e, &tol), (a - e).abs() / allowed);
                    }
                }
            }
        }
    }

    #[test]
    fn integers_compare_exactly() {
        let exact = Tolerance {
            rtol: 0.0,
            atol: 0.0,
            allow_nan: false,
        };
        let a = HostData::from_f64(DType::I32, [1.0, 2.0, 7.0]);
        let b = HostData::from_f64(DType::I32, [1.0, 3.0, 9.0]);
        let m = compare(&a, &b, exact).unwrap_err();
        assert_eq!(
            (m.count, m.worst, m.actual.as_str(), m.expected.as_str()),
            (2, 2, "7", "9")
        );
    }
}
