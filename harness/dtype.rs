//! `DType`: the element types a buffer may hold, and `HostData`, a typed byte array on the host.

use half::{bf16, f16};
use serde::{Deserialize, Serialize};
use std::fmt;

/// An element type of a buffer. Its discriminant is the code `kg_value` reads it by
/// (`check::kernels::code`) and its row in [`ROWS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit float.
    F32 = 0,
    /// 64-bit float.
    F64 = 1,
    /// IEEE half precision.
    F16 = 2,
    /// bfloat16.
    Bf16 = 3,
    /// 32-bit signed integer.
    I32 = 4,
    /// 32-bit unsigned integer.
    U32 = 5,
    /// 64-bit signed integer.
    I64 = 6,
    /// 8-bit unsigned integer.
    U8 = 7,
}

/// What a type is, in one row of [`ROWS`].
struct Row {
    /// The name used in suite files.
    name: &'static str,
    /// Bytes per element.
    size: usize,
    /// The `.npy` type code (little-endian), where NumPy has one.
    npy: Option<&'static str>,
    /// Default (rtol, atol) when the suite gives none: a few units in the last place for
    /// floats, exact for integers.
    tolerance: (f64, f64),
    /// The C spelling, for messages that say what to write.
    c: &'static str,
}

/// One row per type, in the order of the discriminants.
#[rustfmt::skip]
const ROWS: [Row; 8] = [
    Row { name: "f32",  size: 4, npy: Some("<f4"), tolerance: (1e-5, 1e-6),   c: "float" },
    Row { name: "f64",  size: 8, npy: Some("<f8"), tolerance: (1e-12, 1e-12), c: "double" },
    Row { name: "f16",  size: 2, npy: Some("<f2"), tolerance: (2e-3, 1e-3),   c: "__half" },
    Row { name: "bf16", size: 2, npy: None,        tolerance: (1.6e-2, 1e-2), c: "__nv_bfloat16" },
    Row { name: "i32",  size: 4, npy: Some("<i4"), tolerance: (0.0, 0.0),     c: "int" },
    Row { name: "u32",  size: 4, npy: Some("<u4"), tolerance: (0.0, 0.0),     c: "unsigned int" },
    Row { name: "i64",  size: 8, npy: Some("<i8"), tolerance: (0.0, 0.0),     c: "long long" },
    Row { name: "u8",   size: 1, npy: Some("|u1"), tolerance: (0.0, 0.0),     c: "unsigned char" },
];

/// The kind of arithmetic a suite's `flops` counts (`[bench] flops_type`): which of the device's
/// peaks bounds it in the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlopKind {
    /// FP32 on the CUDA cores (the default).
    Fp32,
    /// FP64 on the CUDA cores.
    Fp64,
    /// Half precision on the CUDA cores (`__half2` arithmetic).
    Fp16,
    /// bfloat16 on the CUDA cores (`__nv_bfloat162`).
    Bf16,
    /// TF32 tensor cores (FP32 inputs rounded, FP32 accumulation).
    Tf32Tensor,
    /// FP16 tensor cores with FP32 accumulation.
    Fp16Tensor,
    /// BF16 tensor cores with FP32 accumulation.
    Bf16Tensor,
    /// FP8 tensor cores (sm_89 and later).
    Fp8Tensor,
    /// INT8 tensor cores (operations, not floating point).
    Int8Tensor,
    /// FP64 tensor cores (DMMA).
    Fp64Tensor,
}

