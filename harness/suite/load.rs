//! `load_file`: reads one suite file, validates every declaration, and expands it into cases.
//! Every problem becomes a `Diagnostic` naming the file and line:column; loading goes on after
//! an error so that one run reports all of them.

use super::args::{self, ArgSpec};
use super::cases::{self, Decls, KernelDecl, LaunchDecl, Located};
use super::expr::Expr;
use super::schema::{ExprText, RawFile, RawInit, RawKernel};
use super::signature::{self, ParamKind};
use super::{Bench, Buffer, Check, Init, Kernel, Limits, Role, Scratch, Source, Suite, Tolerance};
use crate::dtype::DType;
use crate::error::{Diagnostic, LoadError};
use crate::npy;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Defaults, documented in the README.
pub const DEFAULT_TRIALS: u32 = 3;
/// Seed of the first input set.
pub const DEFAULT_SEED: u64 = 0x5EED;
/// Samples always taken per kernel.
pub const DEFAULT_MIN_SAMPLES: usize = 10;
/// Samples never exceeded per kernel.
pub const DEFAULT_MAX_SAMPLES: usize = 2000;
/// Sampling time floor per trial.
pub const DEFAULT_MIN_TIME_MS: u64 = 10;
/// Sampling time cap per trial.
pub const DEFAULT_MAX_TIME_MS: u64 = 1000;
/// Target relative half-width of the median's 95% interval.
pub const DEFAULT_PRECISION: f64 = 0.01;
/// The smallest slowdown that fails a trial: changes smaller than 3% are not regressions.
pub const DEFAULT_MAX_SLOWDOWN: f64 = 0.03;

/// Where diagnostics for one file are collected.
pub(super) struct Ctx<'a> {
    pub path: &'a Path,
    pub text: &'a str,
    pub diagnostics: Vec<Diagnostic>,
}

impl Ctx<'_> {
    pub fn error(&mut self, at: usize, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::at(self.path, self.text, at, message));
    }
}

/// Every `.toml` file under `dir`, recursively, sorted.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let fail = |message: String| LoadError {
        diagnostics: vec![Diagnostic {
            file: dir.to_path_buf(),
            line: 1,
            col: 1,
            message,
        }],
    };
    if !dir.is_dir() {
        return Err(fail(format!(
            "the suites folder `{}` does not exist (run from the project root, or set KERNELGATE_SUITES)",
            dir.display()
        )));
    }
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d)
            .map_err(|e| fail(format!("cannot list `{}`: {e}", d.display())))?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Loads every suite under `dir`; all problems in all files are reported together.
