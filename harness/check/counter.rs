//! `counter`: the counter-based generator behind the init forms that find partial work
//! (heavy-tailed, special values, all-equal): element `i` of a buffer is a pure function of
//! `(stream, i)`, so any element can be regenerated alone — on the host for a failure message
//! or an `.npy` dump, or on the device by `DEVICE_SOURCE`, which is the same arithmetic.
//!
//! The generator (documented in `docs/timing-integrity.md`, so seeds stay reproducible across
//! machines and versions): `bits(stream, i) = splitmix64(stream + (i + 1) * 0x9E3779B97F4A7C15)`,
//! where `splitmix64(z)` is Steele, Lea and Flood's finalizer
//! (`z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31`).
//! `unit` is the top 53 bits over 2^53, in `[0, 1)`. Only integer arithmetic: the same bits on
//! every machine.

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

/// A standard normal value for element `i` of `stream` (Box–Muller on two sub-streams).
pub fn normal(stream: u64, i: u64) -> f64 {
    let u1 = 1.0 - unit(substream(stream, 1), i); // (0, 1]: the log is finite
    let u2 = unit(substream(stream, 2), i);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The same generator in CUDA C++, for generating inputs on the device: `kg_bits`,
/// `kg_unit`, `kg_substream`, `kg_normal` equal `bits`, `unit`, `substream`, `normal` (the
/// normal up to the last bits of the device's `log`/`cos`), and `kernelgate_fill_unit` fills
/// `out[i] = min + (max - min) * unit(stream, i)` as floats.
pub const DEVICE_SOURCE: &str = r#"
__device__ __forceinline__ unsigned long long kg_splitmix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
__device__ __forceinline__ unsigned long long kg_bits(unsigned long long stream, unsigned long long i) {
    return kg_splitmix64(stream + (i + 1ull) * 0x9E3779B97F4A7C15ull);
}
__device__ __forceinline__ double kg_unit(unsigned long long stream, unsigned long long i) {
    return (double)(kg_bits(stream, i) >> 11) * (1.0 / 9007199254740992.0);
}
__device__ __forceinline__ unsigned long long kg_substream(unsigned long long stream, unsigned long long k) {
    return kg_splitmix64(stream ^ (k * 0xD1B54A32D192ED03ull));
}
__device__ __forceinline__ double kg_normal(unsigned long long stream, unsigned long long i) {
    double u1 = 1.0 - kg_unit(kg_substream(stream, 1ull), i);
    double u2 = kg_unit(kg_substream(stream, 2ull), i);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
extern "C" __global__ void kernelgate_fill_unit(float* out, unsigned long long n,
                                                unsigned long long stream, double lo, double hi) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        out[i] = (float)(lo + (hi - lo) * kg_unit(stream, i));
    }
}
"#;

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
    fn the_device_generator_compiles() {
        if let Some(why) = crate::device::nvrtc_missing() {
            eprintln!("skipped: {why}");
            return;
        }
        let entries = ["kernelgate_fill_unit".to_string()];
        let req = crate::device::compile::CompileRequest {
            path: std::path::Path::new("kernelgate_counter.cu"),
            text: DEVICE_SOURCE,
            include_dirs: &[],
            options: &[],
            entries: &entries,
            arch: "sm_90",
        };
        let c = crate::device::compile::compile(&req, None).expect("the generator compiles");
        assert!(!c.cubin.is_empty());
    }
}
