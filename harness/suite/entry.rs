//! `check_entry`: a launch's `entry` and `args` against the CUDA source, read as tokens. The
//! entry must name one `__global__` function; a template entry names an instantiation whose
//! type arguments meet the buffers; pointers get buffers of their element type, `const`
//! pointees never get outputs, `__restrict__` pointers are not aliased, scalars get values of
//! their type. A parameter whose type the tokens do not tell (a typedef, alias or macro) is left
//! to the compiler (`resolved`); what cannot be checked becomes a warning, never a silent pass.
//! A launch may read through `const T*` an output an earlier launch of its kernel wrote.

use super::args::{ArgSpec, ScalarType};
use super::ctx::Ctx;
use super::decls::LaunchDecl;
use super::schema::RawLaunch;
use super::signature::{self, Lookup, Param, Signature};
use super::tokens::Unreadable;
use super::{Buffer, Scratch, Source};
use crate::dtype::DType;
use std::collections::BTreeMap;

/// What the args of one launch refer to, by buffer index: the suite's buffers, then the
/// kernel's scratch buffers.
pub(super) struct Targets<'a> {
    pub buffers: &'a [Buffer],
    pub scratch: &'a [Scratch],
}

impl Targets<'_> {
    /// Buffer `b` as an argument: an output counts as one only until a launch writes it.
    fn held(&self, b: usize, found: &Found) -> Held {
        let (name, element, output) = match self.buffers.get(b) {
            Some(buffer) => (&buffer.name, buffer.dtype, buffer.role.is_output()),
            None => {
                let scratch = &self.scratch[b - self.buffers.len()];
                (&scratch.name, scratch.dtype, false)
            }
        };
        Held {
            name: name.clone(),
            element,
            unwritten_output: output && !found.written.contains(&b),
        }
    }
}

/// What one kernel's launches have shown so far: the buffers they write (through a pointer not
/// to `const`), and the arguments left to the compiler.
#[derive(Default)]
pub(super) struct Found {
    pub written: Vec<usize>,
    pub pending: Vec<Pending>,
}

/// One argument whose parameter type is left to the compiler.
#[derive(Debug)]
pub(super) struct Pending {
    /// The source's index in the suite table.
    pub source: usize,
    /// The function, as C++ names it (`k`, `f<float>`, `f<>`).
    pub entry: String,
    /// How many parameters the source shows.
    pub params: usize,
    /// This parameter's index.
    pub index: usize,
    /// The parameter, as the tokens read it.
    pub param: Param,
    /// The argument, and where it is written.
    pub arg: ArgSpec,
    pub at: usize,
    /// For a buffer: its name, element type and whether it is an output not yet written.
    pub held: Option<Held>,
    /// `` `k` (file.cu:12) ``, for messages.
    pub where_: String,
}

/// A buffer passed as an argument: its name, element type, and whether it is an output no
/// earlier launch of the kernel wrote.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub name: String,
    pub element: DType,
    pub unwritten_output: bool,
}