pub fn load_dir(dir: &Path) -> Result<Vec<Suite>, LoadError> {
    let mut suites: Vec<Suite> = Vec::new();
    let mut diagnostics = Vec::new();
    for path in discover(dir)? {
        match load_file(&path) {
            Ok(suite) => {
                if let Some(other) = suites.iter().find(|s| s.name == suite.name) {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let at = text.find("name").unwrap_or(0);
                    diagnostics.push(Diagnostic::at(
                        &path,
                        &text,
                        at,
                        format!(
                            "suite `{}` is also defined in `{}` (give each suite its own name)",
                            suite.name,
                            other.path.display()
                        ),
                    ));
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
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic {
            file: path.to_path_buf(),
            line: 1,
            col: 1,
            message: format!("cannot read the suite file: {e}"),
        }]
    })?;
    load_text(path, &text)
}

/// Validates `text` as the contents of the suite file at `path` (which places relative paths).
pub fn load_text(path: &Path, text: &str) -> Result<Suite, Vec<Diagnostic>> {
    let mut ctx = Ctx {
        path,
        text,
        diagnostics: Vec::new(),
    };
    let raw: RawFile = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            let at = e.span().map(|s| s.start).unwrap_or(0);
            let mut message = e.message().trim().to_string();
            if message.contains("missing field `suite`") {
                message.push_str(" (start the file with a `[suite]` table holding `name`)");
            }
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

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses an expression written at `raw`, checking its size names; errors are recorded.
fn expr(ctx: &mut Ctx, raw: &Spanned<ExprText>, sizes: &[String]) -> Option<Located<Expr>> {
    let base = raw.span().start + raw.get_ref().quoted as usize;
    match Expr::parse(&raw.get_ref().text) {
        Ok(e) => {
            let mut ok = true;
            for (name, offset) in e.names() {
                if !sizes.iter().any(|s| s == name) {
                    let known = if sizes.is_empty() {
                        "the suite declares no sizes: add `sizes = { ... }` to [suite]".to_string()
                    } else {
                        format!(
                            "sizes: {}",
                            sizes
                                .iter()
                                .map(|s| format!("`{s}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    ctx.error(base + offset, format!("unknown size `{name}` ({known})"));
                    ok = false;
                }
            }
            ok.then_some(Located { value: e, at: base })
        }
        Err(e) => {
            ctx.error(base + e.offset, format!("bad expression: {}", e.message));
            None
        }
    }
}

fn resolve_file(ctx: &mut Ctx, dir: &Path, name: &Spanned<String>, what: &str) -> Option<PathBuf> {
    let p = dir.join(name.get_ref());
    if p.is_file() {
        Some(p)
    } else {
        ctx.error(
            name.span().start,
            format!(
                "{what} `{}` not found (looked for `{}`; paths are relative to the suite file)",
                name.get_ref(),
                p.display()
            ),
        );
        None
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
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            sources.push(Source { path, text });
            Some(sources.len() - 1)
        }
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
        let dtype = DType::parse(b.dtype.get_ref()).unwrap_or_else(|| {
            ctx.error(
                b.dtype.span().start,
                format!(
                    "unknown type `{}` (use one of {})",
                    b.dtype.get_ref(),
                    crate::dtype::ALL.map(|t| t.name()).join(", ")
                ),
            );
            DType::F32
        });
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

    let suite_limits = limits(
        ctx,
        &rs.memory_budget,
        &rs.max_registers,
        &rs.spills,
        Limits::default(),
    );

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
        let mut decls = Vec::new();
        for l in &launches {
            let decl = launch_decl(ctx, l, &names, &size_names);
            if let (Some(si), Some(decl)) = (source, &decl) {
                check_signature(ctx, &sources[si], l, decl, &elements, &names);
            }
            decls.extend(decl);
        }
        let limits = kernel_limits(ctx, k, &suite_limits);
        kernel_lines.push(crate::error::line_col(ctx.text, rk.span().start).0);
        kernels.push(Kernel {
            name: kname,
            entries: launches.iter().map(|l| l.entry.get_ref().clone()).collect(),
            source: source.unwrap_or(0),
            reference: k.reference,
            scratch,
            limits,
        });
        let decl = (decls.len() == launches.len() && !launches.is_empty()).then_some(KernelDecl {
            launches: decls,
            scratch_lens,
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
    };
    let cases = cases::expand(ctx, &decls);
    Some(Suite {
        name,
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

fn parse_init(
    ctx: &mut Ctx,
    dir: &Path,
    raw: &Spanned<RawInit>,
    dtype: DType,
    buffer: usize,
    npy_checks: &mut Vec<(usize, usize, usize)>,
) -> Option<Init> {
    let at = raw.span().start;
    let i = raw.get_ref();
    let given = [
        i.random.is_some(),
        i.constant.is_some(),
        i.iota.is_some(),
        i.npy.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        ctx.error(at, "an init takes exactly one of `random`, `constant`, `iota` or `npy`, e.g. `{ random = \"normal\" }` or `{ constant = 0.0 }`");
        return None;
    }
    let (lo, hi) = dtype.range();
    let in_range = |v: f64| v >= lo && v <= hi;
    let init = if let Some(kind) = &i.random {
        match kind.get_ref().as_str() {
            "uniform" => {
                let (min, max) = (i.min.unwrap_or(0.0), i.max.unwrap_or(1.0));
                if !dtype.is_float() {
                    ctx.error(kind.span().start, format!("`{dtype}` holds integers: write `random = \"int\", min = .., max = ..`"));
                } else if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
                    ctx.error(at, format!("uniform needs min < max (got {min} and {max})"));
                }
                Init::Uniform { min, max }
            }
            "normal" => {
                let (mean, std) = (i.mean.unwrap_or(0.0), i.std.unwrap_or(1.0));
                if !dtype.is_float() {
                    ctx.error(kind.span().start, format!("`{dtype}` holds integers: write `random = \"int\", min = .., max = ..`"));
                } else if std.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    ctx.error(at, format!("normal needs std > 0 (got {std})"));
                }
                Init::Normal { mean, std }
            }
            "int" => {
                let (Some(min), Some(max)) = (i.min, i.max) else {
                    ctx.error(at, "random = \"int\" needs `min` and `max` (both included)");
                    return None;
                };
                if min.fract() != 0.0
                    || max.fract() != 0.0
                    || min > max
                    || !in_range(min)
                    || !in_range(max)
                {
                    ctx.error(at, format!("random = \"int\" needs whole numbers min <= max within `{dtype}` (got {min} and {max})"));
                }
                Init::Integers {
                    min: min as i64,
                    max: max as i64,
                }
            }
            other => {
                ctx.error(
                    kind.span().start,
                    format!(
                        "unknown random kind `{other}` (use \"uniform\", \"normal\" or \"int\")"
                    ),
                );
                return None;
            }
        }
    } else if let Some(c) = i.constant {
        if !in_range(c) || (!dtype.is_float() && c.fract() != 0.0) {
            ctx.error(at, format!("constant {c} does not fit in `{dtype}`"));
        }
        Init::Constant(c)
    } else if let Some(start) = i.iota {
        Init::Iota {
            start,
            step: i.step.unwrap_or(1.0),
        }
    } else {
        let name = i.npy.as_ref()?;
        let path = resolve_file(ctx, dir, name, "npy file")?;
        match npy::read(&path) {
            Ok(a) if a.data.dtype != dtype => {
                ctx.error(name.span().start, format!("`{}` holds {} but the buffer is `{dtype}` (convert it with `.astype(...)` or change the type)", name.get_ref(), a.data.dtype));
            }
            Ok(a) => npy_checks.push((buffer, a.data.len(), name.span().start)),
            Err(e) => ctx.error(name.span().start, format!("`{}`: {e}", name.get_ref())),
        }
        Init::Npy(path)
    };
    let stray = match &init {
        Init::Uniform { .. } => i.mean.is_some() || i.std.is_some() || i.step.is_some(),
        Init::Normal { .. } => i.min.is_some() || i.max.is_some() || i.step.is_some(),
        Init::Integers { .. } => i.mean.is_some() || i.std.is_some() || i.step.is_some(),
        Init::Iota { .. } => {
            i.min.is_some() || i.max.is_some() || i.mean.is_some() || i.std.is_some()
        }
        Init::Constant(_) | Init::Npy(_) => {
            i.min.is_some()
                || i.max.is_some()
                || i.mean.is_some()
                || i.std.is_some()
                || i.step.is_some()
        }
    };
    if stray {
        ctx.error(at, "this init has keys its kind does not use (uniform and int take min/max, normal takes mean/std, iota takes step)");
    }
    Some(init)
}

/// One launch as written: inline in `[[kernel]]` or a `[[kernel.launch]]` table.
pub(super) struct LaunchView<'a> {
    entry: &'a Spanned<String>,
    grid: &'a Spanned<Vec<Spanned<ExprText>>>,
    block: &'a Spanned<Vec<Spanned<ExprText>>>,
    shared: Option<&'a Spanned<ExprText>>,
    args: &'a Spanned<Vec<Spanned<String>>>,
}

/// The launches of a kernel; a kernel takes an inline launch or `[[kernel.launch]]` tables.
fn launch_views<'a>(ctx: &mut Ctx, k: &'a RawKernel, at: usize) -> Vec<LaunchView<'a>> {
    let name = k.name.get_ref();
    let inline = k.entry.is_some()
        || k.grid.is_some()
        || k.block.is_some()
        || k.shared.is_some()
        || k.args.is_some();
    if !k.launch.is_empty() {
        if inline {
            ctx.error(at, format!("kernel `{name}` has both inline `entry`/`grid`/`block`/`args` and `[[kernel.launch]]` tables (keep one form)"));
        }
        return k
            .launch
            .iter()
            .map(|l| {
                let l = l.get_ref();
                LaunchView {
                    entry: &l.entry,
                    grid: &l.grid,
                    block: &l.block,
                    shared: l.shared.as_ref(),
                    args: &l.args,
                }
            })
            .collect();
    }
    match (&k.entry, &k.grid, &k.block, &k.args) {
        (Some(entry), Some(grid), Some(block), Some(args)) => {
            vec![LaunchView {
                entry,
                grid,
                block,
                shared: k.shared.as_ref(),
                args,
            }]
        }
        _ => {
            let missing: Vec<&str> = [
                ("entry", k.entry.is_none()),
                ("grid", k.grid.is_none()),
                ("block", k.block.is_none()),
                ("args", k.args.is_none()),
            ]
            .into_iter()
            .filter(|(_, m)| *m)
            .map(|(n, _)| n)
            .collect();
            ctx.error(
                at,
                format!(
                    "kernel `{name}` needs `{}` (or a sequence of `[[kernel.launch]]` tables)",
                    missing.join("`, `")
                ),
            );
            Vec::new()
        }
    }
}

fn scratch_decls(
    ctx: &mut Ctx,
    k: &RawKernel,
    buffers: &BTreeMap<String, usize>,
    sizes: &[String],
) -> (Vec<Scratch>, Vec<Located<Expr>>) {
    let mut scratch: Vec<Scratch> = Vec::new();
    let mut lens = Vec::new();
    for rs in &k.scratch {
        let r = rs.get_ref();
        let name = r.name.get_ref().clone();
        if !is_ident(&name) || name.contains('-') {
            ctx.error(
                r.name.span().start,
                format!("scratch name `{name}` must be letters, digits or `_`"),
            );
        } else if buffers.contains_key(&name)
            || sizes.contains(&name)
            || scratch.iter().any(|s| s.name == name)
        {
            ctx.error(r.name.span().start, format!("scratch `{name}` has the name of a buffer, a size or another scratch (rename it)"));
        }
        let dtype = DType::parse(r.dtype.get_ref()).unwrap_or_else(|| {
            ctx.error(
                r.dtype.span().start,
                format!(
                    "unknown type `{}` (use one of {})",
                    r.dtype.get_ref(),
                    crate::dtype::ALL.map(|t| t.name()).join(", ")
                ),
            );
            DType::U8
        });
        lens.extend(expr(ctx, &r.len, sizes));
        scratch.push(Scratch { name, dtype });
    }
    (scratch, lens)
}

fn launch_decl(
    ctx: &mut Ctx,
    l: &LaunchView,
    names: &BTreeMap<String, usize>,
    sizes: &[String],
) -> Option<LaunchDecl> {
    let mut ok = true;
    let mut dims = |ctx: &mut Ctx, list: &Spanned<Vec<Spanned<ExprText>>>, what: &str| {
        if list.get_ref().is_empty() || list.get_ref().len() > 3 {
            ctx.error(
                list.span().start,
                format!("`{what}` takes 1 to 3 dimensions, as in `{what} = [\"ceil(n / 256)\"]`"),
            );
            ok = false;
        }
        let parsed: Vec<_> = list
            .get_ref()
            .iter()
            .filter_map(|d| expr(ctx, d, sizes))
            .collect();
        ok &= parsed.len() == list.get_ref().len();
        parsed
    };
    let grid = dims(ctx, l.grid, "grid");
    let block = dims(ctx, l.block, "block");
    let shared = match l.shared {
        Some(s) => {
            let e = expr(ctx, s, sizes);
            ok &= e.is_some();
            e
        }
        None => None,
    };
    let mut parsed_args = Vec::new();
    for a in l.args.get_ref() {
        let base = a.span().start + 1;
        match args::parse(a.get_ref(), names, sizes) {
            Ok(spec) => parsed_args.push(Located {
                value: spec,
                at: base,
            }),
            Err(e) => {
                ctx.error(base + e.offset, e.message);
                ok = false;
            }
        }
    }
    ok.then_some(LaunchDecl {
        grid,
        block,
        shared,
        args: parsed_args,
    })
}

/// Checks a launch's args against the entry's parameters in the source, where it can be read.
fn check_signature(
    ctx: &mut Ctx,
    source: &Source,
    l: &LaunchView,
    decl: &LaunchDecl,
    elements: &[DType],
    names: &BTreeMap<String, usize>,
) {
    let entry = l.entry.get_ref();
    let Some(sig) = signature::find(&source.text, entry) else {
        let base = entry.split('<').next().unwrap_or(entry);
        let declared =
            source.text.contains(&format!("{base}(")) || source.text.contains(&format!("{base} ("));
        if !declared {
            ctx.error(
                l.entry.span().start,
                format!(
                    "no function `{base}` in `{}` (check the spelling, or the kernel's `source`)",
                    source.path.display()
                ),
            );
        }
        return;
    };
    let name_of = |i: usize| {
        names
            .iter()
            .find(|(_, v)| **v == i)
            .map(|(k, _)| k.as_str())
            .unwrap_or("?")
    };
    let where_ = format!("`{}` ({}:{})", entry, source.path.display(), sig.line);
    if sig.params.len() != decl.args.len() {
        let list = sig
            .params
            .iter()
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        ctx.error(
            l.args.span().start,
            format!(
                "{} args given, but {where_} takes {}: ({list})",
                decl.args.len(),
                sig.params.len()
            ),
        );
        return;
    }
    for (param, arg) in sig.params.iter().zip(&decl.args) {
        let message = match (&arg.value, param.kind, param.pointer) {
            (ArgSpec::Buffer(b), ParamKind::Elements(t), true) if elements[*b] != t => {
                Some(format!(
                    "buffer `{}` holds {} but parameter `{}` of {where_} points to {t}",
                    name_of(*b),
                    elements[*b],
                    param.text
                ))
            }
            (ArgSpec::Buffer(b), _, false) => Some(format!(
                "buffer `{}` is passed where {where_} takes `{}`, not a pointer",
                name_of(*b),
                param.text
            )),
            (spec, _, true) if !matches!(spec, ArgSpec::Buffer(_)) => Some(format!(
                "parameter `{}` of {where_} is a pointer: pass a buffer name",
                param.text
            )),
            (spec, ParamKind::Scalar(t), false) if spec.scalar_type() != Some(t) => {
                let example = if t.is_int() {
                    format!("`n as {0}` or `1{0}`", t.name())
                } else {
                    format!("`1.0{}`", t.name())
                };
                Some(format!(
                    "parameter `{}` of {where_} is {}: pass a value of that type, e.g. {example}",
                    param.text,
                    t.name()
                ))
            }
            _ => None,
        };
        if let Some(m) = message {
            ctx.error(arg.at, m);
        }
    }
}

/// Parses `"512 MiB"`, `"2 GiB"`, `"1.5 GB"`, `"4096"` (bytes) into bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    let v: f64 = number.parse().ok()?;
    let scale = match unit {
        "" | "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => return None,
    };
    let bytes = v * scale;
    (v.is_finite() && v >= 0.0 && bytes < u64::MAX as f64).then_some(bytes.round() as u64)
}

/// Limits from `memory_budget`, `max_registers` and `spills`, over `base`.
fn limits(
    ctx: &mut Ctx,
    budget: &Option<Spanned<String>>,
    registers: &Option<Spanned<u32>>,
    spills: &Option<Spanned<String>>,
    base: Limits,
) -> Limits {
    let mut out = base;
    if let Some(b) = budget {
        match parse_bytes(b.get_ref()) {
            Some(v) if v > 0 => out.memory_budget = Some(v),
            _ => ctx.error(b.span().start, format!("bad memory_budget `{}` (write e.g. \"512 MiB\", \"2 GiB\" or a number of bytes)", b.get_ref())),
        }
    }
    if let Some(r) = registers {
        if *r.get_ref() == 0 || *r.get_ref() > 255 {
            ctx.error(
                r.span().start,
                "max_registers is between 1 and 255 (registers per thread)",
            );
        }
        out.max_registers = Some(*r.get_ref());
    }
    if let Some(s) = spills {
        match s.get_ref().as_str() {
            "allow" => out.forbid_spills = false,
            "forbid" => out.forbid_spills = true,
            other => ctx.error(
                s.span().start,
                format!("unknown spills `{other}` (write \"forbid\" or \"allow\")"),
            ),
        }
    }
    out
}

fn kernel_limits(ctx: &mut Ctx, k: &RawKernel, suite: &Limits) -> Limits {
    limits(ctx, &k.memory_budget, &k.max_registers, &k.spills, *suite)
}

fn parse_tolerance(ctx: &mut Ctx, v: &Option<Spanned<f64>>, default: f64) -> f64 {
    match v {
        Some(t) if !(t.get_ref().is_finite() && *t.get_ref() >= 0.0) => {
            ctx.error(t.span().start, "tolerances are finite numbers >= 0");
            default
        }
        Some(t) => *t.get_ref(),
        None => default,
    }
}

fn build_check(
    ctx: &mut Ctx,
    raw: Option<&Spanned<super::schema::RawCheck>>,
    buffers: &[Buffer],
    by_name: &BTreeMap<String, usize>,
    dir: &Path,
    npy_checks: &mut Vec<(usize, usize, usize)>,
) -> Check {
    let mut check = Check {
        trials: DEFAULT_TRIALS,
        seed: DEFAULT_SEED,
        tolerances: BTreeMap::new(),
        golden: BTreeMap::new(),
    };
    let rc = raw.map(|r| r.get_ref());
    let (rtol, atol, allow_nan) = rc.map_or((None, None, false), |c| {
        (c.rtol.clone(), c.atol.clone(), c.allow_nan)
    });
    for (i, b) in buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.role.is_output())
    {
        let (dr, da) = b.dtype.default_tolerance();
        let tol = Tolerance {
            rtol: parse_tolerance(ctx, &rtol, dr),
            atol: parse_tolerance(ctx, &atol, da),
            allow_nan,
        };
        check.tolerances.insert(i, tol);
    }
    let Some(rc) = rc else { return check };
    if let Some(t) = &rc.trials {
        if *t.get_ref() == 0 {
            ctx.error(t.span().start, "`trials` must be at least 1");
        }
        check.trials = (*t.get_ref()).max(1);
    }
    check.seed = rc.seed.unwrap_or(DEFAULT_SEED);
    let output_index = |ctx: &mut Ctx, name: &Spanned<String>| -> Option<usize> {
        match by_name.get(name.get_ref()) {
            Some(&i) if buffers[i].role.is_output() => Some(i),
            Some(_) => {
                ctx.error(
                    name.span().start,
                    format!(
                        "`{}` is an input: only outputs are compared",
                        name.get_ref()
                    ),
                );
                None
            }
            None => {
                let outs: Vec<_> = buffers
                    .iter()
                    .filter(|b| b.role.is_output())
                    .map(|b| format!("`{}`", b.name))
                    .collect();
                ctx.error(
                    name.span().start,
                    format!(
                        "no buffer `{}` (outputs: {})",
                        name.get_ref(),
                        outs.join(", ")
                    ),
                );
                None
            }
        }
    };
    for (name, tol) in &rc.output {
        let Some(i) = output_index(ctx, name) else {
            continue;
        };
        let base = check.tolerances[&i];
        let t = tol.get_ref();
        let tol = Tolerance {
            rtol: parse_tolerance(ctx, &t.rtol, base.rtol),
            atol: parse_tolerance(ctx, &t.atol, base.atol),
            allow_nan: t.allow_nan.unwrap_or(base.allow_nan),
        };
        check.tolerances.insert(i, tol);
    }
    for (name, file) in &rc.golden {
        let Some(i) = output_index(ctx, name) else {
            continue;
        };
        let fixed = |b: &Buffer| {
            !matches!(
                b.init,
                Some(Init::Uniform { .. } | Init::Normal { .. } | Init::Integers { .. })
            )
        };
        if let Some(b) = buffers.iter().find(|b| b.role != Role::Output && !fixed(b)) {
            ctx.error(name.span().start, format!("golden outputs need fixed inputs, but `{}` is random (give it `init = {{ npy = \"...\" }}`)", b.name));
        }
        let Some(path) = resolve_file(ctx, dir, file, "golden file") else {
            continue;
        };
        match npy::read(&path) {
            Ok(a) if a.data.dtype != buffers[i].dtype => ctx.error(
                file.span().start,
                format!(
                    "`{}` holds {} but output `{}` is `{}`",
                    file.get_ref(),
                    a.data.dtype,
                    buffers[i].name,
                    buffers[i].dtype
                ),
            ),
            Ok(a) => npy_checks.push((i, a.data.len(), file.span().start)),
            Err(e) => ctx.error(file.span().start, format!("`{}`: {e}", file.get_ref())),
        }
        check.golden.insert(i, path);
    }
    check
}

type BenchParts = (Bench, Option<Located<Expr>>, Option<Located<Expr>>);

fn build_bench(
    ctx: &mut Ctx,
    raw: Option<&Spanned<super::schema::RawBench>>,
    sizes: &[String],
) -> BenchParts {
    let mut bench = Bench {
        l2_flush: true,
        min_samples: DEFAULT_MIN_SAMPLES,
        max_samples: DEFAULT_MAX_SAMPLES,
        min_time_ms: DEFAULT_MIN_TIME_MS,
        max_time_ms: DEFAULT_MAX_TIME_MS,
        precision: DEFAULT_PRECISION,
        max_slowdown: DEFAULT_MAX_SLOWDOWN,
        memory_growth: 0.0,
    };
    let Some(rb) = raw.map(|r| r.get_ref()) else {
        return (bench, None, None);
    };
    bench.l2_flush = rb.l2_flush.unwrap_or(true);
    if let Some(m) = &rb.min_samples {
        bench.min_samples = *m.get_ref();
        if bench.min_samples < 3 {
            ctx.error(m.span().start, "`min_samples` must be at least 3");
        }
    }
    if let Some(m) = &rb.max_samples {
        bench.max_samples = *m.get_ref();
        if bench.max_samples < bench.min_samples {
            ctx.error(
                m.span().start,
                format!(
                    "`max_samples` must be at least `min_samples` ({})",
                    bench.min_samples
                ),
            );
        }
    }
    if let Some(m) = &rb.min_time_ms {
        bench.min_time_ms = *m.get_ref();
    }
    if let Some(m) = &rb.max_time_ms {
        bench.max_time_ms = *m.get_ref();
        if bench.max_time_ms == 0 || bench.max_time_ms < bench.min_time_ms {
            ctx.error(
                m.span().start,
                format!(
                    "`max_time_ms` must be positive and at least `min_time_ms` ({})",
                    bench.min_time_ms
                ),
            );
        }
    }
    if let Some(p) = &rb.precision {
        match parse_percent(p.get_ref()) {
            Some(v) if v > 0.0 && v < 1.0 => bench.precision = v,
            _ => ctx.error(
                p.span().start,
                format!(
                    "bad precision `{}` (write a percentage such as \"0.5%\")",
                    p.get_ref()
                ),
            ),
        }
    }
    if let Some(m) = &rb.max_slowdown {
        match parse_percent(m.get_ref()) {
            Some(v) if v > 0.0 && v < 10.0 => bench.max_slowdown = v,
            _ => ctx.error(
                m.span().start,
                format!(
                    "bad max_slowdown `{}` (write a percentage such as \"3%\")",
                    m.get_ref()
                ),
            ),
        }
    }
    if let Some(m) = &rb.memory_growth {
        match parse_percent(m.get_ref()) {
            Some(v) if v >= 0.0 => bench.memory_growth = v,
            _ => ctx.error(
                m.span().start,
                format!(
                    "bad memory_growth `{}` (write a percentage such as \"0%\" or \"10%\")",
                    m.get_ref()
                ),
            ),
        }
    }
    let bytes = rb.bytes.as_ref().and_then(|b| expr(ctx, b, sizes));
    let flops = rb.flops.as_ref().and_then(|f| expr(ctx, f, sizes));
    (bench, bytes, flops)
}

/// Parses `"2%"` as 0.02.
pub fn parse_percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_suffix('%')?.trim().parse().ok()?;
    v.is_finite().then_some(v / 100.0)
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
