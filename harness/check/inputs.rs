//! `generate`: the host data each buffer starts with for one set of seeded inputs.

use crate::dtype::HostData;
use crate::npy;
use crate::suite::{Init, Suite};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// Initial contents of every buffer for `case` and `seed`: `Some` for inputs and inouts,
/// `None` for outputs (which are poisoned instead). Each buffer has its own stream of random
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
            let mut rng = ChaCha8Rng::seed_from_u64(
                seed ^ ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            );
            let data = match init {
                Init::Uniform { min, max } => {
                    HostData::from_f64(b.dtype, (0..len).map(|_| rng.random_range(*min..*max)))
                }
                Init::Normal { mean, std } => {
                    let d = Normal::new(*mean, *std)
                        .map_err(|e| format!("buffer `{}`: {e}", b.name))?;
                    HostData::from_f64(b.dtype, (0..len).map(|_| d.sample(&mut rng)))
                }
                Init::Integers { min, max } => {
                    HostData::from_i64(b.dtype, (0..len).map(|_| rng.random_range(*min..=*max)))
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
