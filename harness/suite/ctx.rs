//! `Ctx`: where one suite file's diagnostics are collected, and the readers every loading
//! phase shares — element types, names, expressions over the sizes, files beside the suite.

use super::decls::Located;
use super::expr::Expr;
use super::schema::ExprText;
use crate::dtype::DType;
use crate::error::Diagnostic;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Where diagnostics for one file are collected.
pub struct Ctx<'a> {
    pub path: &'a Path,
    pub text: &'a str,
    pub diagnostics: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
}

impl<'a> Ctx<'a> {
    /// A context for the file at `path` holding `text`, with nothing recorded yet.
    pub fn new(path: &'a Path, text: &'a str) -> Ctx<'a> {
        Ctx {
            path,
            text,
            diagnostics: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Records an error; the same message at the same place (one per case, or one per
    /// kernel sharing a suite-wide setting) is recorded once.
    pub fn error(&mut self, at: usize, message: impl Into<String>) {
        let d = Diagnostic::at(self.path, self.text, at, message);
        if !self.diagnostics.contains(&d) {
            self.diagnostics.push(d);
        }
    }

    /// Records something that could not be checked; the suite still loads.
    pub fn warn(&mut self, at: usize, message: impl Into<String>) {
        let d = Diagnostic::at(self.path, self.text, at, message);
        if !self.warnings.contains(&d) {
            self.warnings.push(d);
        }
    }
}

/// The element type named at `raw`; an unknown name is an error listing the types.
pub(super) fn element_type(ctx: &mut Ctx, raw: &Spanned<String>) -> Option<DType> {
    let t = DType::parse(raw.get_ref());
    if t.is_none() {
        ctx.error(
            raw.span().start,
            format!(
                "unknown type `{}` (use one of {})",
                raw.get_ref(),
                crate::dtype::ALL.map(|t| t.name()).join(", ")
            ),
        );
    }
    t
}

/// Whether `s` is a name: a letter or `_`, then letters, digits, `_` or `-`.
pub(super) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses an expression written at `raw`, checking its size names; errors are recorded.
pub(super) fn expr(
    ctx: &mut Ctx,
    raw: &Spanned<ExprText>,
    sizes: &[String],
) -> Option<Located<Expr>> {
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

/// The file `name` beside the suite (in `dir`), or an error saying where it was looked for.
pub(super) fn resolve_file(
    ctx: &mut Ctx,
    dir: &Path,
    name: &Spanned<String>,
    what: &str,
) -> Option<PathBuf> {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::suite::schema::RawFile;

    /// `text` parsed as a suite file (it must be valid TOML of the schema), and the text.
    pub(crate) fn parsed(text: &str) -> (RawFile, String) {
        let raw = toml::from_str(text).unwrap_or_else(|e| panic!("{text}\n{e}"));
        (raw, text.to_string())
    }

    /// The errors recorded, as `line:col: message`.
    pub(crate) fn messages(ctx: &Ctx) -> Vec<String> {
        ctx.diagnostics
            .iter()
            .map(|d| format!("{}:{}: {}", d.line, d.col, d.message))
            .collect()
    }

    #[test]
    fn errors_are_recorded_once_per_place_and_message() {
        let text = "a = 1\nb = 2\n";
        let mut ctx = Ctx::new(Path::new("f.toml"), text);
        ctx.error(6, "twice");
        ctx.error(6, "twice");
        ctx.warn(0, "careful");
        assert_eq!(messages(&ctx), ["2:1: twice"]);
        assert_eq!(ctx.warnings.len(), 1);
        assert!(is_ident("n_2-x") && !is_ident("2n") && !is_ident(""));
    }
}
