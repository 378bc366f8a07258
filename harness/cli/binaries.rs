//! `fatbin_problems`: `lint`'s check of every fatbin source against the target architecture,
//! from the file alone (no NVRTC, no GPU): it must hold code the target loads (a cubin of its
//! major architecture, or PTX not newer than it — what the driver would pick, `sass::fatbin`),
//! and that code must hold every kernel the suite launches from it. Each error is at the
//! `source` value (or the `entry` value) in the suite file.

use crate::error::Diagnostic;
use crate::sass::Module;
use crate::suite::Suite;
use std::path::Path;

/// The problems of `suites`' fatbin sources on `arch`.
pub(crate) fn fatbin_problems(suites: &[Suite], arch: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for suite in suites {
        let fatbins = suite
            .sources
            .iter()
            .enumerate()
            .filter(|(_, s)| s.path.extension().is_some_and(|e| e == "fatbin"));
        let mut text = None;
        for (si, source) in fatbins {
            // The suite file, read once and only where it names a fatbin.
            let text: &str = text
                .get_or_insert_with(|| std::fs::read_to_string(&suite.path).unwrap_or_default());
            let Ok(bytes) = std::fs::read(&source.path) else {
                continue; // read when the suite was loaded; gone since is the run's to say
            };
            let module = match crate::sass::fatbin::pick(&bytes, arch) {
                Ok(m) => m,
                Err(e) => {
                    let at = source_offset(text, suite, si);
                    out.push(Diagnostic::at(
                        &suite.path,
                        text,
                        at,
                        format!(
                            "source `{}`: {e} (the target is {arch}, KERNELGATE_ARCH)",
                            name(&source.path)
                        ),
                    ));
                    continue;
                }
            };
            let mut held = entries(&module);
            held.sort();
            for (k, kernel) in suite
                .kernels
                .iter()
                .enumerate()
                .filter(|(_, k)| k.source == si)
            {
                for entry in kernel.entries.iter().filter(|e| !held.contains(e)) {
                    let from = line_offset(text, suite.kernel_lines.get(k).copied().unwrap_or(1));
                    let at = text[from..]
                        .find(&format!("\"{entry}\""))
                        .map_or(from, |i| from + i);
                    out.push(Diagnostic::at(
                        &suite.path,
                        text,
                        at,
                        format!(
                            "no kernel `{entry}` in `{}` for {arch} (its kernels there: {})",
                            name(&source.path),
                            crate::suggest::joined_or_none(&held, ", ")
                        ),
                    ));
                }
            }
        }
    }
    out
}

/// The kernels (entries) of a module: a cubin's `.text.<name>` sections, PTX's `.entry`s.
fn entries(module: &Module) -> Vec<String> {
    match module {
        Module::Cubin(bytes) => crate::device::binary::cubin_entries(bytes),
        Module::Ptx(text) => crate::device::ptx::parse(text)
            .into_iter()
            .filter(|(_, f)| f.entry)
            .map(|(name, _)| name)
            .collect(),
        Module::Library(_) => Vec::new(),
    }
}

/// The file name of `path`, as written in errors.
fn name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

/// The byte offset of 1-based line `line` in `text`.
fn line_offset(text: &str, line: usize) -> usize {
    text.split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum()
}

/// The line of the first `[[kernel]]` of `suite` compiled from source `si`, where a problem of
/// that source without a place of its own is reported (1 when none is).
pub(crate) fn source_line(suite: &Suite, si: usize) -> usize {
    suite
        .kernels
        .iter()
        .position(|k| k.source == si)
        .and_then(|k| suite.kernel_lines.get(k).copied())
        .unwrap_or(1)
}

/// The byte offset in `text` (the suite file of `suite`) where it names its source `si`: the
/// first `source = "…"` value naming the file, else the first `[[kernel]]` compiled from it.
fn source_offset(text: &str, suite: &Suite, si: usize) -> usize {
    written(text, &suite.sources[si].path, "source")
        .unwrap_or_else(|| line_offset(text, source_line(suite, si)))
}

/// [`source_offset`] as line and column, reading the suite file: where a problem of a built
/// source is reported.
pub(crate) fn source_place(suite: &Suite, si: usize) -> (usize, usize) {
    let text = std::fs::read_to_string(&suite.path).unwrap_or_default();
    crate::error::line_col(&text, source_offset(&text, suite, si))
}

/// Where the value of the first `key = "…<path's file name>"` line of `text` is.
fn written(text: &str, path: &Path, key: &str) -> Option<usize> {
    let file = name(path);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with(key) && line.contains(&file) {
            return Some(offset + line.find('"').unwrap_or(0));
        }
        offset += line.len();
    }
    None
}
