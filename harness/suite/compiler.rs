//! Phase `compiler`: which compiler each CUDA source takes. NVRTC compiles device code only; a
//! source as a repository has it often mixes in host code (`#include <cstdio>`,
//! `<cuda_runtime.h>`, `<cublas_v2.h>`, a `main`), which NVRTC cannot open. Such a source is
//! compiled with nvcc (`device::nvcc`) — to the same CUBIN, cache, code identity and SASS — and
//! the reason is kept for `lint` to print. `[suite] compiler = "nvcc"` or `"nvrtc"` decides for
//! every source of the suite.

use super::ctx::Ctx;
use super::{Source, SourceKind};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Host headers of CUDA's libraries and runtime: a source that includes one has host code.
const HOST_API: &[&str] = &[
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "cuda_profiler_api.h",
    "cublas_v2.h",
    "cublas.h",
    "cublasLt.h",
    "cudnn.h",
    "curand.h",
    "cufft.h",
    "cusparse.h",
    "cusolverDn.h",
    "nccl.h",
];

/// One `#include <name>` or `#include "name"` of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Include<'a> {
    /// The header as written between the delimiters.
    pub name: &'a str,
    /// `"name"` (searched beside the source first), not `<name>`.
    pub quoted: bool,
    /// 1-based line, and column of the opening delimiter.
    pub at: (usize, usize),
    /// Inside an `#if`/`#ifdef` block: maybe meant for another configuration.
    pub conditional: bool,
}

/// Every `#include` of `text`, in order (a macro include, `#include HEADER`, is none).
pub fn includes(text: &str) -> Vec<Include<'_>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for (i, line) in code_lines(text) {
        let Some(directive) = line.trim_start().strip_prefix('#').map(str::trim_start) else {
            continue;
        };
        if directive.starts_with("if") {
            depth += 1;
        } else if directive.starts_with("endif") {
            depth = depth.saturating_sub(1);
        }
        let Some(rest) = directive.strip_prefix("include").map(str::trim_start) else {
            continue;
        };
        let (quoted, close) = match rest.chars().next() {
            Some('"') => (true, '"'),
            Some('<') => (false, '>'),
            _ => continue,
        };
        let Some(name) = rest[1..].split(close).next().filter(|n| !n.is_empty()) else {
            continue;
        };
        let col = line.len() - rest.len() + 1;
        out.push(Include {
            name,
            quoted,
            at: (i + 1, col),
            conditional: depth > 0,
        });
    }
    out
}

/// The file at `path` holding `text`, then every file it includes with quotes, beside the
/// including file, at any depth, each once (at most 64): where a source's kernels and host code
/// may sit when a port includes a repository's headers where they are.
pub fn with_quoted_includes(path: &Path, text: &str) -> Vec<(PathBuf, String)> {
    let mut out = vec![(path.to_path_buf(), text.to_string())];
    let mut next = 0;
    while next < out.len() && out.len() < 64 {
        let (at, text) = out[next].clone();
        next += 1;
        for inc in includes(&text).into_iter().filter(|i| i.quoted) {
            let p = super::ctx::clean(&at.parent().unwrap_or(Path::new("")).join(inc.name));
            if !out.iter().any(|(q, _)| *q == p) {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    out.push((p, t));
                }
            }
        }
    }
    out
}

/// The lines of `text` (numbered from 0) that do not start inside a `/* … */` comment: where a
/// directive or a definition can be (a file's header comment quoting `#include <math.h>` is
/// not an include).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut open = false;
    text.lines().enumerate().filter(move |(_, line)| {
        let code = !open;
        let b = line.as_bytes();
        let mut i = 0;
        while i + 1 < b.len() {
            match (open, b[i], b[i + 1]) {
                (true, b'*', b'/') => (open, i) = (false, i + 2),
                (false, b'/', b'*') => (open, i) = (true, i + 2),
                (false, b'/', b'/') => break,
                _ => i += 1,
            }
        }
        code
    })
}

/// Whether `name` is a C or C++ standard header or a host header of CUDA's runtime or libraries.
pub fn host_header(name: &str) -> bool {
    crate::device::headers::HOST_HEADERS.contains(&name) || HOST_API.contains(&name)
}

/// Why `text` needs nvcc: the first host header it includes, or its `main`; `None` when it is
/// device code NVRTC compiles.
pub fn host_code(text: &str) -> Option<String> {
    if let Some(i) = includes(text).into_iter().find(|i| host_header(i.name)) {
        let name = i.name;
        return Some(format!(
            "it includes `<{name}>`, host code NVRTC does not compile"
        ));
    }
    let main = code_lines(text)
        .map(|(_, l)| l.trim_start())
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split("//").next().unwrap_or(""))
        .any(|code| {
            code.find("main").is_some_and(|at| {
                let before = code[..at].trim_end();
                let after = code[at + 4..].trim_start();
                after.starts_with('(') && (before.ends_with("int") || before.ends_with("void"))
            })
        });
    main.then(|| "it defines `main`".into())
}

/// Sets each CUDA source's compiler from `[suite] compiler` (`"nvrtc"`, `"nvcc"`, or absent:
/// by what the source holds).
pub(super) fn choose(ctx: &mut Ctx, compiler: Option<&Spanned<String>>, sources: &mut [Source]) {
    let forced = match compiler.map(|c| (c.get_ref().as_str(), c.span().start)) {
        None => None,
        Some(("nvcc", _)) => Some(true),
        Some(("nvrtc", _)) => Some(false),
        Some((other, at)) => {
            ctx.error(
                at,
                format!("compiler `{other}`: write \"nvrtc\" (device code, compiled in-process) or \"nvcc\" (sources with host code); without it each source takes the one it needs"),
            );
            return;
        }
    };
    for s in sources.iter_mut().filter(|s| s.kind() == SourceKind::Cuda) {
        s.nvcc = match forced {
            Some(true) => Some("`compiler = \"nvcc\"` in [suite]".into()),
            Some(false) => None,
            // Its headers are read only where the source itself holds no host code.
            None => host_code(&s.text).or_else(|| {
                let mut included = with_quoted_includes(&s.path, &s.text).into_iter().skip(1);
                included.find_map(|(p, text)| {
                    let why = host_code(&text)?;
                    Some(format!("`{}`, which it includes: {why}", p.display()))
                })
            }),
        };
    }
}

