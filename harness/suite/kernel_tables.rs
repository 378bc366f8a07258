//! Phase `kernel_tables`: the `[[kernel]]` tables — each kernel's name, source, whether it is the
//! reference, its launches (parsed, and checked against the CUDA source's signatures), scratch
//! buffers and limits. One kernel must be the reference.

use super::buffer_tables::Buffers;
use super::ctx::{is_ident, Ctx};
use super::decls::KernelDecl;
use super::entry::{check_entry, Found, Targets};
use super::kernels::{launch_decl, launch_tables, limits, scratch_decls};
use super::schema::{RawFile, RawKernel};
use super::suite_table::{source_index, SuiteTable};
use super::{Kernel, Limits, Source};
use std::path::Path;

/// The suite's kernels, and what the cases will evaluate for them.
#[derive(Default)]
pub(super) struct Kernels {
    /// The kernels, in declaration order.
    pub list: Vec<Kernel>,
    /// Each kernel's launches and scratch lengths, parsed (only kernels whose every launch
    /// parsed: the cases are expanded only when there were no errors).
    pub decls: Vec<KernelDecl>,
    /// Line of each `[[kernel]]` header.
    pub lines: Vec<usize>,
    /// The reference kernel's index, when exactly one says `reference = true`.
    pub reference: Option<usize>,
    /// Where the first `reference = true` is written.
    pub reference_at: Option<usize>,
    /// Where each name was first written (for a name declared twice).
    pub name_at: std::collections::BTreeMap<String, usize>,
    /// The arguments whose parameter types are left to the compiler (`resolved`).
    pub pending: Vec<super::entry::Pending>,
}

/// Reads every `[[kernel]]` of `raw` (the suite file in `dir`): sources not read yet are added
/// to `table`'s. Errors are recorded in `ctx`.
pub(super) fn kernel_tables(
    ctx: &mut Ctx,
    dir: &Path,
    raw: &RawFile,
    table: &mut SuiteTable,
    buffers: &Buffers,
    sizes: &[String],
) -> Kernels {
    let rs = raw.suite.get_ref();
    let suite_limits = limits(
        ctx,
        &rs.memory_budget,
        &rs.max_registers,
        &rs.spills,
        &rs.fp64,
        Limits::default(),
    );
    let mut out = Kernels::default();
    for rk in &raw.kernel {
        let (k, at) = (rk.get_ref(), rk.span().start);
        name_and_reference(ctx, k, &mut out);
        let (library, args_at, source) = kernel_source(ctx, dir, (k, at), table, buffers, rs);
        let k = library.as_ref().unwrap_or(k);
        // Each variant of the kernel (one, without axes) is a kernel of the suite.
        for v in super::axes::variants(ctx, (k, at), sizes) {
            let vk = super::axes::apply(k, &v);
            let written = k.defines.first();
            let source =
                source.map(|i| with_defines(ctx, &mut table.sources, i, &v.defines, written));
            let source = source.map(|i| (i, &table.sources[i]));
            let axes = v.values.iter().map(|(n, _)| n.clone());
            let names: Vec<String> = sizes.iter().cloned().chain(axes).collect();
            let mut found = Found::default();
            let (kernel, decl) = kernel_table(
                ctx,
                (&vk, at),
                source,
                buffers,
                &names,
                &suite_limits,
                &mut found,
            );
            out.pending.append(&mut found.pending);
            let budget_at = k.memory_budget.as_ref().or(rs.memory_budget.as_ref());
            out.decls.extend(decl.map(|d| KernelDecl {
                budget_at: budget_at.map(|b| b.span().start),
                variant: v,
                library: args_at,
                ..d
            }));
            out.lines.push(crate::error::line_col(ctx.text, at).0);
            out.list.push(kernel);
        }
    }
    let suite_at = raw.suite.span().start;
    if out.list.is_empty() {
        ctx.error(
            suite_at,
            "the suite declares no kernels (add `[[kernel]]` tables, one with `reference = true`)",
        );
    } else if out.reference.is_none() {
        ctx.error(
            raw.kernel[0].span().start,
            "no kernel has `reference = true` (mark the simplest, trusted kernel: the others are checked and timed against it)",
        );
    }
    out
}

