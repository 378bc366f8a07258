//! `load_file`: reads one suite file, validates every declaration, and expands it into cases.
//! Every problem becomes a `Diagnostic` naming the file and line:column; loading goes on after
//! an error so that one run reports all of them.
//!
//! The phases, each a function in its own file with its own tests: **parse** (TOML into
//! `RawFile`: unknown keys and bad syntax, `toml_text.rs`), then the declarations, table by
//! table — **`suite_table`** (name, sources, include folders, options), **`sweep`** (sizes),
//! **`buffer_tables`** (buffers and their inits, `init.rs`), **`kernel_tables`** (kernels, their
//! launches checked against the CUDA source in `entry.rs`), **`check_table`** and
//! **`bench_table`** — and last, from a file without errors, **cases** (`cases::expand`:
//! every expression evaluated for every size combination).

use super::bench_table::bench_table;
use super::buffer_tables::buffer_tables;
use super::cases::{self, Decls};
use super::check_table::check_table;
use super::ctx::Ctx;
use super::kernel_tables::kernel_tables;
use super::schema::RawFile;
use super::suite_table::suite_table;
use super::sweep::sweep;
use super::Suite;
use crate::error::{Diagnostic, LoadError};
use std::path::Path;

pub use super::kernels::parse_bytes;

/// Loads every suite under `dir`; all problems in all files are reported together, link
/// loops in the folder among them.
pub fn load_dir(dir: &Path) -> Result<Vec<Suite>, LoadError> {
    load_dir_in(dir, crate::project::current().ok().flatten())
}

/// [`load_dir`] for the suites folder of `project` (paired mode's base reads its own).
pub fn load_dir_in(
    dir: &Path,
    project: Option<&crate::project::Project>,
) -> Result<Vec<Suite>, LoadError> {
    load_dir_scoped(dir, project, None)
}

/// [`load_dir`], with every CUBIN source checked against the target architecture `arch` from
/// the file alone (`lint`, which knows the target before any GPU: `KERNELGATE_ARCH`).
pub fn load_dir_for(dir: &Path, arch: &str) -> Result<Vec<Suite>, LoadError> {
    load_dir_scoped(dir, crate::project::current().ok().flatten(), Some(arch))
}

fn load_dir_scoped(
    dir: &Path,
    project: Option<&crate::project::Project>,
    arch: Option<&str>,
) -> Result<Vec<Suite>, LoadError> {
    let found = super::discover::discover_all(dir)?;
    let root = super::ctx::Scope::of(dir, project).map(|mut s| {
        s.arch = arch.map(String::from);
        s
    });
    let mut suites: Vec<Suite> = Vec::new();
    let mut diagnostics = found.loops;
    for path in found.files {
        let loaded = match std::fs::read(&path) {
            Ok(bytes) => super::toml_text::utf8(&path, &bytes)
                .map_err(|d| vec![d])
                .and_then(|text| load_on(&path, text, root.clone(), None)),
            Err(e) => Err(vec![unreadable(&path, e)]),
        };
        match loaded {
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
    let bytes = std::fs::read(path).map_err(|e| vec![unreadable(path, e)])?;
    load_bytes(path, &bytes)
}

/// A suite file that cannot be read, said at its start (line 1, column 1).
fn unreadable(path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::at(path, "", 0, format!("cannot read the suite file: {e}"))
}

/// Validates `bytes` as the contents of the suite file at `path`; text that is not UTF-8 is
/// an error at the bad byte's line.
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<Suite, Vec<Diagnostic>> {
    let text = super::toml_text::utf8(path, bytes).map_err(|d| vec![d])?;
    load_text(path, text)
}

/// Validates `text` as the contents of the suite file at `path` (which places relative paths).
pub fn load_text(path: &Path, text: &str) -> Result<Suite, Vec<Diagnostic>> {
    load_on(path, text, None, None)
}

/// [`load_file`] with its expressions reading `device` (`lint` evaluates a suite for every
/// known device of its target).
pub fn load_file_on(
    path: &Path,
    device: crate::device::Attributes,
) -> Result<Suite, Vec<Diagnostic>> {
    let bytes = std::fs::read(path).map_err(|e| vec![unreadable(path, e)])?;
    let text = super::toml_text::utf8(path, &bytes).map_err(|d| vec![d])?;
    load_on(path, text, None, Some(device))
}

/// [`load_text`] for a file of the suites folder `root` (its real path: every file the suite
/// reads must be inside it), its expressions reading `device`.
fn load_on(
    path: &Path,
    text: &str,
    root: Option<super::ctx::Scope>,
    device: Option<crate::device::Attributes>,
) -> Result<Suite, Vec<Diagnostic>> {
    let mut ctx = Ctx::new(path, text);
    ctx.root = root;
    ctx.device = device;
    let raw: RawFile = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            for (at, message) in super::toml_text::locate(text, &e) {
                ctx.error(at, message);
            }
            return Err(ctx.diagnostics);
        }
    };
    let suite = build(&mut ctx, raw);
    match suite {
        Some(s) if ctx.diagnostics.is_empty() => Ok(s),
        _ => Err(ctx.diagnostics),
    }
}