/// How a parameter's type was resolved, for messages: as written, from the entry's template
/// arguments, or by the compiler — each with what it resolved.
pub(super) enum Via<'a> {
    Source,
    Template(&'a str),
    Compiler(&'a str),
}

/// Checks one launch; errors and warnings are recorded in `ctx`.
pub(super) fn check_entry(
    ctx: &mut Ctx,
    (si, source): (usize, &Source),
    l: &RawLaunch,
    decl: &LaunchDecl,
    targets: &Targets,
    found: &mut Found,
) {
    let entry = l.entry.get_ref();
    let at = l.entry.span().start;
    if !source.kind().is_compiled() {
        // PTX: the entry and its `.param` list; a CUBIN: the entry; a fatbin when loaded.
        let spans = (at, l.args.span().start);
        return super::binary::check_launch(ctx, source, entry, spans, &decl.args);
    }
    let (base, targs) = match signature::template_args(entry) {
        Ok(x) => x,
        Err(m) => return ctx.error(at, format!("{m} (write e.g. `scale<float>`)")),
    };
    let Some((sig, file)) = kernel_signature(ctx, source, entry, at) else {
        return;
    };
    let file = file.display();
    let where_ = format!("`{entry}` ({file}:{})", sig.line);
    let Some(bindings) = bind_template(ctx, at, base, &sig, targs.as_deref(), &where_) else {
        return;
    };
    if sig.params.len() != decl.args.len() {
        let list: Vec<&str> = sig.params.iter().map(|p| p.text.as_str()).collect();
        return ctx.error(
            l.args.span().start,
            format!(
                "{} args given, but {where_} takes {}: ({})",
                decl.args.len(),
                sig.params.len(),
                list.join(", ")
            ),
        );
    }
    // How C++ names the function: all-default template arguments are written `f<>`.
    let cxx = match (&sig.template, &targs) {
        (Some(_), None) => format!("{entry}<>"),
        _ => entry.clone(),
    };
    let (mut restricted, mut writes) = (Vec::new(), Vec::new());
    for (i, (param, arg)) in sig.params.iter().zip(&decl.args).enumerate() {
        let resolved = bindings
            .get(&param.base)
            .map_or(param.base.as_str(), |s| s.as_str());
        let mut held = None;
        if let ArgSpec::Buffer(b) = arg.value {
            let h = targets.held(b, found);
            let earlier = restricted.iter().find(|(x, _): &&(usize, bool)| *x == b);
            if earlier.is_some_and(|&(_, r)| r || param.restrict) {
                ctx.error(arg.at, format!("buffer `{}` is passed twice to {where_}, through a `__restrict__` parameter: the kernel may assume they do not overlap (pass another buffer, or drop `__restrict__`)", h.name));
            }
            restricted.push((b, param.restrict));
            // Unknown types are taken as written to: the compiler's check says more.
            if !param.const_pointee || !signature::known(resolved) {
                writes.push(b);
            }
            held = Some(h);
        }
        if !signature::known(resolved) {
            found.pending.push(Pending {
                source: si,
                entry: cxx.clone(),
                params: sig.params.len(),
                index: i,
                param: param.clone(),
                arg: arg.value.clone(),
                at: arg.at,
                held,
                where_: where_.clone(),
            });
            continue;
        }
        let via = match resolved != param.base {
            true => Via::Template(resolved),
            false => Via::Source,
        };
        if let Some(m) = check_arg(param, resolved, via, &arg.value, held.as_ref(), &where_) {
            ctx.error(arg.at, m);
        }
    }
    found.written.extend(writes);
}

/// `entry`'s declaration in `source` or, where the source does not declare it, in the files it
/// includes with quotes (a port includes a repository's kernels where they are): the answer,
/// and the file it was read from.
fn lookup_in(source: &Source, entry: &str) -> (Lookup, std::path::PathBuf) {
    let own = signature::lookup(&source.text, entry);
    if !matches!(own, Lookup::Absent) {
        // Found in the source itself: its headers are not read (this runs for every launch).
        return (own, source.path.clone());
    }
    let files = super::compiler::with_quoted_includes(&source.path, &source.text);
    let found = (files.into_iter().skip(1))
        .map(|(path, text)| (signature::lookup(&text, entry), path))
        .find(|(found, _)| !matches!(found, Lookup::Absent));
    found.unwrap_or((own, source.path.clone()))
}

/// The signature of `entry` (at `at`) in `source` (or a file it includes) and that file, or
/// `None` after an error or a warning that says why it cannot be checked.
fn kernel_signature(
    ctx: &mut Ctx,
    source: &Source,
    entry: &str,
    at: usize,
) -> Option<(Signature, std::path::PathBuf)> {
    let base = signature::base_name(entry);
    let (found, path) = lookup_in(source, entry);
    let file = path.display();
    match found {
        Lookup::Kernel(sig) => Some((sig, path.clone())),
        Lookup::Absent => {
            let names = signature::kernel_names(&source.text);
            let hint = crate::suggest::did_you_mean(base, names.iter().map(String::as_str));
            ctx.error(at, format!("no `__global__` function `{base}` in `{file}`{hint} (check the spelling, or the kernel's `source`; names in comments and strings do not count)"));
            None
        }
        Lookup::NotGlobal { line, what } => {
            ctx.error(at, format!("`{base}` ({file}:{line}) is a {what} function, not a kernel: an entry names a `__global__` function (call the helper from one)"));
            None
        }
        Lookup::Overloaded { lines } => {
            let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            ctx.warn(at, format!("`{base}` is overloaded in `{file}` (lines {}): its arguments are not checked at load time (give each kernel its own name)", lines.join(", ")));
            None
        }
        Lookup::Mentioned { line, in_directive } => {
            let how = if in_directive {
                "on a preprocessor line"
            } else {
                "in a macro use or another form kernelgate cannot read"
            };
            ctx.warn(at, format!("`{base}` appears in `{file}` only {how}, at line {line}: its arguments are not checked at load time (declare it as a plain `__global__` function to have them checked)"));
            None
        }
        Lookup::Unreadable(Unreadable { line, what }) => {
            ctx.warn(at, format!("`{file}` cannot be read as CUDA tokens ({what} at line {line}): `{base}`'s arguments are not checked at load time"));
            None
        }
    }
}

/// Template parameter name -> argument text, after checking the entry's template arguments.
fn bind_template(
    ctx: &mut Ctx,
    at: usize,
    base: &str,
    sig: &Signature,
    targs: Option<&[String]>,
    where_: &str,
) -> Option<BTreeMap<String, String>> {
    match (&sig.template, targs) {
        (None, None) => Some(BTreeMap::new()),
        (None, Some(_)) => {
            ctx.error(
                at,
                format!("{where_} is not a template: write `entry = \"{base}\"`"),
            );
            None
        }
        (Some(tp), None) => {
            if tp.iter().all(|p| p.has_default) {
                return Some(BTreeMap::new());
            }
            let example: Vec<&str> = tp
                .iter()
                .map(|p| if p.is_type { "float" } else { "256" })
                .collect();
            ctx.error(
                at,
                format!(
                    "{where_} is a template: name an instantiation, e.g. `{base}<{}>`",
                    example.join(", ")
                ),
            );
            None
        }
        (Some(tp), Some(args)) => {
            let required = tp.iter().filter(|p| !p.has_default).count();
            if args.len() > tp.len() || args.len() < required {
                let names: Vec<&str> = tp.iter().map(|p| p.name.as_str()).collect();
                ctx.error(
                    at,
                    format!(
                        "{where_} takes {} template argument(s) <{}>, not {}",
                        tp.len(),
                        names.join(", "),
                        args.len()
                    ),
                );
                return None;
            }
            Some(
                tp.iter()
                    .zip(args)
                    .filter(|(p, _)| p.is_type)
                    .map(|(p, a)| (p.name.clone(), a.clone()))
                    .collect(),
            )
        }
    }
}

/// The problem with passing `arg` (`held`, for a buffer) to `param`, whose base type resolves
/// to `resolved` (`via`), if any.
pub(super) fn check_arg(
    param: &Param,
    resolved: &str,
    via: Via,
    arg: &ArgSpec,
    held: Option<&Held>,
    where_: &str,
) -> Option<String> {
    let p = &param.text;
    match (arg, held) {
        (ArgSpec::Buffer(_), Some(h)) if !param.pointer => Some(format!(
            "buffer `{}` is passed where {where_} takes `{p}`, not a pointer",
            h.name
        )),
        (ArgSpec::Buffer(_), Some(h)) => {
            let (name, held) = (&h.name, h.element);
            if let Some(t) = signature::element_type(resolved).filter(|t| *t != held) {
                let c = held.c_type();
                let fix = match via {
                    Via::Source => {
                        format!(" (declare the buffer `type = \"{t}\"` or the parameter `{c}*`)")
                    }
                    Via::Template(r) => format!(" ({} = {r}): instantiate with `{c}`", param.base),
                    Via::Compiler(r) => format!(
                        " (`{}` is `{r}` to the compiler): declare the buffer `type = \"{t}\"`",
                        param.base
                    ),
                };
                return Some(format!("buffer `{name}` holds {held} but parameter `{p}` of {where_} points to {t}{fix}"));
            }
            (param.const_pointee && h.unwritten_output).then(|| {
                format!("output `{name}` is passed to `{p}` of {where_}, whose elements are `const`, and no earlier launch of the kernel writes it: the kernel cannot write its result (drop the `const`, or pass an input)")
            })
        }
        _ if param.pointer => Some(format!(
            "parameter `{p}` of {where_} is a pointer: pass a buffer name"
        )),
        (spec, _) => {
            let t: ScalarType = signature::scalar_type(resolved)?;
            let via = match via {
                Via::Source => String::new(),
                Via::Template(r) => format!(" ({} = {r})", param.base),
                Via::Compiler(r) => format!(" (`{}` is `{r}` to the compiler)", param.base),
            };
            (spec.scalar_type() != Some(t)).then(|| {
                let example = if t.is_int() {
                    format!("`n as {0}` or `1{0}`", t.name())
                } else {
                    format!("`1.0{}`", t.name())
                };
                format!("parameter `{p}` of {where_} is {}{via}: pass a value of that type, e.g. {example}", t.name())
            })
        }
    }
}