/// Kernel `k`'s source (added to `table`'s when new): its own, the suite's, or — for a library
/// call — one standing for the call, with the kernel as the launch checks read it and where its
/// args are written.
fn kernel_source(
    ctx: &mut Ctx,
    dir: &Path,
    (k, at): (&RawKernel, usize),
    table: &mut SuiteTable,
    buffers: &Buffers,
    rs: &super::schema::RawSuite,
) -> (Option<RawKernel>, Option<usize>, Option<usize>) {
    if super::library::is_library(k) {
        let (view, source) = super::library::prepare(ctx, (k, at), buffers, &mut table.sources);
        let args_at = k.args.as_ref().map_or(at, |a| a.span().start);
        return (Some(view), Some(args_at), source);
    }
    if let Some(g) = &k.gemm {
        ctx.error(g.span().start, format!("`gemm` sets a library call's options, and kernel `{}` is not one (its entry would be `{}gemm`)", k.name.get_ref(), super::library::CUBLASLT));
    }
    let source = match (&k.source, table.default_source) {
        (Some(s), _) => source_index(ctx, dir, &mut table.sources, s),
        (None, Some(d)) => Some(d),
        (None, None) => {
            if rs.source.is_none() {
                ctx.error(at, format!("kernel `{}` has no source (add `source = \"file.cu\"` to it or to [suite])", k.name.get_ref()));
            }
            None
        }
    };
    (None, None, source)
}

/// Source `i` compiled with `defines` besides the suite's options: itself when there are none,
/// else the one source of that file and those defines (added the first time). Defines for a
/// source loaded as built (PTX, CUBIN, fatbin) are an error where the kernel names them
/// (`written`): its variants would be the same code.
fn with_defines(
    ctx: &mut Ctx,
    sources: &mut Vec<Source>,
    i: usize,
    defines: &[String],
    written: Option<&toml::Spanned<String>>,
) -> usize {
    if let (false, Some(d)) = (sources[i].kind().is_compiled(), written) {
        let file = sources[i].path.display();
        ctx.error(d.span().start, format!("`defines` are compiler options, and `{file}` is loaded as built, not compiled: its variants would be the same code (put the axes in a launch expression)"));
    }
    if defines.is_empty() {
        return i;
    }
    let path = &sources[i].path;
    let found = sources
        .iter()
        .position(|s| &s.path == path && s.defines == defines);
    found.unwrap_or_else(|| {
        let mut s = sources[i].clone();
        s.defines = defines.to_vec();
        sources.push(s);
        sources.len() - 1
    })
}

/// A kernel's name (an identifier, not taken), and its `reference = true` (only one may say so).
fn name_and_reference(ctx: &mut Ctx, k: &RawKernel, out: &mut Kernels) {
    let name = k.name.get_ref();
    if !is_ident(name) {
        ctx.error(
            k.name.span().start,
            format!("kernel name `{name}` must be letters, digits, `_` or `-`"),
        );
    } else if let Some(&first) = out.name_at.get(name) {
        ctx.twice(
            &format!("kernel `{name}`"),
            first,
            k.name.span().start,
            "rename one",
        );
    } else {
        out.name_at.insert(name.clone(), k.name.span().start);
    }
    let Some(reference) = k.reference.as_ref().filter(|r| *r.get_ref()) else {
        return;
    };
    match (out.reference, out.reference_at) {
        // At the first `reference = true` and at this one, not at their tables.
        (Some(r), Some(first)) => {
            let other = &out.list[r].name;
            let line = crate::error::line_col(ctx.text, reference.span().start).0;
            ctx.error(
                first,
                format!("kernel `{other}` and kernel `{name}` both say `reference = true`: here, and at line {line} (keep one)"),
            );
            ctx.error(
                reference.span().start,
                format!(
                    "kernel `{name}` and kernel `{other}` both say `reference = true` (keep one)"
                ),
            );
        }
        _ => {
            out.reference = Some(out.list.len());
            out.reference_at = Some(reference.span().start);
        }
    }
}

