//! Phase `buffer_tables`: the `[[buffer]]` tables — each buffer's name, element type, role and
//! `init` (checked against its type), and its length expression over the sizes.

use super::ctx::{choice, element_type, expr, is_ident, Ctx};
use super::decls::{InitBounds, Located};
use super::expr::Expr;
use super::init::parse_init;
use super::schema::RawBuffer;
use super::{Buffer, Init, Role};
use crate::dtype::DType;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The suite's buffers, and what the cases will evaluate for them.
#[derive(Default)]
pub(super) struct Buffers {
    /// The buffers, in declaration order.
    pub list: Vec<Buffer>,
    /// Each buffer's length expression (only when every one parsed).
    pub lens: Vec<Located<Expr>>,
    /// Each buffer's index by name (the first, when a name repeats).
    pub by_name: BTreeMap<String, usize>,
    /// (buffer, element count of its .npy file, where the file was named)
    pub npy_checks: Vec<(usize, usize, usize)>,
    /// Inits with a bound over the sizes, resolved per case.
    pub init_bounds: Vec<InitBounds>,
    /// (buffer, start, step, element type, where the init was written)
    pub iotas: Vec<(usize, f64, f64, DType, usize)>,
}

/// Reads every `[[buffer]]` of the suite file in `dir`; `sizes` are the size names, `suite_at`
/// where `[suite]` is (for "no buffers"). Errors are recorded in `ctx`.
pub(super) fn buffer_tables(
    ctx: &mut Ctx,
    dir: &Path,
    raw: &[Spanned<RawBuffer>],
    sizes: &[String],
    suite_at: usize,
) -> Buffers {
    let mut out = Buffers::default();
    let mut unknown_role = false;
    for rb in raw {
        let b = rb.get_ref();
        let name = b.name.get_ref().clone();
        let first = out
            .by_name
            .get(&name)
            .map(|&i| raw[i].get_ref().name.span().start);
        check_name(ctx, b, first, sizes);
        let dtype = element_type(ctx, &b.dtype).unwrap_or(DType::F32);
        let (role, init) = match role(ctx, b) {
            Some(role) => (role, init(ctx, (dir, sizes), b, role, dtype, &mut out)),
            // An unknown role says nothing about what the buffer needs: no more errors from it
            // (seen: `role = "in-out"` also drew "needs an init" and "no output").
            None => {
                unknown_role = true;
                (Role::Inout, None)
            }
        };
        out.lens.extend(expr(ctx, &b.len, sizes));
        out.by_name.entry(name.clone()).or_insert(out.list.len());
        out.list.push(Buffer {
            name,
            dtype,
            role,
            init,
        });
    }
    if out.list.is_empty() {
        ctx.error(suite_at, "the suite declares no buffers (add `[[buffer]]` tables; kernels need outputs to check)");
    } else if !unknown_role && !out.list.iter().any(|b| b.role.is_output()) {
        ctx.error(
            suite_at,
            "no buffer has role \"output\" or \"inout\": nothing could be checked",
        );
    }
    out
}

/// A buffer's name: a plain identifier, not another buffer's (`first`: where a buffer of that
/// name is declared), not a size's.
fn check_name(ctx: &mut Ctx, b: &RawBuffer, first: Option<usize>, sizes: &[String]) {
    let name = b.name.get_ref();
    let at = b.name.span().start;
    if !is_ident(name) || name.contains('-') {
        ctx.error(
            at,
            format!("buffer name `{name}` must be letters, digits or `_`"),
        );
    } else if let Some(first) = first {
        ctx.twice(&format!("buffer `{name}`"), first, at, "rename one");
    } else if sizes.contains(name) {
        ctx.error(
            at,
            format!("buffer `{name}` has the name of a size (rename one)"),
        );
    }
}

/// `role = "input" | "output" | "inout"`, input when absent; `None` (recorded) when unknown.
fn role(ctx: &mut Ctx, b: &RawBuffer) -> Option<Role> {
    let Some(r) = &b.role else {
        return Some(Role::Input);
    };
    let roles = [
        ("input", Role::Input),
        ("output", Role::Output),
        ("inout", Role::Inout),
    ];
    let fix = "use \"input\", \"output\" or \"inout\"";
    choice(ctx, r.span().start, r.get_ref(), &roles, "role", fix)
}

