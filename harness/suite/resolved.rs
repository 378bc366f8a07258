//! `check_pending`: the launch arguments whose parameter types the source's tokens do not tell
//! (a typedef, a `using` alias, a macro, `long`, a template argument of such a type), checked
//! against the types the compiler resolves (`device::param_types`, the suite's own options,
//! cached). Where no compiler answers, or the type is none a buffer or scalar has (`float4`, a
//! struct), a warning naming the parameter: never a silent pass.

use super::ctx::Ctx;
use super::entry::{check_arg, Pending, Via};
use super::signature::Param;
use super::suite_table::SuiteTable;
use crate::device::compile::CompileRequest;
use crate::device::param_types::{param_types, ParamType};
use std::collections::BTreeSet;

/// Checks every `pending` argument against the compiler's types, a source at a time; errors
/// and warnings go to `ctx`.
pub(super) fn check_pending(ctx: &mut Ctx, table: &SuiteTable, pending: &[Pending]) {
    for (si, source) in table.sources.iter().enumerate() {
        let mine: Vec<&Pending> = pending.iter().filter(|p| p.source == si).collect();
        if mine.is_empty() {
            continue;
        }
        // One query per function, however many launches name it.
        let mut entries: Vec<(String, usize)> =
            mine.iter().map(|p| (p.entry.clone(), p.params)).collect();
        entries.sort();
        entries.dedup();
        let nvcc = source.nvcc.is_some();
        let answer = match (nvcc, crate::device::nvrtc_missing()) {
            (false, Some(_)) => Err("no NVRTC could be loaded here to ask"),
            _ => {
                let arch = arch(ctx);
                let options = [&table.options[..], &source.defines].concat();
                let req = CompileRequest {
                    path: &source.path,
                    text: &source.text,
                    include_dirs: &table.include_dirs,
                    options: &options,
                    entries: &[],
                    arch: &arch,
                };
                let cache = crate::config::cache_dir();
                match param_types(&req, &entries, nvcc, Some(&cache)) {
                    None => Err("no nvcc, which compiles this source, could be found here to ask"),
                    Some(Err(_)) => {
                        Err("the source does not compile (`kernelgate lint` shows why)")
                    }
                    Some(Ok(types)) => Ok(types),
                }
            }
        };
        match &answer {
            Ok(types) => {
                for p in mine {
                    let e = entries.iter().position(|(e, _)| *e == p.entry).unwrap_or(0);
                    one(ctx, p, types[e][p.index]);
                }
            }
            Err(why) => unasked(ctx, &mine, why),
        }
    }
}

/// One warning per launch, at its first argument left to the compiler, naming each.
fn unasked(ctx: &mut Ctx, mine: &[&Pending], why: &str) {
    // A launch's pending arguments come together, their indices rising.
    for launch in mine.chunk_by(|a, b| a.entry == b.entry && b.index > a.index) {
        let params = crate::suggest::quoted(launch.iter().map(|p| &p.param.text), ", ");
        // Sorted as quoted (`T2` before `T`), as they are shown.
        let types: BTreeSet<String> = launch
            .iter()
            .map(|p| format!("`{}`", p.param.base))
            .collect();
        let types = Vec::from_iter(types).join(", ");
        let (what, them) = match launch.len() {
            1 => ("parameter", "its argument is"),
            _ => ("parameters", "their arguments are"),
        };
        ctx.warn(launch[0].at, format!("{what} {params} of {}: of types ({types}) only the compiler can resolve, and {why}: {them} not checked", launch[0].where_));
    }
}

/// Checks `p` against its compiled type `t` (`None`: the compiled function has fewer
/// parameters than the source shows).
fn one(ctx: &mut Ctx, p: &Pending, t: Option<ParamType>) {
    let (text, where_) = (&p.param.text, &p.where_);
    let Some(t) = t else {
        return ctx.warn(p.at, format!("parameter `{text}` of {where_} is not in the compiled function's parameters (a macro in the list?): its argument is not checked"));
    };
    let name = t.name();
    let element = name.is_some_and(|n| n == "void" || super::signature::element_type(n).is_some());
    let held = p.held.as_ref();
    let param = Param {
        pointer: t.pointer(),
        const_pointee: t.const_pointee(),
        ..p.param.clone()
    };
    let name = match (name, held) {
        // Its elements cannot be checked; whether it may take an output can.
        (_, Some(h)) if t.pointer() && !element => {
            let name = &h.name;
            match check_arg(&param, "void", Via::Source, &p.arg, held, where_) {
                Some(m) => ctx.error(p.at, m),
                None => ctx.warn(p.at, format!("buffer `{name}` is passed to parameter `{text}` of {where_}, which points to a type no buffer type is: its elements are not checked")),
            }
            return;
        }
        (Some(name), _) => name,
        (None, _) => {
            return ctx.warn(p.at, format!("parameter `{text}` of {where_} is of a type no buffer or scalar type is: its argument is not checked"));
        }
    };
    if let Some(m) = check_arg(&param, name, Via::Compiler(name), &p.arg, held, where_) {
        ctx.error(p.at, m);
    }
}

/// The architecture the check compiles for: the command's target where it knows one
/// (`lint`), else `KERNELGATE_ARCH`'s first, else `sm_90`. Types do not depend on it; code the
/// source guards by architecture does.
fn arch(ctx: &Ctx) -> String {
    let root = ctx.root.as_ref().and_then(|r| r.arch.clone());
    root.unwrap_or_else(super::device::target)
}