/// The phases, in order: each reads its tables, records what is wrong in `ctx` and goes on,
/// so one run reports every problem; cases are expanded only from a file without errors.
fn build(ctx: &mut Ctx, raw: RawFile) -> Option<Suite> {
    let dir = ctx.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let suite_at = raw.suite.span().start;
    let rs = raw.suite.get_ref();
    let mut table = suite_table(ctx, &dir, rs);
    let sweep = sweep(ctx, rs, suite_at);
    // Expressions read the sizes, and the device's attributes (`suite::device`).
    let mut sizes = sweep.names();
    for name in crate::device::Attributes::NAMES {
        if sizes.iter().any(|s| s == name) {
            ctx.error(sweep.at, format!("size `{name}` has the name of a device attribute, which expressions read from the GPU (rename the size)"));
        }
        sizes.push(name.to_string());
    }
    let mut buffers = buffer_tables(ctx, &dir, &raw.buffer, &sizes, suite_at);
    let kernels = kernel_tables(ctx, &dir, &raw, &mut table, &buffers, &sizes);
    super::compiler::choose(ctx, rs.compiler.as_ref(), &mut table.sources);
    super::compiler::check_includes(ctx, &table.sources, &table.include_dirs);
    // Only a suite with no errors yet is worth a compile.
    if ctx.diagnostics.is_empty() {
        super::resolved::check_pending(ctx, &table, &kernels.pending);
    }
    let check = check_table(ctx, raw.check.as_ref(), &mut buffers, &dir);
    let (bench, bytes, flops) = bench_table(ctx, raw.bench.as_ref(), &sizes);
    if !ctx.diagnostics.is_empty() {
        return None;
    }
    let decls = Decls {
        sweep,
        buffers,
        kernels,
        bytes,
        flops,
    };
    let cases = cases::expand(ctx, &decls);
    Some(Suite {
        name: table.name,
        name_pos: crate::error::line_col(ctx.text, rs.name.span().start),
        warnings: std::mem::take(&mut ctx.warnings),
        path: ctx.path.to_path_buf(),
        kernel_lines: decls.kernels.lines,
        sources: table.sources,
        include_dirs: table.include_dirs,
        options: table.options,
        buffers: decls.buffers.list,
        kernels: decls.kernels.list,
        reference: decls.kernels.reference?,
        cases,
        check,
        bench,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
        assert_eq!(parse_bytes("1.5 GB"), Some(1_500_000_000));
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("12 KB"), Some(12_000));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("-1 MiB"), None);
        assert_eq!(parse_bytes("3 parsecs"), None);
    }

    /// Launch expressions read the device they are loaded for; a size may not take an
    /// attribute's name.
    #[test]
    fn expressions_read_the_device() {
        let path = Path::new("tests/fixtures/device/persist.toml");
        let pcie = crate::suite::device::known("sm_90").remove(1);
        assert_eq!(pcie.name, "NVIDIA H100 PCIe");
        let suite = load_file_on(path, pcie).unwrap();
        // 114 SMs of 2048 threads, blocks of 256: 912 blocks at every size.
        assert!(suite
            .cases
            .iter()
            .all(|c| c.launches[1][0].grid == [912, 1, 1]));
        assert_eq!(suite.cases[0].label, "n=1048576");
        assert!(!suite.cases[0].sizes.contains_key("sm_count"));
        let text = std::fs::read_to_string(path)
            .unwrap()
            .replace("sizes = { n =", "sizes = { cc = [1], n =");
        let e = load_text(path, &text).unwrap_err();
        assert!(
            e[0].message
                .contains("size `cc` has the name of a device attribute"),
            "{e:?}"
        );
    }
}
