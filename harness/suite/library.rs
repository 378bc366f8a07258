//! A library call as a kernel: `entry = "cublasLt::gemm"` with `args = [A, B, C, m, n, k]`
//! and an optional `gemm = { layout, math, alpha, beta, workspace }` — cuBLASLt's matrix
//! multiply `C = alpha·A·B + beta·C` (A m×k, B k×n, C m×n), checked and timed as a kernel is.
//!
//! The call becomes a source of its own ([`Gemm`] in [`Source::library`]) whose text is the
//! call's signature written as CUDA (`gemm(const float* a, const float* b, float* c, int m,
//! int n, int k)`), so its arguments go through the same checks as a kernel's: buffers read
//! through `const` are not outputs, the output is written, sizes convert to `int`.

use super::buffer_tables::Buffers;
use super::ctx::{choice, Ctx};
use super::schema::{ExprText, RawKernel, RawLayout};
use super::{Launch, Source};
use crate::dtype::DType;
pub use crate::gemm::{Gemm, Layout, Math, DEFAULT_WORKSPACE};
use std::path::PathBuf;
use toml::Spanned;

/// The prefix of an entry that is a cuBLASLt call.
pub const CUBLASLT: &str = "cublasLt::";

/// Whether kernel `k` is a library call.
pub(super) fn is_library(k: &RawKernel) -> bool {
    k.entry
        .as_ref()
        .is_some_and(|e| e.get_ref().starts_with(CUBLASLT))
}

/// Kernel `k` (at `at`), a library call: the table as the launch checks read it (a launch of
/// one thread, which nothing launches), and its source (added to `sources`; `None` after an
/// error that leaves nothing to check).
pub(super) fn prepare(
    ctx: &mut Ctx,
    (k, at): (&RawKernel, usize),
    buffers: &Buffers,
    sources: &mut Vec<Source>,
) -> (RawKernel, Option<usize>) {
    let mut view = k.clone();
    let Some(entry) = k.entry.as_ref() else {
        return (view, None);
    };
    let one = |s: &Spanned<String>| {
        let dims = vec![Spanned::new(s.span(), ExprText::written("1", true))];
        Some(Spanned::new(s.span(), dims))
    };
    view.entry = Some(Spanned::new(entry.span(), "gemm".to_string()));
    (view.grid, view.block, view.shared) = (one(entry), one(entry), None);
    (view.launch, view.scratch, view.axes) = (Vec::new(), Vec::new(), None);
    (view.defines, view.skip) = (Vec::new(), Vec::new());
    let source = library_source(ctx, (k, at), entry, buffers, sources);
    (view, source)
}

/// Every key of kernel `k` (at `at`) that does not apply to a library call is an error at it.
fn not_applicable(ctx: &mut Ctx, (k, at): (&RawKernel, usize), entry: &Spanned<String>) {
    let name = k.name.get_ref();
    let not_here = [
        ("source", k.source.as_ref().map(Spanned::span)),
        ("grid", k.grid.as_ref().map(Spanned::span)),
        ("block", k.block.as_ref().map(Spanned::span)),
        ("shared", k.shared.as_ref().map(Spanned::span)),
        ("max_registers", k.max_registers.as_ref().map(Spanned::span)),
        ("spills", k.spills.as_ref().map(Spanned::span)),
        ("fp64", k.fp64.as_ref().map(Spanned::span)),
        ("axes", k.axes.as_ref().map(Spanned::span)),
    ];
    for (key, place) in not_here {
        if let Some(place) = place {
            ctx.error(place.start, format!("kernel `{name}` is a library call (`{}`): `{key}` does not apply to it (cuBLASLt picks its own kernels and launches, and their code is not kernelgate's to read)", entry.get_ref()));
        }
    }
    if !k.launch.is_empty() || !k.scratch.is_empty() || !k.defines.is_empty() {
        ctx.error(at, format!("kernel `{name}` is a library call: it is one call, without `[[kernel.launch]]`, `[[kernel.scratch]]` or `defines`"));
    }
}

