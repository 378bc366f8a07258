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
    /// The folders (real paths) a suite may read files from, when the file is loaded as one of
    /// a folder's: its suites folder, and the project's source folders (`crate::project`).
    pub root: Option<Scope>,
    /// The device expressions read (`suite::device`): `None` until `cases::expand` takes the
    /// run's (or a command's, `load_file_on`).
    pub device: Option<crate::device::Attributes>,
}

impl<'a> Ctx<'a> {
    /// A context for the file at `path` holding `text`, with nothing recorded yet.
    pub fn new(path: &'a Path, text: &'a str) -> Ctx<'a> {
        Ctx {
            path,
            text,
            diagnostics: Vec::new(),
            warnings: Vec::new(),
            root: None,
            device: None,
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

    /// Records a name declared twice: an error at each declaration, each naming the other's
    /// line (`what`: `buffer `x``).
    pub fn twice(&mut self, what: &str, first: usize, second: usize, fix: &str) {
        let line = |at: usize| crate::error::line_col(self.text, at).0;
        let (l1, l2) = (line(first), line(second));
        self.error(
            first,
            format!("{what} is declared here and again at line {l2} ({fix})"),
        );
        self.error(
            second,
            format!("{what} is declared again here, first at line {l1} ({fix})"),
        );
    }

    /// Records something that could not be checked; the suite still loads.
    pub fn warn(&mut self, at: usize, message: impl Into<String>) {
        let d = Diagnostic::at(self.path, self.text, at, message);
        if !self.warnings.contains(&d) {
            self.warnings.push(d);
        }
    }
}

/// The element type named at `raw`; an unknown name is an error listing the types, with the
/// one meant for a misspelling or a C type's name (`float` is `f32`).
pub(super) fn element_type(ctx: &mut Ctx, raw: &Spanned<String>) -> Option<DType> {
    let name = raw.get_ref();
    let t = DType::parse(name);
    if t.is_none() {
        let c_name = match name.trim() {
            "float" => Some("f32"),
            "double" => Some("f64"),
            "half" | "__half" => Some("f16"),
            "bfloat16" | "__nv_bfloat16" => Some("bf16"),
            "int" | "int32_t" => Some("i32"),
            "unsigned" | "unsigned int" | "uint32_t" => Some("u32"),
            "long long" | "int64_t" => Some("i64"),
            "unsigned char" | "uint8_t" | "char" => Some("u8"),
            _ => None,
        };
        let names = crate::dtype::ALL.map(|t| t.name());
        let hint = c_name.map_or_else(
            || crate::suggest::did_you_mean(name, names.iter().copied()),
            |k| format!(" (did you mean `{k}`?)"),
        );
        ctx.error(
            raw.span().start,
            format!(
                "unknown type `{name}`{hint} (use one of {})",
                names.join(", ")
            ),
        );
    }
    t
}

/// The value of `word` (written at `at`) among `choices`; another word is an error there,
/// `unknown {what} `word``, with the closest choice and what to write (`fix`).
pub(super) fn choice<T: Copy>(
    ctx: &mut Ctx,
    at: usize,
    word: &str,
    choices: &[(&str, T)],
    what: &str,
    fix: &str,
) -> Option<T> {
    if let Some((_, value)) = choices.iter().find(|(w, _)| *w == word) {
        return Some(*value);
    }
    let hint = crate::suggest::did_you_mean(word, choices.iter().map(|(w, _)| *w));
    ctx.error(at, format!("unknown {what} `{word}`{hint} ({fix})"));
    None
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
                    let device = crate::device::Attributes::NAMES;
                    let sizes_only: Vec<&String> = sizes
                        .iter()
                        .filter(|s| !device.contains(&s.as_str()))
                        .collect();
                    let known = if sizes_only.is_empty() {
                        "the suite declares no sizes: add `sizes = { ... }` to [suite]".to_string()
                    } else {
                        format!("sizes: {}", crate::suggest::quoted(sizes_only, ", "))
                    };
                    let hint = crate::suggest::did_you_mean(name, sizes.iter().map(String::as_str));
                    ctx.error(
                        base + offset,
                        format!("unknown size `{name}`{hint} ({known})"),
                    );
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
    let p = clean(&dir.join(name.get_ref()));
    if p.is_file() {
        inside_root(ctx, name.span().start, &p, what, name.get_ref()).then_some(p)
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

/// `p` with `a/../` and `./` removed as text, so `perf/../kernels/k.cu` reads `kernels/k.cu` in
/// messages (a `..` with nothing before it to remove stays).
pub fn clean(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// The folders a suite of a suites folder may read files from: the folder itself and, with a
/// project file, the project's source folders. Files outside them would be missing where the
/// project goes: the CI bundle, paired mode's base, a clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The suites folder, its real path.
    pub suites: PathBuf,
    /// The project's source folders (real paths); empty without a project file.
    pub sources: Vec<PathBuf>,
    /// The architecture a CUBIN source must run on, when the command knows it before any GPU
    /// (`lint`: `KERNELGATE_ARCH`); `None`: checked when the code is loaded for the GPU.
    pub arch: Option<String>,
}

impl Scope {
    /// The scope of the suites folder `dir`: with `project`'s source folders when `dir` is
    /// inside that project.
    pub fn of(dir: &Path, project: Option<&crate::project::Project>) -> Option<Scope> {
        let suites = dir.canonicalize().ok()?;
        let sources = project
            .filter(|p| suites.starts_with(&p.real_root))
            .map(|p| p.sources.clone())
            .unwrap_or_default();
        Some(Scope {
            suites,
            sources,
            arch: None,
        })
    }
}

/// Whether `p` (which exists) is inside the scope's folders, when there is a scope; an error at
/// `at` when it is not.
pub(super) fn inside_root(ctx: &mut Ctx, at: usize, p: &Path, what: &str, written: &str) -> bool {
    let Some(scope) = &ctx.root else {
        return true;
    };
    let real = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if real.starts_with(&scope.suites) || scope.sources.iter().any(|s| real.starts_with(s)) {
        return true;
    }
    let message = if scope.sources.is_empty() {
        format!(
            "{what} `{written}` is outside the suites folder `{}` (it is `{}`): without a project file a suite reads only files inside its folder, which is what the CI bundle and paired mode's base carry (write a `kernelgate.toml` at the repository's root — `kernelgate init` does — and suites may read files anywhere in the repository, docs/project.md)",
            scope.suites.display(),
            real.display()
        )
    } else {
        let folders = crate::suggest::quoted(scope.sources.iter().map(|s| s.display()), ", ");
        format!(
            "{what} `{written}` is outside the project's source folders {folders} and the suites folder (it is `{}`): add its folder to `sources` in `kernelgate.toml`",
            real.display()
        )
    };
    ctx.error(at, message);
    false
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
