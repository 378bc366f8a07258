//! `Gemm`: cuBLASLt's matrix multiply as a suite's kernel (`suite::library`). The library is
//! found and loaded first (cudarc panics where it cannot: `missing` asks); a plan per problem
//! size — descriptors and the heuristic's first algorithm — is made on the first call, which
//! is the correctness check's, before anything is timed; the workspace is allocated once,
//! outside the pool, and added to the call's memory peak (not to the suite's other kernels');
//! every call goes on the trial's stream, so the same flush, timer and graph capture apply as
//! to a kernel.

use super::buffer::{DeviceBuffer, KernelArg};
use super::compile::Compiled;
use super::error::DeviceError;
use crate::gemm::{Gemm as Decl, Layout, Math};
use cudarc::cublaslt::sys as lt;
use cudarc::driver::sys::CUstream;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;

/// What to install where cuBLASLt does not load.
const INSTALL: &str = "no cuBLASLt: libcublasLt could not be loaded (it ships with the CUDA toolkit in lib64, or `pip install 'kernelgate[cublas]'` / `pip install 'nvidia-cublas==13.*'`; put its folder on LD_LIBRARY_PATH or set CUDA_HOME)";

/// Why cuBLASLt cannot be used here, or `None` when it loads (from the loader's path, CUDA's
/// folders or the pip wheels', as CUPTI is found).
pub fn missing() -> Option<String> {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: only tries to open the library; no cuBLASLt call is made.
    let present = || unsafe { lt::is_culib_present() };
    let found = *FOUND.get_or_init(|| super::libraries::load_from_cuda("libcublasLt.so", present));
    (!found).then(|| INSTALL.to_string())
}

/// The version of the cuBLASLt that loads here (`13.0.2`), or `None` where none does.
pub fn version() -> Option<String> {
    if missing().is_some() {
        return None;
    }
    // SAFETY: the library loads (asked above); the call needs no GPU.
    let v = unsafe { lt::cublasLtGetVersion() };
    Some(format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100))
}

/// What compiling a library source gives: no code; its image is the declaration and the
/// version of the library that would run it, which the code identity hashes — so another
/// version, math mode or workspace is another identity.
pub fn compiled(decl: Option<&Decl>, entries: &[String]) -> Compiled {
    let version = version().unwrap_or_else(|| "none (not loadable here)".into());
    let decl = serde_json::to_string(&decl).unwrap_or_default();
    Compiled {
        cubin: format!("cuBLASLt {version}\n{decl}").into_bytes(),
        entries: entries.to_vec(),
        lowered: entries.to_vec(),
        fp64: Vec::new(),
        log: String::new(),
        cached: false,
    }
}

/// A failed cuBLASLt call.
fn check(call: &'static str, status: lt::cublasStatus_t) -> Result<(), DeviceError> {
    if status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    Err(DeviceError::harness(
        call,
        &format!("{status:?}"),
        "cuBLASLt refused the call".into(),
    ))
}