/// The source of library kernel `k`, added to `sources` unless one like it is there.
fn library_source(
    ctx: &mut Ctx,
    (k, at): (&RawKernel, usize),
    entry: &Spanned<String>,
    buffers: &Buffers,
    sources: &mut Vec<Source>,
) -> Option<usize> {
    let name = k.name.get_ref();
    not_applicable(ctx, (k, at), entry);
    let op = &entry.get_ref()[CUBLASLT.len()..];
    if op != "gemm" {
        let hint = crate::suggest::did_you_mean(op, ["gemm"]);
        ctx.error(
            entry.span().start,
            format!("unknown cuBLASLt operation `{op}`{hint}: kernelgate calls `cublasLt::gemm`"),
        );
        return None;
    }
    let Some(args) = k.args.as_ref() else {
        ctx.error(at, format!("kernel `{name}` needs `args = [\"A\", \"B\", \"C\", \"m\", \"n\", \"k\"]`: C (m×n) = alpha·A (m×k)·B (k×n) + beta·C"));
        return None;
    };
    let list = args.get_ref();
    if list.len() != 6 {
        ctx.error(
            args.span().start,
            format!(
                "`cublasLt::gemm` takes 6 args, A, B, C, m, n, k; {} given",
                list.len()
            ),
        );
        return None;
    }
    let types = operand_types(ctx, list, buffers)?;
    for (i, a) in list[..2].iter().enumerate() {
        if a.get_ref() == list[2].get_ref() {
            ctx.error(a.span().start + 1, format!("`{}` is both {} and C: cuBLASLt reads A and B while it writes C (pass another buffer)", a.get_ref(), ["A", "B"][i]));
        }
    }
    let gemm = options(ctx, k, types, args.span().start)?;
    if gemm.beta != 0.0 {
        let c = &buffers.list[buffers.by_name[list[2].get_ref()]];
        if c.role != super::Role::Inout {
            ctx.error(
                list[2].span().start + 1,
                format!(
                    "with beta = {} the call reads C: buffer `{}` must be `role = \"inout\"`",
                    gemm.beta, c.name
                ),
            );
        }
    }
    // `options` let through only f32, f16 and bf16.
    let [a, b, c] = types.map(DType::c_type);
    let text = format!("extern \"C\" __global__ void gemm(const {a}* a, const {b}* b, {c}* c, int m, int n, int k);\n");
    let source = Source {
        path: PathBuf::from("cublasLt"),
        text,
        library: Some(gemm),
        ..Source::default()
    };
    // The text follows from the declaration's types: the declaration tells sources apart.
    let same = |s: &Source| s.library == source.library;
    Some(sources.iter().position(same).unwrap_or_else(|| {
        sources.push(source);
        sources.len() - 1
    }))
}

/// The element types of A, B and C, the buffers the first three `args` name.
fn operand_types(ctx: &mut Ctx, list: &[Spanned<String>], buffers: &Buffers) -> Option<[DType; 3]> {
    let mut types = [DType::F32; 3];
    for (i, a) in list[..3].iter().enumerate() {
        let Some(&b) = buffers.by_name.get(a.get_ref()) else {
            if super::ctx::is_ident(a.get_ref()) {
                // An unknown name: the argument check says so, with the names it knows.
                return None;
            }
            let hint = crate::suggest::did_you_mean(
                a.get_ref(),
                buffers.by_name.keys().map(String::as_str),
            );
            ctx.error(
                a.span().start + 1,
                format!(
                    "`{}` is not a buffer{hint}: argument {} of `cublasLt::gemm` is the matrix {}",
                    a.get_ref(),
                    i + 1,
                    ["A", "B", "C"][i]
                ),
            );
            return None;
        };
        types[i] = buffers.list[b].dtype;
    }
    Some(types)
}