/// One kernel from its table `k` (at `at`), compiled from `source` (its index and text): its
/// launches checked against the buffers and the source, its scratch buffers and limits. The
/// declaration is `None` unless every launch parsed; its `budget_at` is filled by the caller.
fn kernel_table(
    ctx: &mut Ctx,
    (k, at): (&RawKernel, usize),
    source: Option<(usize, &Source)>,
    buffers: &Buffers,
    sizes: &[String],
    suite_limits: &Limits,
    found: &mut Found,
) -> (Kernel, Option<KernelDecl>) {
    let name = k.name.get_ref().clone();
    let launches = launch_tables(ctx, k, at);
    let (scratch, scratch_lens) = scratch_decls(ctx, k, &buffers.by_name, sizes);
    // Args may name the suite's buffers and this kernel's scratch buffers.
    let mut names = buffers.by_name.clone();
    for (j, sc) in scratch.iter().enumerate() {
        names.insert(sc.name.clone(), buffers.list.len() + j);
    }
    let targets = Targets {
        buffers: &buffers.list,
        scratch: &scratch,
    };
    // Each launch parsed, and checked against the source when there is one.
    let mut decls = Vec::new();
    for l in &launches {
        let decl = launch_decl(ctx, l, &names, sizes);
        if let (Some(source), Some(decl)) = (source, &decl) {
            check_entry(ctx, source, l, decl, &targets, found);
        }
        decls.extend(decl);
    }
    let complete = decls.len() == launches.len() && !launches.is_empty();
    if complete {
        super::values::outputs_written(ctx, &name, at, &buffers.list, &decls);
    }
    let limits = limits(
        ctx,
        &k.memory_budget,
        &k.max_registers,
        &k.spills,
        &k.fp64,
        *suite_limits,
    );
    let decl = complete.then(|| KernelDecl {
        launches: decls,
        scratch_lens,
        ..KernelDecl::default()
    });
    let kernel = Kernel {
        name,
        entries: launches.iter().map(|l| l.entry.get_ref().clone()).collect(),
        source: source.map_or(0, |s| s.0),
        reference: k.reference.as_ref().is_some_and(|r| *r.get_ref()),
        scratch,
        limits,
    };
    (kernel, decl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::buffer_tables::buffer_tables;
    use crate::suite::ctx::tests::{messages, parsed};
    use crate::suite::suite_table::suite_table;

    const HEAD: &str = "[suite]\nname = \"s\"\nsource = \"saxpy/saxpy.cu\"\n\
        [[buffer]]\nname = \"x\"\ntype = \"f32\"\nlen = 4\ninit = { constant = 1.0 }\n\
        [[buffer]]\nname = \"y\"\ntype = \"f32\"\nlen = 4\nrole = \"inout\"\ninit = { constant = 1.0 }\n";

    fn read(kernels: &str) -> (Kernels, Vec<String>) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites");
        let (raw, text) = parsed(&format!("{HEAD}{kernels}"));
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let mut table = suite_table(&mut ctx, &dir, raw.suite.get_ref());
        let buffers = buffer_tables(&mut ctx, &dir, &raw.buffer, &[], 0);
        let k = kernel_tables(&mut ctx, &dir, &raw, &mut table, &buffers, &[]);
        (k, messages(&ctx))
    }

    #[test]
    fn kernels_with_their_launches_and_the_reference() {
        let (k, m) = read(
            "[[kernel]]\nname = \"naive\"\nentry = \"saxpy\"\nreference = true\ngrid = [1]\nblock = [4]\nargs = [\"2.0f32\", \"x\", \"y\", \"4i32\"]\n",
        );
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(k.reference, Some(0));
        assert_eq!(k.list[0].entries, ["saxpy"]);
        assert_eq!(k.lines, [15]);
        assert_eq!(k.decls.len(), 1);
    }

    #[test]
    fn two_references_and_none_are_errors() {
        let one = |name: &str, reference: bool| {
            format!("[[kernel]]\nname = \"{name}\"\nentry = \"saxpy\"\nreference = {reference}\ngrid = [1]\nblock = [4]\nargs = [\"2.0f32\", \"x\", \"y\", \"4i32\"]\n")
        };
        let (_, m) = read(&format!("{}{}", one("a", true), one("b", true)));
        assert_eq!(
            m,
            [
                "18:13: kernel `a` and kernel `b` both say `reference = true`: here, and at line 25 (keep one)",
                "25:13: kernel `b` and kernel `a` both say `reference = true` (keep one)"
            ]
        );
        let (_, m) = read(&one("a", false));
        assert!(
            m[0].starts_with("15:1: no kernel has `reference = true`"),
            "{m:?}"
        );
        let (_, m) = read("");
        assert!(
            m[0].starts_with("1:1: the suite declares no kernels"),
            "{m:?}"
        );
    }
}