impl FlopKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [FlopKind; 10] = [
        FlopKind::Fp32,
        FlopKind::Fp64,
        FlopKind::Fp16,
        FlopKind::Bf16,
        FlopKind::Tf32Tensor,
        FlopKind::Fp16Tensor,
        FlopKind::Bf16Tensor,
        FlopKind::Fp8Tensor,
        FlopKind::Int8Tensor,
        FlopKind::Fp64Tensor,
    ];

    /// The name a suite writes: `fp32`, `bf16-tensor`, ...
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The kind named `s`.
    pub fn parse(s: &str) -> Option<FlopKind> {
        FlopKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Every type, in the order the docs list them.
pub const ALL: [DType; 8] = [
    DType::F32,
    DType::F64,
    DType::F16,
    DType::Bf16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U8,
];

impl DType {
    /// Parses a type name as written in suite files (`f32`, `bf16`, ...).
    pub fn parse(name: &str) -> Option<DType> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// Its row of [`ROWS`].
    fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// The name used in suite files.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        self.row().size
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::Bf16)
    }

    /// The `.npy` type code (little-endian), where NumPy has one.
    pub fn npy_descr(self) -> Option<&'static str> {
        self.row().npy
    }

    /// Default (rtol, atol) when the suite gives none: a few units in the last place for
    /// floats, exact for integers.
    pub fn default_tolerance(self) -> (f64, f64) {
        self.row().tolerance
    }

    /// The C spelling of the type, for messages that say what to write.
    pub fn c_type(self) -> &'static str {
        self.row().c
    }

    /// The smallest and largest value the type can hold, as f64.
    pub fn range(self) -> (f64, f64) {
        match self {
            DType::F32 => (f32::MIN as f64, f32::MAX as f64),
            DType::F64 => (f64::MIN, f64::MAX),
            DType::F16 => (f16::MIN.to_f64(), f16::MAX.to_f64()),
            DType::Bf16 => (bf16::MIN.to_f64(), bf16::MAX.to_f64()),
            DType::I32 => (i32::MIN as f64, i32::MAX as f64),
            DType::U32 => (0.0, u32::MAX as f64),
            DType::I64 => (i64::MIN as f64, i64::MAX as f64),
            DType::U8 => (0.0, 255.0),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed array on the host, stored as little-endian bytes (the layout the GPU uses).
#[derive(Debug, Clone, PartialEq)]
pub struct HostData {
    /// Element type.
    pub dtype: DType,
    /// `len * dtype.size()` bytes.
    pub bytes: Vec<u8>,
}

impl HostData {
    /// An array of `len` elements with every byte 0xFF: NaN for floats, all ones for integers.
    pub fn poison(dtype: DType, len: usize) -> HostData {
        HostData {
            dtype,
            bytes: vec![0xFF; len * dtype.size()],
        }
    }

    /// Builds an array from f64 values, converting (and for integers, rounding and saturating).
    pub fn from_f64(dtype: DType, values: impl IntoIterator<Item = f64>) -> HostData {
        let mut bytes = Vec::new();
        for v in values {
            match dtype {
                DType::F32 => bytes.extend((v as f32).to_le_bytes()),
                DType::F64 => bytes.extend(v.to_le_bytes()),
                DType::F16 => bytes.extend(f16::from_f64(v).to_le_bytes()),
                DType::Bf16 => bytes.extend(bf16::from_f64(v).to_le_bytes()),
                DType::I32 => bytes.extend((v.round() as i32).to_le_bytes()),
                DType::U32 => bytes.extend((v.round() as u32).to_le_bytes()),
                DType::I64 => bytes.extend((v.round() as i64).to_le_bytes()),
                DType::U8 => bytes.push(v.round() as u8),
            }
        }
        HostData { dtype, bytes }
    }

    /// Builds an i64-valued array exactly (no trip through f64 for 64-bit integers).
    pub fn from_i64(dtype: DType, values: impl IntoIterator<Item = i64>) -> HostData {
        if dtype != DType::I64 {
            return HostData::from_f64(dtype, values.into_iter().map(|v| v as f64));
        }
        let bytes = values.into_iter().flat_map(|v| v.to_le_bytes()).collect();
        HostData { dtype, bytes }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes of element `i`.
    pub fn bytes_of(&self, i: usize) -> &[u8] {
        let s = self.dtype.size();
        &self.bytes[i * s..(i + 1) * s]
    }

    /// Element `i` as f64 (exact for every type but i64 beyond 2^53).
    pub fn get(&self, i: usize) -> f64 {
        let b = self.bytes_of(i);
        match self.dtype {
            DType::F32 => f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
            DType::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
            DType::F16 => f16::from_le_bytes(b.try_into().expect("2 bytes")).to_f64(),
            DType::Bf16 => bf16::from_le_bytes(b.try_into().expect("2 bytes")).to_f64(),
            DType::I32 => i32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
            DType::U32 => u32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
            DType::I64 => i64::from_le_bytes(b.try_into().expect("8 bytes")) as f64,
            DType::U8 => b[0] as f64,
        }
    }

    /// Element `i` formatted in its own type (integers without a fraction).
    pub fn show(&self, i: usize) -> String {
        let v = self.get(i);
        if self.dtype.is_float() {
            format!("{v:e}")
        } else if self.dtype == DType::I64 {
            let b = self.bytes_of(i).try_into().expect("8 bytes");
            i64::from_le_bytes(b).to_string()
        } else {
            format!("{v}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poison_is_nan_for_every_float_type() {
        for t in ALL.into_iter().filter(|t| t.is_float()) {
            let p = HostData::poison(t, 3);
            assert_eq!(p.len(), 3);
            assert!(p.get(2).is_nan(), "{t}");
        }
        assert_eq!(HostData::poison(DType::I32, 1).get(0), -1.0);
        assert_eq!(HostData::poison(DType::U8, 1).get(0), 255.0);
    }

    #[test]
    fn round_trips() {
        for t in ALL {
            let d = HostData::from_f64(t, [0.0, 1.0, 2.0, 100.0]);
            assert_eq!(d.bytes.len(), 4 * t.size());
            assert_eq!(
                (0..4).map(|i| d.get(i)).collect::<Vec<_>>(),
                [0.0, 1.0, 2.0, 100.0]
            );
            assert_eq!(DType::parse(t.name()), Some(t));
        }
        let big = HostData::from_i64(DType::I64, [i64::MAX]);
        assert_eq!(big.show(0), i64::MAX.to_string());
        assert_eq!(DType::parse("float"), None);
    }
}