/// Every `#include "file"` of a CUDA source that no folder the compiler searches holds — the
/// source's own folder, the suite's `include_dirs`, CUDA's headers — an error at the include's
/// line in the source, as the compiler would say it, with or without one. Only includes outside
/// any `#if`: a conditional one may be meant for another configuration.
pub(super) fn check_includes(
    ctx: &mut Ctx,
    sources: &[Source],
    include_dirs: &[std::path::PathBuf],
) {
    let cuda = &crate::device::headers::cuda_headers().dirs;
    for s in sources.iter().filter(|s| s.kind().is_compiled()) {
        let own = s
            .path
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        for inc in includes(&s.text)
            .into_iter()
            .filter(|i| i.quoted && !i.conditional)
        {
            let name = inc.name;
            let found = std::iter::once(&own)
                .chain(include_dirs)
                .chain(cuda)
                .any(|d| d.join(name).is_file());
            // nvcc goes on to the host compiler's folders, as `<...>` would: a standard header
            // written in quotes (llm.c's `#include "assert.h"`) is found there.
            let system = s.nvcc.is_some() && crate::device::headers::HOST_HEADERS.contains(&name);
            if !found && !system {
                ctx.diagnostics.push(crate::error::Diagnostic {
                    file: s.path.clone(),
                    line: inc.at.0,
                    col: inc.at.1,
                    message: format!(
                        "`{name}` is not in `{}`, the suite's `include_dirs` or CUDA's headers: add its folder to `include_dirs` (relative to the suite file)",
                        own.display()
                    ),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{host_code, includes, with_quoted_includes};

    /// A source that includes a repository's header with host code takes nvcc, and says which.
    #[test]
    fn host_code_is_found_in_quoted_includes_too() {
        let dir = std::env::temp_dir().join(format!("kg-includes-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("kernels")).unwrap();
        let cuh = "#include <cstdio>\n#include \"../a.cu\"\n__global__ void k() {}\n";
        std::fs::write(dir.join("kernels/k.cuh"), cuh).unwrap();
        let text = "#include \"kernels/k.cuh\"\n";
        std::fs::write(dir.join("a.cu"), text).unwrap();
        let files = with_quoted_includes(&dir.join("a.cu"), text);
        // Each file once, though the header includes the source back.
        assert_eq!(files.len(), 2, "{files:?}");
        let mut sources = vec![super::Source {
            path: dir.join("a.cu"),
            text: text.into(),
            nvcc: None,
            defines: Vec::new(),
            library: None,
        }];
        let mut ctx = super::Ctx::new(std::path::Path::new("s.toml"), "");
        super::choose(&mut ctx, None, &mut sources);
        let why = sources[0].nvcc.clone().unwrap();
        assert!(why.ends_with("k.cuh`, which it includes: it includes `<cstdio>`, host code NVRTC does not compile"), "{why}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_include_quoted_in_a_comment_is_none() {
        let text = "/*\nCompile:\n#include <math.h>  OR  #include <cmath>\nint main() {}\n*/\n#include \"k.cuh\" /* a\n#include <cstdio>\n*/\n#include <stdio.h>\n";
        let found: Vec<(&str, usize)> = includes(text).iter().map(|i| (i.name, i.at.0)).collect();
        assert_eq!(found, [("k.cuh", 6), ("stdio.h", 9)]);
        assert_eq!(
            host_code(text).as_deref(),
            Some("it includes `<stdio.h>`, host code NVRTC does not compile"),
            "llm.c's files quote <math.h> in their header comment"
        );
        assert_eq!(host_code("/*\nint main() {}\n*/\n"), None);
    }

    #[test]
    fn includes_are_read_with_their_place() {
        let found =
            includes("#include <a.h>\n#if X\n#  include \"b.h\" // c\n#endif\n#include HEADER\n");
        assert_eq!(found.len(), 2, "a macro include is none: {found:?}");
        assert_eq!(
            (found[0].name, found[0].quoted, found[0].conditional),
            ("a.h", false, false)
        );
        assert_eq!(
            (
                found[1].name,
                found[1].quoted,
                found[1].at,
                found[1].conditional
            ),
            ("b.h", true, (3, 12), true)
        );
    }

    #[test]
    fn host_code_is_found_by_its_headers_and_main() {
        let device = "#include <cuda_fp16.h>\n#include \"tile.cuh\"\n__global__ void k(float *x) { x[0] = 1; }\n";
        assert_eq!(host_code(device), None);
        assert!(host_code("#include <cstdio>\n")
            .unwrap()
            .contains("`<cstdio>`"));
        assert!(host_code("#  include \"cublas_v2.h\" // blas\n")
            .unwrap()
            .contains("cublas_v2.h"));
        assert!(host_code("int main(int argc, char **argv) {\n")
            .unwrap()
            .contains("`main`"));
        assert!(host_code("int main (void)\n").is_some());
        assert_eq!(
            host_code("__device__ int domain(int x);\n// int main() in a comment? no: code\n"),
            None
        );
    }
}
