//! `Gemm`: a library GEMM as a suite declares it (`entry = "cublasLt::gemm"`, read in
//! `suite::library`) and `device::cublaslt` calls it — the types both sides share, below both.

use crate::dtype::DType;
use serde::{Deserialize, Serialize};

/// How a matrix is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Row-major: a row's elements are adjacent (C's arrays).
    Row,
    /// Column-major: a column's elements are adjacent (Fortran's, BLAS's).
    Col,
}

/// The math mode: what cuBLASLt may compute an f32 product with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Math {
    /// f32 accumulation of the inputs as they are (`CUBLAS_COMPUTE_32F`).
    Default,
    /// f32 inputs rounded to TF32 on the tensor cores (`CUBLAS_COMPUTE_32F_FAST_TF32`).
    Tf32,
}

/// A cuBLASLt GEMM as declared: the element types of A, B and C, their layouts, the math
/// mode, the scalars and the workspace cuBLASLt may use. All of it is in the trial identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gemm {
    /// Element types of A, B and C.
    pub types: [DType; 3],
    /// Layouts of A, B and C.
    pub layouts: [Layout; 3],
    /// The math mode.
    pub math: Math,
    /// `alpha` of `C = alpha·A·B + beta·C`.
    pub alpha: f64,
    /// `beta`: C must be `inout` where it is not 0.
    pub beta: f64,
    /// Bytes of workspace cuBLASLt may use: allocated once, before any timing, and counted in
    /// the memory peak.
    pub workspace: u64,
}

/// The workspace cuBLASLt gets where none is declared: 32 MiB, what NVIDIA recommends for
/// Hopper (cuBLAS docs, "cublasSetWorkspace").
pub const DEFAULT_WORKSPACE: u64 = 32 << 20;
