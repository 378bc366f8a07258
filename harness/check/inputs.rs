//! `generate`: the host data each buffer starts with for one set of seeded inputs.

use super::counter;
use super::failure::InputError;
use super::narrow::store;
use crate::dtype::HostData;
use crate::npy;
use crate::suite::{Init, Suite};
use rayon::prelude::*;

/// Elements per independently seeded chunk: values depend on (seed, buffer, chunk, index), never
/// on how many threads generate them.
const CHUNK: usize = 1 << 16;

/// Initial contents of every buffer for `case` and `seed`: `Some` for inputs and inouts,
/// `None` for outputs (which are poisoned instead). Each buffer has its own streams of random
/// numbers, so adding a buffer does not change the others' values.
pub fn generate(
    suite: &Suite,
    case: usize,
    seed: u64,
) -> Result<Vec<Option<HostData>>, InputError> {
    (0..suite.buffers.len())
        .map(|i| generate_buffer(suite, case, seed, i))
        .collect()
}

/// The stream of buffer `i`'s values for `seed`.
pub fn stream(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Buffer `i`'s initial contents for `case` and `seed` (`None` for an output), alone.
pub fn generate_buffer(
    suite: &Suite,
    case: usize,
    seed: u64,
    i: usize,
) -> Result<Option<HostData>, InputError> {
    let b = &suite.buffers[i];
    let Some(init) = suite.init(case, i) else {
        return Ok(None);
    };
    let len = suite.cases[case].lens[i];
    Ok(Some(fill(&init, &b.name, b.dtype, len, stream(seed, i))?))
}

/// `len` values of `init` for one buffer's random `stream` (`buffer`: its name, for errors).
fn fill(
    init: &Init,
    buffer: &str,
    dtype: crate::dtype::DType,
    len: usize,
    stream: u64,
) -> Result<HostData, InputError> {
    Ok(match init {
        // Every seeded form is counter-based (`check::counter`): element `i` is a function of
        // `(stream, i)` alone, and `check::device_fill` computes the same bits on the device.
        Init::Uniform { min, max } => {
            counted(dtype, len, |i| counter::uniform(stream, i, *min, *max))
        }
        Init::Normal { mean, std } => {
            counted(dtype, len, |i| mean + std * counter::normal(stream, i))
        }
        Init::Integers { min, max } => chunked(dtype, len, |range| {
            let values = range.map(|i| counter::integer(stream, i as u64, *min, *max));
            if dtype == crate::dtype::DType::I64 {
                HostData::from_i64(dtype, values)
            } else {
                store(dtype, values.map(|v| v as f64))
            }
        }),
        Init::Constant(c) => store(dtype, (0..len).map(|_| *c)),
        Init::Iota { start, step } => store(dtype, (0..len).map(|k| start + step * k as f64)),
        Init::Npy(path) => {
            let buffer = buffer.to_string();
            let a = npy::read(path).map_err(|source| InputError::Npy {
                buffer: buffer.clone(),
                source,
            })?;
            if a.data.len() != len || a.data.dtype != dtype {
                let path = path.clone();
                return Err(InputError::Changed { buffer, path });
            }
            a.data
        }
        Init::HeavyTailed {
            mean,
            std,
            outliers,
            scale,
        } => counted(dtype, len, |i| {
            let v = mean + std * counter::normal(stream, i);
            let outlier = counter::unit(counter::substream(stream, 3), i) < *outliers;
            if outlier {
                v * scale
            } else {
                v
            }
        }),
        Init::Special { nan } => {
            let table = specials(dtype, *nan);
            counted(dtype, len, |i| {
                table[(counter::bits(stream, i) % table.len() as u64) as usize]
            })
        }
        Init::Equal { mean, std } => {
            let v = mean + std * counter::normal(stream, 0);
            store(dtype, (0..len).map(|_| v))
        }
        Init::Sorted(inner) => {
            let data = fill(inner, buffer, dtype, len, stream)?;
            let mut values: Vec<f64> = (0..data.len()).map(|i| data.get(i)).collect();
            values.sort_by(f64::total_cmp);
            store(dtype, values)
        }
    })
}

/// The special values of a float type: ±0, the smallest and largest denormals, ±the largest
/// finite value, ±1, and with `nan` also NaN and ±∞.
pub fn specials(dtype: crate::dtype::DType, nan: bool) -> Vec<f64> {
    use crate::dtype::DType;
    let (smallest, largest_denormal) = match dtype {
        DType::F64 => (f64::from_bits(1), f64::MIN_POSITIVE - f64::from_bits(1)),
        DType::F16 => (2f64.powi(-24), 2f64.powi(-14) - 2f64.powi(-24)),
        // f32 and bf16 share f32's exponent range; bf16 rounds these to its nearest.
        _ => (2f64.powi(-149), 2f64.powi(-126) - 2f64.powi(-149)),
    };
    let (_, large) = dtype.range();
    let mut table = vec![
        0.0,
        -0.0,
        smallest,
        -smallest,
        largest_denormal,
        large,
        -large,
        1.0,
        -1.0,
    ];
    if nan {
        table.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
    }
    table
}

/// `len` values of the counter-based `value(i)`, computed in parallel.
fn counted(dtype: crate::dtype::DType, len: usize, value: impl Fn(u64) -> f64 + Sync) -> HostData {
    chunked(dtype, len, |range| {
        store(dtype, range.map(|i| value(i as u64)))
    })
}

/// `len` values made `CHUNK` at a time in parallel by `make` (given each chunk's indices),
/// joined in order.
fn chunked(
    dtype: crate::dtype::DType,
    len: usize,
    make: impl Fn(std::ops::Range<usize>) -> HostData + Sync,
) -> HostData {
    let chunks: Vec<Vec<u8>> = (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| make(c * CHUNK..(c * CHUNK + CHUNK).min(len)).bytes)
        .collect();
    let bytes = chunks.concat();
    HostData { dtype, bytes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::load_text;
    use std::path::Path;

    fn suite() -> Suite {
        let text = std::fs::read_to_string("suites/saxpy.toml").unwrap();
        load_text(Path::new("suites/saxpy.toml"), &text).unwrap()
    }

    #[test]
    fn same_seed_same_inputs_other_seed_other_inputs() {
        let s = suite();
        let case = s.cases.iter().position(|c| c.label == "n=1000003").unwrap();
        let a = generate(&s, case, 7).unwrap();
        let b = generate(&s, case, 7).unwrap();
        let c = generate(&s, case, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a[0], c[0]);
        let x = a[0].as_ref().unwrap();
        assert_eq!(x.len(), 1_000_003);
        // Uniform in [-1, 1): every value inside, both halves used, mean near 0.
        let values: Vec<f64> = (0..x.len()).map(|i| x.get(i)).collect();
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        // The buffers draw from different streams.
        let y = a[1].as_ref().unwrap();
        assert_ne!(x.bytes[..64], y.bytes[..64]);
    }
}

#[cfg(test)]
mod forms {
    use super::*;
    use crate::suite::load_text;
    use std::path::Path;

    #[test]
    fn the_init_forms_that_find_partial_work() {
        let path = Path::new("tests/fixtures/inits/inits.toml");
        let s = load_text(path, &std::fs::read_to_string(path).unwrap()).unwrap();
        let sets = generate(&s, 0, 11).unwrap();
        let get = |b: usize| -> Vec<f64> {
            let d = sets[b].as_ref().unwrap();
            (0..d.len()).map(|i| d.get(i)).collect()
        };
        let n = 100_003;
        // Heavy-tailed: about 1% of the values scaled by 1e4.
        let heavy = get(0);
        let outliers = heavy.iter().filter(|v| v.abs() > 100.0).count();
        assert!((700..1300).contains(&outliers), "{outliers}");
        // Special values: every entry of the table shows up, -0 and denormals included.
        let special = get(1);
        assert!(special.iter().any(|v| *v == 0.0 && v.is_sign_negative()));
        assert!(special
            .iter()
            .any(|v| *v > 0.0 && *v < f32::MIN_POSITIVE as f64));
        assert!(special.iter().any(|v| v.is_nan()));
        assert!(special.contains(&(f32::MAX as f64)));
        // All-equal, but another seed gives another value.
        let equal = get(2);
        assert!(equal.iter().all(|v| *v == equal[0]) && equal.len() == n);
        let other = generate(&s, 0, 12).unwrap();
        assert_ne!(other[2].as_ref().unwrap().get(0), equal[0]);
        // Sorted ascending, still uniform in [-1, 1).
        let sorted = get(3);
        assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        assert!(sorted[0] < -0.99 && sorted[n - 1] > 0.99);
        // Counter-based: the same seed gives the same values.
        assert_eq!(generate(&s, 0, 11).unwrap(), sets);
    }

    #[test]
    fn special_values_per_type() {
        use crate::dtype::DType;
        let half = specials(DType::F16, false);
        assert!(half.contains(&65504.0) && half.contains(&2f64.powi(-24)));
        assert!(!half.iter().any(|v| v.is_nan()));
        assert_eq!(specials(DType::F64, true).len(), 12);
    }
}
