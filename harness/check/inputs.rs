//! `generate`: the host data each buffer starts with for one set of seeded inputs.

use crate::dtype::HostData;
use crate::npy;
use crate::suite::{Init, Suite};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

/// Elements per independently seeded chunk: values depend on (seed, buffer, chunk, index), never
/// on how many threads generate them.
const CHUNK: usize = 1 << 16;

/// Initial contents of every buffer for `case` and `seed`: `Some` for inputs and inouts,
/// `None` for outputs (which are poisoned instead). Each buffer has its own streams of random
/// numbers, so adding a buffer does not change the others' values.
pub fn generate(suite: &Suite, case: usize, seed: u64) -> Result<Vec<Option<HostData>>, String> {
    let lens = &suite.cases[case].lens;
    suite
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let Some(init) = &b.init else { return Ok(None) };
            let len = lens[i];
            let stream = seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let data = match init {
                Init::Uniform { min, max } => {
                    let (min, max) = (*min, *max);
                    random(b.dtype, len, stream, move |rng| rng.random_range(min..max))
                }
                Init::Normal { mean, std } => {
                    let d = Normal::new(*mean, *std)
                        .map_err(|e| format!("buffer `{}`: {e}", b.name))?;
                    random(b.dtype, len, stream, move |rng| d.sample(rng))
                }
                Init::Integers { min, max } => {
                    let (min, max) = (*min, *max);
                    let chunks: Vec<HostData> = (0..len.div_ceil(CHUNK))
                        .into_par_iter()
                        .map(|c| {
                            let mut rng = chunk_rng(stream, c);
                            let n = CHUNK.min(len - c * CHUNK);
                            HostData::from_i64(b.dtype, (0..n).map(|_| rng.random_range(min..=max)))
                        })
                        .collect();
                    concat(b.dtype, chunks)
                }
                Init::Constant(c) => HostData::from_f64(b.dtype, (0..len).map(|_| *c)),
                Init::Iota { start, step } => {
                    HostData::from_f64(b.dtype, (0..len).map(|k| start + step * k as f64))
                }
                Init::Npy(path) => {
                    let a = npy::read(path).map_err(|e| format!("buffer `{}`: {e}", b.name))?;
                    if a.data.len() != len || a.data.dtype != b.dtype {
                        return Err(format!(
                            "buffer `{}`: `{}` changed since the suite was loaded",
                            b.name,
                            path.display()
                        ));
                    }
                    a.data
                }
            };
            Ok(Some(data))
        })
        .collect()
}

fn chunk_rng(stream: u64, chunk: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(stream);
    rng.set_stream(chunk as u64);
    rng
}

/// `len` values of `sample`, drawn chunk by chunk in parallel.
fn random(
    dtype: crate::dtype::DType,
    len: usize,
    stream: u64,
    sample: impl Fn(&mut ChaCha8Rng) -> f64 + Sync,
) -> HostData {
    let chunks: Vec<HostData> = (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut rng = chunk_rng(stream, c);
            let n = CHUNK.min(len - c * CHUNK);
            HostData::from_f64(dtype, (0..n).map(|_| sample(&mut rng)))
        })
        .collect();
    concat(dtype, chunks)
}

fn concat(dtype: crate::dtype::DType, chunks: Vec<HostData>) -> HostData {
    let mut bytes = Vec::with_capacity(chunks.iter().map(|c| c.bytes.len()).sum());
    for c in chunks {
        bytes.extend_from_slice(&c.bytes);
    }
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
