//! `load_file`: reads one suite file, validates every declaration, and expands it into cases.
//! Every problem becomes a `Diagnostic` naming the file and line:column; loading goes on after
//! an error so that one run reports all of them.

use super::cases;
use super::ctx::{element_type, expr, is_ident, resolve_file, Ctx};
use super::decls::{Decls, KernelDecl};
use super::entry::{check_entry, Targets};
use super::kernels::{kernel_limits, launch_decl, launch_views, limits, scratch_decls};
use super::schema::RawFile;
use super::sections::{build_bench, build_check, parse_init};
use super::{Buffer, Init, Kernel, Limits, Role, Source, Suite};
use crate::dtype::DType;
use crate::error::{Diagnostic, LoadError};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

pub use super::discover::discover;
pub use super::kernels::parse_bytes;
pub use super::sections::parse_percent;

/// Loads every suite under `dir`; all problems in all files are reported together, link
/// loops in the folder among them.
pub fn load_dir(dir: &Path) -> Result<Vec<Suite>, LoadError> {
    let found = super::discover::discover_all(dir)?;
    let mut suites: Vec<Suite> = Vec::new();
    let mut diagnostics = found.loops;
    for path in found.files {
        match load_file(&path) {
            Ok(suite) => {
                if let Some(other) = suites.iter().find(|s| s.name == suite.name) {
                    let (line, col) = suite.name_pos;
                    diagnostics.push(Diagnostic {
                        file: path.clone(),
                        line,
                        col,
                        message: format!(
                            "suite `{}` is also defined in `{}` (give each suite its own name)",
                            suite.name,
                            other.path.display()
                        ),
                    });
                } else {
                    suites.push(suite);
                }
            }
            Err(mut d) => diagnostics.append(&mut d),
        }
    }
    if diagnostics.is_empty() {
        Ok(suites)
    } else {
        Err(LoadError { diagnostics })
    }
}

/// Loads and validates one suite file.
pub fn load_file(path: &Path) -> Result<Suite, Vec<Diagnostic>> {
    let bytes = std::fs::read(path).map_err(|e| {
        vec![Diagnostic {
            file: path.to_path_buf(),
            line: 1,
            col: 1,
            message: format!("cannot read the suite file: {e}"),
        }]
    })?;
    load_bytes(path, &bytes)
}

/// Validates `bytes` as the contents of the suite file at `path`; text that is not UTF-8 is
/// an error at the bad byte's line.
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<Suite, Vec<Diagnostic>> {
    let text = super::toml_text::utf8(path, bytes).map_err(|d| vec![d])?;
    load_text(path, text)
}

/// Validates `text` as the contents of the suite file at `path` (which places relative paths).
pub fn load_text(path: &Path, text: &str) -> Result<Suite, Vec<Diagnostic>> {
    let mut ctx = Ctx {
        path,
        text,
        diagnostics: Vec::new(),
        warnings: Vec::new(),
    };
    let raw: RawFile = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            let (at, message) = super::toml_text::locate(text, &e);
            ctx.error(at, message);
            return Err(ctx.diagnostics);
        }
    };
    let suite = build(&mut ctx, raw);
    match suite {
        Some(s) if ctx.diagnostics.is_empty() => Ok(s),
        _ => Err(ctx.diagnostics),
    }
}

/// The index of source `s` in `sources`, reading it on first use.
fn source_index(
    ctx: &mut Ctx,
    dir: &Path,
    sources: &mut Vec<Source>,
    s: &Spanned<String>,
) -> Option<usize> {
    let path = resolve_file(ctx, dir, s, "source")?;
    if let Some(i) = sources.iter().position(|x| x.path == path) {
        return Some(i);
    }
    // A cubin or fatbin is bytes: read (to check it is there), kept as a path.
    let binary = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("cubin" | "fatbin")
    );
    match std::fs::read(&path) {
        Ok(_) if binary => {
            sources.push(Source {
                path,
                text: String::new(),
            });
            Some(sources.len() - 1)
        }
        Ok(bytes) => match super::toml_text::utf8(&path, &bytes) {
            Ok(text) => {
                let text = text.to_string();
                sources.push(Source { path, text });
                Some(sources.len() - 1)
            }
            Err(d) => {
                // Reported at the bad byte in the source, which is where the fix goes.
                ctx.diagnostics.push(d);
                None
            }
        },
        Err(e) => {
            ctx.error(
                s.span().start,
                format!("cannot read `{}`: {e}", path.display()),
            );
            None
        }
    }
}

