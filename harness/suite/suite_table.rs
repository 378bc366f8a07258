//! Phase `suite_table`: the `[suite]` table — the suite's name, its default source (read once,
//! as every source), include folders and NVRTC options. The sizes and sweep of the same table
//! are the next phase (`sweep.rs`).

use super::ctx::{is_ident, resolve_file, Ctx};
use super::schema::RawSuite;
use super::Source;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// What `[suite]` says about the suite's name and how to compile it, checked.
pub(super) struct SuiteTable {
    /// The suite's name.
    pub name: String,
    /// The sources read so far (the default one); kernels add theirs.
    pub sources: Vec<Source>,
    /// The index of `source = ...` in `sources`, when given and readable.
    pub default_source: Option<usize>,
    /// `-I` folders: the suite's own first.
    pub include_dirs: Vec<PathBuf>,
    /// NVRTC options.
    pub options: Vec<String>,
}

/// Reads `[suite]` (but its sizes) of the suite file in `dir`; errors are recorded in `ctx`.
pub(super) fn suite_table(ctx: &mut Ctx, dir: &Path, rs: &RawSuite) -> SuiteTable {
    let name = rs.name.get_ref().clone();
    if !is_ident(&name) {
        ctx.error(
            rs.name.span().start,
            format!(
                "suite name `{name}` must be letters, digits, `_` or `-`, starting with a letter"
            ),
        );
    }
    let mut sources: Vec<Source> = Vec::new();
    let default_source = rs
        .source
        .as_ref()
        .and_then(|s| source_index(ctx, dir, &mut sources, s));
    let mut include_dirs = vec![dir.to_path_buf()];
    for inc in &rs.include_dirs {
        let p = dir.join(inc.get_ref());
        if p.is_dir() {
            if super::ctx::inside_root(ctx, inc.span().start, &p, "include dir", inc.get_ref()) {
                include_dirs.push(p);
            }
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
    SuiteTable {
        name,
        sources,
        default_source,
        include_dirs,
        options: rs.options.iter().map(|o| o.get_ref().clone()).collect(),
    }
}

/// The index of source `s` in `sources`, reading it on first use.
pub(super) fn source_index(
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
    let text = match std::fs::read(&path) {
        Ok(bytes) if binary => {
            // What the file is, from the file alone: at its `source` value, with or without NVRTC.
            let target = ctx.root.as_ref().and_then(|r| r.arch.clone());
            let wrong_arch = |bytes: &[u8]| {
                let built = crate::device::binary::cubin_arch(bytes)?;
                let arch = target.as_deref()?;
                let target = format!("the target {arch} (KERNELGATE_ARCH)");
                crate::device::binary::cubin_target_problem(built, arch, &target)
            };
            let cubin = path.extension().is_some_and(|e| e == "cubin");
            let problem = crate::device::binary::file_problem(&path, &bytes)
                .or_else(|| cubin.then(|| wrong_arch(&bytes)).flatten());
            if let Some(problem) = problem {
                ctx.error(
                    s.span().start,
                    format!("source `{}`: {problem}", s.get_ref()),
                );
                return None;
            }
            String::new()
        }
        Ok(bytes) => match super::toml_text::utf8(&path, &bytes) {
            Ok(text) => text.to_string(),
            Err(d) => {
                // Reported at the bad byte in the source, which is where the fix goes.
                ctx.diagnostics.push(d);
                return None;
            }
        },
        Err(e) => {
            ctx.error(
                s.span().start,
                format!("cannot read `{}`: {e}", path.display()),
            );
            return None;
        }
    };
    sources.push(Source {
        path,
        text,
        ..Source::default()
    });
    Some(sources.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::ctx::tests::{messages, parsed};

    #[test]
    fn the_name_the_default_source_and_the_folders() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites");
        let (raw, text) = parsed(
            "[suite]\nname = \"s\"\nsource = \"saxpy/saxpy.cu\"\noptions = [\"-use_fast_math\"]\n",
        );
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let t = suite_table(&mut ctx, &dir, raw.suite.get_ref());
        assert!(ctx.diagnostics.is_empty(), "{:?}", ctx.diagnostics);
        assert_eq!(t.name, "s");
        assert_eq!(t.default_source, Some(0));
        assert!(t.sources[0].text.contains("saxpy"));
        assert_eq!(t.include_dirs, vec![dir]);
        assert_eq!(t.options, ["-use_fast_math"]);
    }

    #[test]
    fn a_bad_name_a_missing_source_and_folder_are_each_an_error() {
        let (raw, text) = parsed(
            "[suite]\nname = \"9 lives\"\nsource = \"gone.cu\"\ninclude_dirs = [\"nowhere\"]\n",
        );
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let t = suite_table(&mut ctx, Path::new("/nonexistent"), raw.suite.get_ref());
        assert_eq!(t.default_source, None);
        let m = messages(&ctx);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(
            m[0].starts_with("2:8: suite name `9 lives` must be"),
            "{m:?}"
        );
        assert!(
            m[1].starts_with("3:10: source `gone.cu` not found"),
            "{m:?}"
        );
        assert!(
            m[2].starts_with("4:17: include dir `nowhere` not found"),
            "{m:?}"
        );
    }
}
