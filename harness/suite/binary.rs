//! `check_launch`: a launch of a kernel from a PTX file checked at load time, as the CUDA
//! signature check does for `.cu` sources — the entry exists, and its `.param` list matches
//! `args` in number, size and kind (pointer or value). A cubin or fatbin holds no parameter
//! list kernelgate reads: a CUBIN is checked for the entry (its `.text.<name>` section); the
//! driver checks the parameters when the module loads.

use super::args::{ArgSpec, ScalarType};
use super::ctx::Ctx;
use super::decls::Located;
use super::{Source, SourceKind};
use crate::device::ptx::{self, PtxParam};

/// Checks one launch of `entry` from `source`; `at` is where the entry name and the args list
/// start in the suite file. Problems are recorded in `ctx`.
pub(super) fn check_launch(
    ctx: &mut Ctx,
    source: &Source,
    entry: &str,
    at: (usize, usize),
    args: &[Located<ArgSpec>],
) {
    if source.kind() == SourceKind::Cubin {
        return cubin_entry(ctx, source, entry, at.0);
    }
    if source.kind() != SourceKind::Ptx {
        return;
    }
    let file = source.path.display();
    let functions = ptx::parse(&source.text);
    let Some(f) = functions.get(entry).filter(|f| f.entry) else {
        let mut entries: Vec<&str> = functions
            .iter()
            .filter(|(_, f)| f.entry)
            .map(|(n, _)| n.as_str())
            .collect();
        entries.sort();
        // A file cut off (a copy stopped early): its braces do not close.
        let (opens, closes) = (
            source.text.matches('{').count(),
            source.text.matches('}').count(),
        );
        if opens != closes {
            return ctx.error(at.0, format!("`{file}` is cut off: it opens {opens} `{{` and closes {closes} (a PTX file ends after its last function's `}}`): write it again"));
        }
        let entries = crate::suggest::joined_or_none(&entries, ", ");
        return ctx.error(at.0, format!("no `.entry {entry}` in `{file}` (its entries: {entries}); a PTX entry is named as in the file, mangled names included"));
    };
    let where_ = format!("`.entry {entry}` ({file})");
    if f.params.len() != args.len() {
        let list: Vec<String> = (f.params.iter())
            .map(|p| format!(".{}[{} B]", p.ty, p.bytes))
            .collect();
        return ctx.error(
            at.1,
            format!(
                "{} args given, but {where_} takes {}: ({})",
                args.len(),
                f.params.len(),
                list.join(", ")
            ),
        );
    }
    for (i, (param, arg)) in f.params.iter().zip(args).enumerate() {
        if let Some(m) = mismatch(param, &arg.value) {
            ctx.error(
                arg.at,
                format!("parameter {i} of {where_} is .{}: {m}", param.ty),
            );
        }
    }
}

/// An error at `at` when the CUBIN `source` has no kernel `entry`: its entries are listed.
fn cubin_entry(ctx: &mut Ctx, source: &Source, entry: &str, at: usize) {
    let Ok(bytes) = std::fs::read(&source.path) else {
        return; // read when the source was; a file gone since is the loader's to say
    };
    let entries = crate::device::binary::cubin_entries(&bytes);
    if !entries.iter().any(|e| e == entry) {
        let file = source.path.display();
        let entries = crate::suggest::joined_or_none(&entries, ", ");
        ctx.error(at, format!("no kernel `{entry}` in `{file}` (its kernels: {entries}); a CUBIN's kernel is named as in the file, mangled names included"));
    }
}

/// Why `arg` cannot be passed as `param`, if it cannot.
fn mismatch(param: &PtxParam, arg: &ArgSpec) -> Option<String> {
    let (bytes, fits): (usize, &[&str]) = match arg.scalar_type() {
        None => (8, &["u64", "b64", "s64"]),
        Some(ScalarType::I32 | ScalarType::U32) => (4, &["s32", "u32", "b32"]),
        Some(ScalarType::I64 | ScalarType::U64) => (8, &["s64", "u64", "b64"]),
        Some(ScalarType::F32) => (4, &["f32", "b32"]),
        Some(ScalarType::F64) => (8, &["f64", "b64"]),
        Some(ScalarType::F16 | ScalarType::Bf16) => (2, &["b16", "f16", "bf16", "b8"]),
    };
    if param.bytes == bytes && fits.contains(&param.ty.as_str()) {
        return None;
    }
    Some(match arg {
        ArgSpec::Buffer(_) => "a buffer is passed as a 64-bit pointer (.u64)".to_string(),
        _ if matches!(param.ty.as_str(), "u64" | "b64" | "s64") => {
            "it takes 8 bytes, a pointer or a 64-bit integer: pass a buffer name, or e.g. `n as i64`"
                .to_string()
        }
        _ => {
            let t = arg.scalar_type().expect("a value");
            format!(
                "a value of type {} ({bytes} bytes) does not fit; pass one of {} bytes, e.g. `n as {}`",
                t.name(),
                param.bytes,
                match param.bytes {
                    8 if param.ty.starts_with('f') => "f64",
                    8 => "i64",
                    2 => "f16",
                    _ if param.ty.starts_with('f') => "f32",
                    _ => "i32",
                }
            )
        }
    })
}