fn build(ctx: &mut Ctx, raw: RawFile) -> Option<Suite> {
    let dir = ctx.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let suite_at = raw.suite.span().start;
    let rs = raw.suite.into_inner();

    let name = rs.name.get_ref().clone();
    if !is_ident(&name) {
        ctx.error(
            rs.name.span().start,
            format!(
                "suite name `{name}` must be letters, digits, `_` or `-`, starting with a letter"
            ),
        );
    }

    // Sources: the suite's default, then each kernel's own.
    let mut sources: Vec<Source> = Vec::new();
    let default_source = rs
        .source
        .as_ref()
        .and_then(|s| source_index(ctx, &dir, &mut sources, s));

    let mut include_dirs = vec![dir.clone()];
    for inc in &rs.include_dirs {
        let p = dir.join(inc.get_ref());
        if p.is_dir() {
            include_dirs.push(p);
        } else {
            ctx.error(
                inc.span().start,
                format!(
                    "include dir `{}` not found (looked for `{}`)",
                    inc.get_ref(),
                    p.display()
                ),
            );
        }
    }
    super::values::check_options(ctx, &rs.options);
    let options: Vec<String> = rs.options.iter().map(|o| o.get_ref().clone()).collect();

    // Sizes.
    let mut sizes: Vec<(String, Vec<i64>)> = Vec::new();
    let sizes_at = rs
        .sizes
        .as_ref()
        .map(|s| s.span().start)
        .unwrap_or(suite_at);
    if let Some(table) = &rs.sizes {
        for (k, v) in table.get_ref() {
            let values = match v {
                toml::Value::Integer(i) => vec![*i],
                toml::Value::Array(a) => {
                    a.iter().filter_map(|x| x.as_integer()).collect::<Vec<_>>()
                }
                _ => vec![],
            };
            let count = match v {
                toml::Value::Array(a) => a.len(),
                _ => 1,
            };
            if !is_ident(k) || k.contains('-') {
                ctx.error(
                    sizes_at,
                    format!("size name `{k}` must be letters, digits or `_`"),
                );
            } else if values.is_empty() || values.len() != count || values.iter().any(|v| *v < 0) {
                ctx.error(
                    sizes_at,
                    format!("size `{k}` must be a non-negative integer or a non-empty list of them, as in `{k} = [1024, 4096]`"),
                );
            } else {
                sizes.push((k.clone(), values));
            }
        }
    }
    let size_names: Vec<String> = sizes.iter().map(|(k, _)| k.clone()).collect();
    let zip = match rs.sweep.as_ref().map(|s| s.get_ref().as_str()) {
        None | Some("product") => false,
        Some("zip") => {
            if sizes.windows(2).any(|w| w[0].1.len() != w[1].1.len()) {
                ctx.error(
                    sizes_at,
                    "`sweep = \"zip\"` needs every size list to have the same length",
                );
            }
            true
        }
        Some(other) => {
            let at = rs
                .sweep
                .as_ref()
                .map(|s| s.span().start)
                .unwrap_or(suite_at);
            ctx.error(at, format!("unknown sweep `{other}` (write \"product\" for every combination or \"zip\" to pair lists element by element)"));
            false
        }
    };

    // Buffers.
    let mut buffers = Vec::new();
    let mut buffer_lens = Vec::new();
    let mut npy_checks = Vec::new();
    let mut iotas = Vec::new();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    for rb in &raw.buffer {
        let b = rb.get_ref();
        let bname = b.name.get_ref().clone();
        if !is_ident(&bname) || bname.contains('-') {
            ctx.error(
                b.name.span().start,
                format!("buffer name `{bname}` must be letters, digits or `_`"),
            );
        } else if by_name.contains_key(&bname) {
            ctx.error(
                b.name.span().start,
                format!("buffer `{bname}` is declared twice (rename one)"),
            );
        } else if size_names.contains(&bname) {
            ctx.error(
                b.name.span().start,
                format!("buffer `{bname}` has the name of a size (rename one)"),
            );
        }
        let dtype = element_type(ctx, &b.dtype).unwrap_or(DType::F32);
        let role = match b.role.as_ref().map(|r| r.get_ref().as_str()) {
            None | Some("input") => Role::Input,
            Some("output") => Role::Output,
            Some("inout") => Role::Inout,
            Some(other) => {
                let at = b
                    .role
                    .as_ref()
                    .map(|r| r.span().start)
                    .unwrap_or(rb.span().start);
                ctx.error(
                    at,
                    format!("unknown role `{other}` (use \"input\", \"output\" or \"inout\")"),
                );
                Role::Input
            }
        };
        let init = match (&b.init, role) {
            (Some(i), Role::Output) => {
                ctx.error(i.span().start, format!("output `{bname}` is poisoned before every run, so it takes no `init` (remove it, or make the role \"inout\")"));
                None
            }
            (None, Role::Input | Role::Inout) => {
                ctx.error(b.name.span().start, format!("buffer `{bname}` is read by kernels, so it needs an `init`, e.g. `init = {{ random = \"uniform\", min = -1.0, max = 1.0 }}`"));
                None
            }
            (None, Role::Output) => None,
            (Some(i), _) => parse_init(ctx, &dir, i, dtype, buffers.len(), &mut npy_checks),
        };
        if let (Some(init), Some(raw)) = (&init, &b.init) {
            super::values::check_init(ctx, raw.span().start, init, dtype);
            if let Init::Iota { start, step } = *init {
                iotas.push((buffers.len(), start, step, dtype, raw.span().start));
            }
        }
        if let Some(len) = expr(ctx, &b.len, &size_names) {
            buffer_lens.push(len);
        }
        by_name.entry(bname.clone()).or_insert(buffers.len());
        buffers.push(Buffer {
            name: bname,
            dtype,
            role,
            init,
        });
    }
    if buffers.is_empty() {
        ctx.error(suite_at, "the suite declares no buffers (add `[[buffer]]` tables; kernels need outputs to check)");
    } else if !buffers.iter().any(|b| b.role.is_output()) {
        ctx.error(
            suite_at,
            "no buffer has role \"output\" or \"inout\": nothing could be checked",
        );
    }

    let mut suite_limits = limits(
        ctx,
        &rs.memory_budget,
        &rs.max_registers,
        &rs.spills,
        Limits::default(),
    );
    suite_limits.forbid_fp64 = super::kernels::fp64_policy(ctx, &rs.fp64, false);

    // Kernels.
    let mut kernels = Vec::new();
    let mut kernel_decls = Vec::new();
    let mut kernel_lines = Vec::new();
    let mut reference = None;
    for rk in &raw.kernel {
        let k = rk.get_ref();
        let kname = k.name.get_ref().clone();
        if !is_ident(&kname) {
            ctx.error(
                k.name.span().start,
                format!("kernel name `{kname}` must be letters, digits, `_` or `-`"),
            );
        } else if kernels.iter().any(|x: &Kernel| x.name == kname) {
            ctx.error(
                k.name.span().start,
                format!("kernel `{kname}` is declared twice (rename one)"),
            );
        }
        if k.reference {
            if let Some(r) = reference {
                let first: &Kernel = &kernels[r];
                ctx.error(
                    rk.span().start,
                    format!(
                        "kernel `{kname}` and kernel `{}` both say `reference = true` (keep one)",
                        first.name
                    ),
                );
            } else {
                reference = Some(kernels.len());
            }
        }
        let source = match (&k.source, default_source) {
            (Some(s), _) => source_index(ctx, &dir, &mut sources, s),
            (None, Some(d)) => Some(d),
            (None, None) => {
                if rs.source.is_none() {
                    ctx.error(rk.span().start, format!("kernel `{kname}` has no source (add `source = \"file.cu\"` to it or to [suite])"));
                }
                None
            }
        };
        let launches = launch_views(ctx, k, rk.span().start);
        let (scratch, scratch_lens) = scratch_decls(ctx, k, &by_name, &size_names);
        // Args may name the suite's buffers and this kernel's scratch buffers.
        let mut names = by_name.clone();
        for (j, sc) in scratch.iter().enumerate() {
            names.insert(sc.name.clone(), buffers.len() + j);
        }
        let elements: Vec<DType> = buffers
            .iter()
            .map(|b| b.dtype)
            .chain(scratch.iter().map(|s| s.dtype))
            .collect();
        let outputs: Vec<bool> = buffers.iter().map(|b| b.role.is_output()).collect();
        let targets = Targets {
            names: &names,
            elements: &elements,
            outputs: &outputs,
        };
        let mut decls = Vec::new();
        for l in &launches {
            let decl = launch_decl(ctx, l, &names, &size_names);
            if let (Some(si), Some(decl)) = (source, &decl) {
                check_entry(ctx, &sources[si], l, decl, &targets);
            }
            decls.extend(decl);
        }
        if decls.len() == launches.len() && !launches.is_empty() {
            super::values::outputs_written(ctx, &kname, rk.span().start, &buffers, &decls);
        }
        let limits = kernel_limits(ctx, k, &suite_limits);
        let scratch_types: Vec<DType> = scratch.iter().map(|s| s.dtype).collect();
        kernel_lines.push(crate::error::line_col(ctx.text, rk.span().start).0);
        kernels.push(Kernel {
            name: kname,
            entries: launches.iter().map(|l| l.entry.get_ref().clone()).collect(),
            source: source.unwrap_or(0),
            reference: k.reference,
            scratch,
            limits,
        });
        let budget_at = k.memory_budget.as_ref().or(rs.memory_budget.as_ref());
        let decl = (decls.len() == launches.len() && !launches.is_empty()).then_some(KernelDecl {
            launches: decls,
            scratch_lens,
            scratch_types,
            max_registers: limits.max_registers,
            budget: limits.memory_budget.zip(budget_at.map(|b| b.span().start)),
        });
        kernel_decls.extend(decl);
    }
    if kernels.is_empty() {
        ctx.error(
            suite_at,
            "the suite declares no kernels (add `[[kernel]]` tables, one with `reference = true`)",
        );
    } else if reference.is_none() {
        ctx.error(
            raw.kernel[0].span().start,
            "no kernel has `reference = true` (mark the simplest, trusted kernel: the others are checked and timed against it)",
        );
    }

    let check = build_check(
        ctx,
        raw.check.as_ref(),
        &buffers,
        &by_name,
        &dir,
        &mut npy_checks,
    );
    let (bench, bytes, flops) = build_bench(ctx, raw.bench.as_ref(), &size_names);

    if !ctx.diagnostics.is_empty() {
        return None;
    }
    let decls = Decls {
        sizes,
        zip,
        sizes_at,
        buffer_lens,
        kernels: kernel_decls,
        bytes,
        flops,
        npy_checks,
        iotas,
        buffer_types: buffers.iter().map(|b| b.dtype).collect(),
    };
    let cases = cases::expand(ctx, &decls);
    Some(Suite {
        name,
        name_pos: crate::error::line_col(ctx.text, rs.name.span().start),
        warnings: std::mem::take(&mut ctx.warnings),
        path: ctx.path.to_path_buf(),
        kernel_lines,
        sources,
        include_dirs,
        options,
        buffers,
        kernels,
        reference: reference?,
        cases,
        check,
        bench,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_percentages() {
        assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
        assert_eq!(parse_bytes("1.5 GB"), Some(1_500_000_000));
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("12 KB"), Some(12_000));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("-1 MiB"), None);
        assert_eq!(parse_bytes("3 parsecs"), None);
        assert_eq!(parse_percent("3%"), Some(0.03));
        assert_eq!(parse_percent(" 0.5 % "), Some(0.005));
        assert_eq!(parse_percent("3"), None);
    }
}