/// An algorithm as cuBLASLt configured it: its id, tile, stages, split-K, reduction scheme,
/// swizzle and custom option (`cublasLtMatmulAlgoConfigAttributes_t`, raw values), e.g.
/// `algo 66 · tile 20 · stages 12 · split-k 1 · reduction 0 · swizzle 0 · custom 0`.
fn describe(algo: &lt::cublasLtMatmulAlgo_t) -> String {
    use lt::cublasLtMatmulAlgoConfigAttributes_t as A;
    let read = |attr| {
        let (mut value, mut written) = (0u32, 0usize);
        // SAFETY: `algo` is an initialised algorithm; each of these attributes is 4 bytes.
        let status = unsafe {
            lt::cublasLtMatmulAlgoConfigGetAttribute(
                algo,
                attr,
                &mut value as *mut u32 as *mut c_void,
                4,
                &mut written,
            )
        };
        match status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            true => value.to_string(),
            false => "?".into(),
        }
    };
    [
        ("algo", A::CUBLASLT_ALGO_CONFIG_ID),
        ("tile", A::CUBLASLT_ALGO_CONFIG_TILE_ID),
        ("stages", A::CUBLASLT_ALGO_CONFIG_STAGES_ID),
        ("split-k", A::CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
        ("reduction", A::CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
        ("swizzle", A::CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
        ("custom", A::CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
    ]
    .map(|(name, attr)| format!("{name} {}", read(attr)))
    .join(" · ")
}

/// A GEMM in cuBLAS's column-major terms.
#[derive(Debug, PartialEq)]
struct Operands {
    /// Whether it computes Cᵀ = Bᵀ·Aᵀ (C row-major) rather than C = A·B.
    swapped: bool,
    /// The first and second operands: which matrix (0: A, 1: B), and its stored matrix's
    /// rows and columns (column-major, the rows its leading dimension) and whether it is
    /// transposed (`CUBLAS_OP_T`).
    first: (usize, (i32, i32, bool)),
    second: (usize, (i32, i32, bool)),
    /// The result's rows and columns (column-major).
    c: (i32, i32),
}

/// `m`×`n`×`k` with matrices stored in `layouts`, in column-major terms: a row-major matrix
/// is its transpose in column-major. C col-major: C = A·B; C row-major: Cᵀ = Bᵀ·Aᵀ.
fn operands(layouts: [Layout; 3], [m, n, k]: [i32; 3]) -> Operands {
    let swapped = layouts[2] == Layout::Row;
    // Logical shapes: A m×k, B k×n; swapped, the wanted operands are Bᵀ and Aᵀ.
    let logical = [(m, k), (k, n)];
    let operand = |i: usize| {
        let (r, c) = logical[i];
        let stored_t = layouts[i] == Layout::Row;
        let (rows, cols) = if stored_t { (c, r) } else { (r, c) };
        (i, (rows, cols, stored_t != swapped))
    };
    let (first, second) = if swapped { (1, 0) } else { (0, 1) };
    Operands {
        swapped,
        first: operand(first),
        second: operand(second),
        c: if swapped { (n, m) } else { (m, n) },
    }
}

/// One problem size's descriptors and algorithm.
struct Plan {
    desc: lt::cublasLtMatmulDesc_t,
    /// The first operand's, the second's and the result's layouts.
    layouts: [lt::cublasLtMatrixLayout_t; 3],
    algo: lt::cublasLtMatmulAlgo_t,
    /// `algo` in words (`describe`), for the call's footprint.
    described: String,
    /// Whether the call computes Cᵀ = Bᵀ·Aᵀ (C row-major): B is the first operand.
    swapped: bool,
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: created by `Gemm::plan` (null where it failed first) and destroyed only here.
        unsafe {
            for l in self.layouts.into_iter().filter(|l| !l.is_null()) {
                lt::cublasLtMatrixLayoutDestroy(l);
            }
            if !self.desc.is_null() {
                lt::cublasLtMatmulDescDestroy(self.desc);
            }
        }
    }
}

/// A declared GEMM, ready to be queued on a GPU's stream.
pub struct Gemm {
    decl: Decl,
    handle: lt::cublasLtHandle_t,
    workspace: RefCell<Option<DeviceBuffer>>,
    plans: RefCell<HashMap<[i32; 3], Plan>>,
    /// The problem size of the last call: whose algorithm [`Gemm::algorithm`] tells.
    last: std::cell::Cell<Option<[i32; 3]>>,
}

impl Drop for Gemm {
    fn drop(&mut self) {
        self.plans.borrow_mut().clear();
        // SAFETY: created by `Gemm::new` and destroyed only here, after its plans.
        unsafe { lt::cublasLtDestroy(self.handle) };
    }
}

/// cuBLASLt's element type for a buffer's.
fn data_type(t: crate::dtype::DType) -> lt::cudaDataType {
    match t {
        crate::dtype::DType::F16 => lt::cudaDataType::CUDA_R_16F,
        crate::dtype::DType::Bf16 => lt::cudaDataType::CUDA_R_16BF,
        _ => lt::cudaDataType::CUDA_R_32F,
    }
}

impl Gemm {
    /// The call `decl` describes, with a cuBLASLt handle (the GPU's context is current).
    // stringly: what to install, or cuBLASLt's refusal, goes to the user as a compile failure.
    pub fn new(decl: &Decl) -> Result<Gemm, String> {
        if let Some(why) = missing() {
            return Err(why);
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: the library loads (asked above); `handle` is valid for writes.
        check("cublasLtCreate", unsafe { lt::cublasLtCreate(&mut handle) })
            .map_err(|e| e.to_string())?;
        Ok(Gemm {
            decl: decl.clone(),
            handle,
            workspace: RefCell::new(None),
            plans: RefCell::new(HashMap::new()),
            last: std::cell::Cell::new(None),
        })
    }

    /// The plan for `m`×`n`×`k`: operands in column-major terms (a row-major matrix is its
    /// transpose in column-major), and the heuristic's first algorithm for the declared
    /// workspace and math mode.
    fn plan(&self, [m, n, k]: [i32; 3]) -> Result<Plan, DeviceError> {
        let d = &self.decl;
        let compute = match d.math {
            Math::Default => lt::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            Math::Tf32 => lt::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        };
        let Operands {
            swapped,
            first,
            second,
            c: (rc, cc),
        } = operands(d.layouts, [m, n, k]);
        let [(ra, ca, ta), (rb, cb, tb)] = [first.1, second.1];
        let (first, second) = (first.0, second.0);
        // Made first, so that what is created is destroyed on every error below.
        let mut plan = Plan {
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 3],
            algo: lt::cublasLtMatmulAlgo_t { data: [0; 8] },
            described: String::new(),
            swapped,
        };
        // SAFETY: the handle is live; every pointer passed is valid for the call.
        unsafe {
            let scale = lt::cudaDataType::CUDA_R_32F;
            check(
                "cublasLtMatmulDescCreate",
                lt::cublasLtMatmulDescCreate(&mut plan.desc, compute, scale),
            )?;
            use lt::cublasLtMatmulDescAttributes_t as D;
            for (attr, t) in [
                (D::CUBLASLT_MATMUL_DESC_TRANSA, ta),
                (D::CUBLASLT_MATMUL_DESC_TRANSB, tb),
            ] {
                // cublasOperation_t: CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 (cuBLAS's header).
                let v = t as i32;
                let size = std::mem::size_of_val(&v);
                let p = &v as *const _ as *const c_void;
                check(
                    "cublasLtMatmulDescSetAttribute",
                    lt::cublasLtMatmulDescSetAttribute(plan.desc, attr, p, size),
                )?;
            }
            let shapes = [(first, ra, ca), (second, rb, cb), (2, rc, cc)];
            for (slot, (i, rows, cols)) in plan.layouts.iter_mut().zip(shapes) {
                let t = data_type(d.types[i]);
                check(
                    "cublasLtMatrixLayoutCreate",
                    lt::cublasLtMatrixLayoutCreate(slot, t, rows as u64, cols as u64, rows as i64),
                )?;
            }
        }
        plan.algo = self.heuristic(&plan)?;
        plan.described = describe(&plan.algo);
        Ok(plan)
    }

    /// The heuristic's first algorithm for `plan` within the declared workspace.
    fn heuristic(&self, plan: &Plan) -> Result<lt::cublasLtMatmulAlgo_t, DeviceError> {
        let mut pref = std::ptr::null_mut();
        // SAFETY: zeroed plain data, written by the heuristic before it is read.
        let mut result: lt::cublasLtMatmulHeuristicResult_t = unsafe { std::mem::zeroed() };
        let mut found = 0;
        let [a, b, c] = plan.layouts;
        // SAFETY: the handle and descriptors are live; every pointer is valid for the call.
        unsafe {
            check(
                "cublasLtMatmulPreferenceCreate",
                lt::cublasLtMatmulPreferenceCreate(&mut pref),
            )?;
            let bytes = self.decl.workspace as usize;
            let attr =
                lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES;
            let p = &bytes as *const usize as *const c_void;
            let set = lt::cublasLtMatmulPreferenceSetAttribute(pref, attr, p, 8);
            let asked = lt::cublasLtMatmulAlgoGetHeuristic(
                self.handle,
                plan.desc,
                a,
                b,
                c,
                c,
                pref,
                1,
                &mut result,
                &mut found,
            );
            lt::cublasLtMatmulPreferenceDestroy(pref);
            check("cublasLtMatmulPreferenceSetAttribute", set)?;
            check("cublasLtMatmulAlgoGetHeuristic", asked)?;
        }
        if found == 0 {
            return Err(DeviceError::harness("cublasLtMatmulAlgoGetHeuristic", "no algorithm", "cuBLASLt has no algorithm for this GEMM's types, layouts and workspace on this GPU".into()));
        }
        Ok(result.algo)
    }

    /// The algorithm the last call ran, as cuBLASLt configured it (`describe`).
    pub fn algorithm(&self) -> Option<String> {
        let plans = self.plans.borrow();
        Some(plans.get(&self.last.get()?)?.described.clone())
    }

    /// The workspace the call holds while it runs, bytes: part of its memory peak.
    pub fn workspace_bytes(&self) -> u64 {
        self.decl.workspace
    }

    /// Queues `C = alpha·A·B + beta·C` on `stream`; `args` are A, B, C, m, n, k.
    pub fn run(&self, stream: CUstream, args: &[KernelArg]) -> Result<(), DeviceError> {
        let bad = || {
            DeviceError::harness(
                "cublasLtMatmul",
                "argument mismatch",
                "a GEMM takes buffers A, B, C and 32-bit m, n, k".into(),
            )
        };
        let [KernelArg::Buffer(a), KernelArg::Buffer(b), KernelArg::Buffer(c), dims @ ..] = args
        else {
            return Err(bad());
        };
        let mut mnk = [0i32; 3];
        for (slot, d) in mnk.iter_mut().zip(dims) {
            let KernelArg::Scalar(bytes) = d else {
                return Err(bad());
            };
            *slot = i32::from_le_bytes((*bytes).try_into().map_err(|_| bad())?);
        }
        if self.workspace.borrow().is_none() && self.decl.workspace > 0 {
            // Outside the pool: the case's pool peak is the kernels'; the call's own footprint
            // adds the workspace (`workspace_bytes`), so the suite's other kernels do not.
            *self.workspace.borrow_mut() = Some(DeviceBuffer::plain(self.decl.workspace as usize)?);
        }
        if !self.plans.borrow().contains_key(&mnk) {
            let plan = self.plan(mnk)?;
            self.plans.borrow_mut().insert(mnk, plan);
        }
        let plans = self.plans.borrow();
        let plan = &plans[&mnk];
        self.last.set(Some(mnk));
        let (x, y) = if plan.swapped { (b, a) } else { (a, b) };
        let (alpha, beta) = (self.decl.alpha as f32, self.decl.beta as f32);
        let workspace = self.workspace.borrow();
        let (ws, ws_bytes) = workspace
            .as_ref()
            .map_or((0, 0), |w| (w.address(), w.bytes));
        let [la, lb, lc] = plan.layouts;
        let ptr = |d: &DeviceBuffer| d.address() as *mut c_void;
        // SAFETY: the buffers are live device allocations the load-time checks sized for
        // m, n and k; descriptors, algorithm and workspace are live; the stream is the GPU's.
        let status = unsafe {
            lt::cublasLtMatmul(
                self.handle,
                plan.desc,
                &alpha as *const f32 as *const c_void,
                ptr(x),
                la,
                ptr(y),
                lb,
                &beta as *const f32 as *const c_void,
                ptr(c),
                lc,
                ptr(c),
                lc,
                &plan.algo,
                ws as *mut c_void,
                ws_bytes,
                stream as lt::cudaStream_t,
            )
        };
        check("cublasLtMatmul", status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What cuBLAS computes for `o` on column-major stored matrices `x` and `y` (leading
    /// dimension: their rows): `op(x)·op(y)`, column-major.
    fn column_major(o: &Operands, x: &[f64], y: &[f64], k: i32) -> Vec<f64> {
        let (rc, cc) = o.c;
        let at = |(rows, _, t): (i32, i32, bool), m: &[f64], i: i32, j: i32| {
            let (r, c) = if t { (j, i) } else { (i, j) };
            m[(c * rows + r) as usize]
        };
        let mut out = vec![0.0; (rc * cc) as usize];
        for j in 0..cc {
            for i in 0..rc {
                out[(j * rc + i) as usize] = (0..k)
                    .map(|p| at(o.first.1, x, i, p) * at(o.second.1, y, p, j))
                    .sum();
            }
        }
        out
    }

    #[test]
    fn every_layout_computes_the_product_in_cs_layout() {
        let [m, n, k] = [2, 3, 4];
        let a = |i: i32, p: i32| (i * 7 + p * 3 + 1) as f64;
        let b = |p: i32, j: i32| (p * 5 - j * 2 + 3) as f64;
        let stored = |rows: i32, cols: i32, l: Layout, f: &dyn Fn(i32, i32) -> f64| {
            let mut v = vec![0.0; (rows * cols) as usize];
            for r in 0..rows {
                for c in 0..cols {
                    let at = if l == Layout::Row {
                        r * cols + c
                    } else {
                        c * rows + r
                    };
                    v[at as usize] = f(r, c);
                }
            }
            v
        };
        let l = [Layout::Row, Layout::Col];
        for layouts in l
            .iter()
            .flat_map(|&x| l.iter().flat_map(move |&y| l.map(|z| [x, y, z])))
        {
            let o = operands(layouts, [m, n, k]);
            let sa = stored(m, k, layouts[0], &a);
            let sb = stored(k, n, layouts[1], &b);
            let (x, y) = if o.swapped { (&sb, &sa) } else { (&sa, &sb) };
            let got = column_major(&o, x, y, k);
            let c = |i: i32, j: i32| (0..k).map(|p| a(i, p) * b(p, j)).sum::<f64>();
            assert_eq!(got, stored(m, n, layouts[2], &c), "{layouts:?}: {o:?}");
        }
    }

    #[test]
    fn the_version_is_read_where_the_library_loads_and_what_to_install_said_where_not() {
        match missing() {
            None => {
                let v = version().unwrap();
                assert!(v.starts_with("13."), "{v}");
            }
            Some(why) => {
                assert!(
                    why.contains("nvidia-cublas") && why.contains("kernelgate[cublas]"),
                    "{why}"
                );
                assert_eq!(version(), None);
                let c = compiled(None, &["gemm".into()]);
                assert!(String::from_utf8_lossy(&c.cubin).starts_with("cuBLASLt none"));
            }
        }
    }
}