/// The buffer's `init`: required for what kernels read, refused for outputs (they are
/// poisoned), checked against `dtype`; iotas and .npy lengths noted in `out` for the cases.
fn init(
    ctx: &mut Ctx,
    (dir, sizes): (&Path, &[String]),
    b: &RawBuffer,
    role: Role,
    dtype: DType,
    out: &mut Buffers,
) -> Option<Init> {
    let name = b.name.get_ref();
    let index = out.list.len();
    let init = match (&b.init, role) {
        (Some(i), Role::Output) => {
            ctx.error(i.span().start, format!("output `{name}` is poisoned before every run, so it takes no `init` (remove it, or make the role \"inout\")"));
            None
        }
        (None, Role::Input | Role::Inout) => {
            ctx.error(b.name.span().start, format!("buffer `{name}` is read by kernels, so it needs an `init`, e.g. `init = {{ random = \"uniform\", min = -1.0, max = 1.0 }}`"));
            None
        }
        (None, Role::Output) => None,
        (Some(i), _) => parse_init(
            ctx,
            (dir, sizes),
            i,
            (dtype, index),
            (&mut out.npy_checks, &mut out.init_bounds),
        ),
    };
    let fixed = !out.init_bounds.iter().any(|ib| ib.buffer == index);
    if let (Some(init), Some(raw), true) = (&init, &b.init, fixed) {
        super::values::check_init(ctx, raw.span().start, init, dtype);
        if let Init::Iota { start, step } = *init {
            out.iotas
                .push((index, start, step, dtype, raw.span().start));
        }
    }
    init
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::ctx::tests::{messages, parsed};

    fn read(buffers: &str) -> (Buffers, Vec<String>) {
        let (raw, text) = parsed(&format!("[suite]\nname = \"s\"\n{buffers}"));
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let sizes = ["n".to_string()];
        let b = buffer_tables(&mut ctx, Path::new("."), &raw.buffer, &sizes, 0);
        (b, messages(&ctx))
    }

    #[test]
    fn buffers_in_order_with_roles_inits_and_lengths() {
        let (b, m) = read(
            "[[buffer]]\nname = \"x\"\ntype = \"f32\"\nlen = \"n\"\ninit = { iota = 0.0 }\n\
             [[buffer]]\nname = \"y\"\ntype = \"f32\"\nlen = \"2 * n\"\nrole = \"output\"\n",
        );
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(b.list.len(), 2);
        assert_eq!(
            (b.list[0].role, b.list[1].role),
            (Role::Input, Role::Output)
        );
        assert_eq!(
            b.list[0].init,
            Some(Init::Iota {
                start: 0.0,
                step: 1.0
            })
        );
        assert_eq!(b.list[1].init, None);
        assert_eq!(b.lens.len(), 2);
        assert_eq!(b.by_name["y"], 1);
        assert_eq!(b.iotas.len(), 1);
    }

    #[test]
    fn each_broken_buffer_says_what_to_write() {
        let (_, m) = read(
            "[[buffer]]\nname = \"x\"\ntype = \"f33\"\nlen = \"n\"\n\
             [[buffer]]\nname = \"x\"\ntype = \"f32\"\nlen = \"m\"\nrole = \"out\"\ninit = { constant = 1.0 }\n",
        );
        assert_eq!(m.len(), 6, "{m:?}");
        assert!(m[0].starts_with("5:8: unknown type `f33`"), "{m:?}");
        assert!(
            m[1].starts_with("4:8: buffer `x` is read by kernels, so it needs an `init`"),
            "{m:?}"
        );
        assert!(
            m[2].starts_with("4:8: buffer `x` is declared here and again at line 8"),
            "{m:?}"
        );
        assert!(
            m[3].starts_with("8:8: buffer `x` is declared again here, first at line 4"),
            "{m:?}"
        );
        // An unknown role draws no follow-on errors (an init, no output).
        assert!(m[4].starts_with("11:8: unknown role `out`"), "{m:?}");
        assert!(m[5].starts_with("10:8: unknown size `m`"), "{m:?}");
        let (_, m) = read("");
        assert!(
            m[0].starts_with("1:1: the suite declares no buffers"),
            "{m:?}"
        );
    }
}