/// The `gemm` table's options for operands of `types`, each checked where it is written.
fn options(ctx: &mut Ctx, k: &RawKernel, types: [DType; 3], args_at: usize) -> Option<Gemm> {
    let mut gemm = Gemm {
        types,
        layouts: [Layout::Row; 3],
        math: Math::Default,
        alpha: 1.0,
        beta: 0.0,
        workspace: DEFAULT_WORKSPACE,
    };
    let [a, b, c] = types;
    let supported =
        matches!(a, DType::F32 | DType::F16 | DType::Bf16) && b == a && (c == a || c == DType::F32);
    if !supported {
        ctx.error(args_at, format!("cublasLt::gemm of {a} × {b} into {c} is not one kernelgate calls: A and B both f32, f16 or bf16, C of their type or f32 (the product is accumulated in f32)"));
        return None;
    }
    let Some(raw) = k.gemm.as_ref() else {
        return Some(gemm);
    };
    let raw = raw.get_ref();
    if let Some(l) = &raw.layout {
        gemm.layouts = layouts(ctx, l)?;
    }
    if let Some(m) = &raw.math {
        let maths = [("default", Math::Default), ("tf32", Math::Tf32)];
        let fix = "write \"default\" or \"tf32\"";
        gemm.math = choice(ctx, m.span().start, m.get_ref(), &maths, "math", fix)?;
        if gemm.math == Math::Tf32 && a != DType::F32 {
            let message = format!("math = \"tf32\" rounds f32 inputs, and A is {a}: remove it");
            ctx.error(m.span().start, message);
            return None;
        }
    }
    gemm.alpha = raw.alpha.unwrap_or(1.0);
    gemm.beta = raw.beta.as_ref().map_or(0.0, |b| *b.get_ref());
    if let Some(w) = &raw.workspace {
        match super::kernels::parse_bytes(w.get_ref()) {
            Some(v) => gemm.workspace = v,
            None => ctx.error(
                w.span().start,
                format!(
                    "bad workspace `{}` (write e.g. \"32 MiB\", or 0 for none)",
                    w.get_ref()
                ),
            ),
        }
    }
    Some(gemm)
}

/// `layout = "row"` or `["row", "col", "row"]`: the layouts of A, B and C.
fn layouts(ctx: &mut Ctx, l: &Spanned<RawLayout>) -> Option<[Layout; 3]> {
    let word = |ctx: &mut Ctx, w: &str| {
        let layouts = [("row", Layout::Row), ("col", Layout::Col)];
        let fix = "write \"row\" or \"col\", or a list of three for A, B and C";
        choice(ctx, l.span().start, w, &layouts, "layout", fix)
    };
    match l.get_ref() {
        RawLayout::All(w) => Some([word(ctx, w)?; 3]),
        RawLayout::Each(ws) if ws.len() == 3 => {
            Some([word(ctx, &ws[0])?, word(ctx, &ws[1])?, word(ctx, &ws[2])?])
        }
        RawLayout::Each(ws) => {
            ctx.error(
                l.span().start,
                format!(
                    "`layout` lists A's, B's and C's: 3 layouts, {} given",
                    ws.len()
                ),
            );
            None
        }
    }
}

/// A library call's launch in a case, checked against the case's buffer lengths `lens`: each
/// matrix fits its buffer. `at`: where the call's args are written; `case`: ` for n=64`.
pub(super) fn check_case(ctx: &mut Ctx, launch: &Launch, lens: &[usize], case: &str, at: usize) {
    let Some([m, n, k]) = dims(launch) else {
        return;
    };
    let shapes = [("A", m, k), ("B", k, n), ("C", m, n)];
    for (arg, (matrix, rows, cols)) in launch.args.iter().zip(shapes) {
        let super::ArgValue::Buffer(b) = arg else {
            continue;
        };
        let need = rows as u64 * cols as u64;
        if rows <= 0 || cols <= 0 {
            ctx.error(
                at,
                format!("{matrix} is {rows}×{cols}{case}: m, n and k must be positive"),
            );
        } else if (lens[*b] as u64) < need {
            ctx.error(at, format!("{matrix} is {rows}×{cols} = {need} elements{case}, and its buffer holds {} (make its `len` at least that)", lens[*b]));
        }
    }
}

/// `m`, `n` and `k` of a library call's launch.
pub fn dims(launch: &Launch) -> Option<[i32; 3]> {
    let mut out = [0; 3];
    for (slot, arg) in out.iter_mut().zip(launch.args.get(3..6)?) {
        let super::ArgValue::Scalar(bytes) = arg else {
            return None;
        };
        *slot = i32::from_le_bytes(bytes.as_slice().try_into().ok()?);
    }
    Some(out)
}
