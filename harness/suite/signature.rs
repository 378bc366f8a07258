//! `lookup`: what the CUDA source says about an entry — the `__global__` function's parameters
//! (read from tokens, so comments, strings, macros, attributes and templates are told apart), or
//! why it cannot be used: absent, a `__device__` helper, overloaded, or not readable (then the
//! caller warns; it never passes silently).

use super::args::ScalarType;
use super::declarations::{declarations, function};
pub use super::declarations::{Param, Signature, TemplateParam};
use super::tokens::{tokenize, Kind, Token, Unreadable};
use crate::dtype::DType;

/// What the source says about an entry name.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// One `__global__` function (declarations of the same parameters count once).
    Kernel(Signature),
    /// A function that is not `__global__` (a `__device__` helper or host code).
    NotGlobal {
        /// Line of its name.
        line: usize,
        /// `__device__` or `host`.
        what: &'static str,
    },
    /// Several `__global__` functions of that name with different parameters.
    Overloaded {
        /// Line of each.
        lines: Vec<usize>,
    },
    /// The name appears, but in no declaration kernelgate can read (a macro, say).
    Mentioned {
        /// Line of the first use.
        line: usize,
        /// Whether that use is on a preprocessor line.
        in_directive: bool,
    },
    /// The name does not appear outside comments and strings.
    Absent,
    /// The source cannot be tokenized: where, and what was not understood.
    Unreadable(Unreadable),
}

/// The function's own name in an entry: `ns::scale<float>` → `scale`.
pub fn base_name(entry: &str) -> &str {
    let name = entry.split('<').next().unwrap_or(entry);
    name.rsplit("::").next().unwrap_or(name).trim()
}

/// Splits `name<a, b>` into the name and its template arguments (`None` without `<`).
// stringly: the message becomes a `Diagnostic` at the entry's place, which only the caller
// knows; the loader's errors are text at a line and column by design.
pub fn template_args(entry: &str) -> Result<(&str, Option<Vec<String>>), String> {
    let Some(open) = entry.find('<') else {
        return Ok((entry.trim(), None));
    };
    let inner = entry[open + 1..]
        .trim_end()
        .strip_suffix('>')
        .ok_or_else(|| format!("entry `{entry}` opens `<` but does not end with `>`"))?;
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[start..].trim().to_string());
    if args.iter().any(String::is_empty) {
        return Err(format!("entry `{entry}` has an empty template argument"));
    }
    Ok((entry[..open].trim(), Some(args)))
}

/// What `source` says about the function named `entry` (template arguments stripped).
pub fn lookup(source: &str, entry: &str) -> Lookup {
    // `ns::scale<float>` is looked up as `scale`: declarations are read inside namespaces.
    let base = base_name(entry);
    let toks = match tokenize(source) {
        Ok(t) => t,
        Err(u) => return Lookup::Unreadable(u),
    };
    let code: Vec<Token> = toks.iter().copied().filter(|t| !t.directive).collect();
    let mut kernels: Vec<Signature> = Vec::new();
    let mut other = None;
    for decl in declarations(&code) {
        let Some(f) = function(decl) else { continue };
        if f.name.text != base {
            continue;
        }
        if f.global {
            if !kernels
                .iter()
                .any(|k| same_params(&k.params, &f.sig.params))
            {
                kernels.push(f.sig);
            }
        } else if other.is_none() {
            let what = if f.device { "__device__" } else { "host" };
            other = Some((f.sig.line, what));
        }
    }
    match (kernels.len(), other) {
        (1, _) => Lookup::Kernel(kernels.pop().expect("one kernel")),
        (0, Some((line, what))) => Lookup::NotGlobal { line, what },
        (0, None) => match toks
            .iter()
            .find(|t| t.kind == Kind::Ident && t.text == base)
        {
            Some(t) => Lookup::Mentioned {
                line: t.line,
                in_directive: t.directive,
            },
            None => Lookup::Absent,
        },
        _ => Lookup::Overloaded {
            lines: kernels.iter().map(|k| k.line).collect(),
        },
    }
}

/// The names of every `__global__` function in `source` (for "did you mean"); empty when the
/// source cannot be read.
pub fn kernel_names(source: &str) -> Vec<String> {
    let Ok(toks) = tokenize(source) else {
        return Vec::new();
    };
    let code: Vec<Token> = toks.iter().copied().filter(|t| !t.directive).collect();
    let mut names: Vec<String> = declarations(&code)
        .into_iter()
        .filter_map(function)
        .filter(|f| f.global)
        .map(|f| f.name.text.to_string())
        .collect();
    names.dedup();
    names
}

fn same_params(a: &[Param], b: &[Param]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.base == y.base && x.pointer == y.pointer)
}

/// The element type of a C type name, where kernelgate knows it.
pub fn element_type(ty: &str) -> Option<DType> {
    Some(match ty {
        "float" => DType::F32,
        "double" => DType::F64,
        "__half" | "half" => DType::F16,
        "__nv_bfloat16" | "nv_bfloat16" => DType::Bf16,
        "int" | "int32_t" | "signed int" | "signed" => DType::I32,
        "unsigned" | "unsigned int" | "uint32_t" => DType::U32,
        "long long" | "long long int" | "int64_t" => DType::I64,
        "unsigned char" | "uint8_t" => DType::U8,
        _ => return None,
    })
}

/// Whether kernelgate knows the type `ty` from its name alone: an element or scalar type, or
/// `void`. Other names (typedefs, aliases, macros, structs) are left to the compiler.
pub fn known(ty: &str) -> bool {
    ty == "void" || element_type(ty).is_some() || scalar_type(ty).is_some()
}

/// The scalar type of a C type name, where kernelgate knows it (an element type's, but
/// `unsigned char`; or `unsigned long long`, which no buffer holds).
pub fn scalar_type(ty: &str) -> Option<ScalarType> {
    match ty {
        "unsigned long long" | "unsigned long long int" | "uint64_t" | "size_t" => {
            Some(ScalarType::U64)
        }
        _ => ScalarType::parse(element_type(ty)?.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
// a comment with __global__ void saxpy(int) in it
extern "C" __global__ void saxpy(float a, const float* __restrict__ x,
                                 float *y, int n) { }
/* __global__ void hidden(int a) */
const char* s = "__global__ void quoted(int a) {}";
template <typename T, int N = 4>
__global__ void __launch_bounds__(256, 2) scale(T* out, const T* in, unsigned int n, size_t m) {}
__global__ void twice(int a) {}
__global__ void twice(float a) {}
__global__ void declared(int a);
__global__ void declared(int b) {}
__device__ float helper(float x) { return x; }
#define MAKE(name) __global__ void name(float* p) {}
MAKE(made)
namespace ns { extern "C" { __global__ void __attribute__((noinline)) inner(alignas(16) float* p, const int n) {} } }
extern "C" __global__ void empty() {}
"#;

    fn kernel(entry: &str) -> Signature {
        match lookup(SRC, entry) {
            Lookup::Kernel(s) => s,
            other => panic!("{entry}: {other:?}"),
        }
    }

    #[test]
    fn template_arguments() {
        assert_eq!(template_args("f"), Ok(("f", None)));
        assert_eq!(
            template_args("f<float, 256>"),
            Ok(("f", Some(vec!["float".into(), "256".into()])))
        );
        assert_eq!(
            template_args("f<g<int>, (1>2)>").unwrap().1.unwrap().len(),
            2
        );
        assert!(template_args("f<float").is_err());
        assert!(template_args("f<float,>").is_err());
    }

    #[test]
    fn reads_parameters() {
        let s = kernel("saxpy");
        assert_eq!(s.line, 3);
        let bases: Vec<_> = s.params.iter().map(|p| p.base.as_str()).collect();
        assert_eq!(bases, ["float", "float", "float", "int"]);
        assert!(s.params[1].const_pointee && s.params[1].restrict);
        assert!(!s.params[2].const_pointee && s.params[2].pointer);
        assert_eq!(s.params[1].text, "const float* __restrict__ x");
        assert_eq!(s.template, None);
    }

    #[test]
    fn attributes_and_templates() {
        let s = kernel("scale<float>");
        assert_eq!(
            s.params.len(),
            4,
            "__launch_bounds__(256, 2) is no parameter list"
        );
        assert_eq!(s.params[0].base, "T");
        assert_eq!(s.params[2].base, "unsigned int");
        let t = s.template.unwrap();
        assert_eq!((t[0].name.as_str(), t[0].is_type), ("T", true));
        assert_eq!(
            (t[1].name.as_str(), t[1].is_type, t[1].has_default),
            ("N", false, true)
        );
        let s = kernel("inner");
        assert_eq!(s.params.len(), 2);
        assert_eq!(s.params[0].base, "float");
        assert_eq!(s.params[1].base, "int");
        assert!(!s.params[1].pointer);
        assert_eq!(kernel("ns::inner").params.len(), 2, "a qualified name");
    }

    #[test]
    fn what_is_not_a_kernel() {
        assert_eq!(lookup(SRC, "hidden"), Lookup::Absent, "commented out");
        assert_eq!(lookup(SRC, "quoted"), Lookup::Absent, "inside a string");
        assert_eq!(lookup(SRC, "nope"), Lookup::Absent);
        assert_eq!(
            lookup(SRC, "helper"),
            Lookup::NotGlobal {
                line: 13,
                what: "__device__"
            }
        );
        assert_eq!(
            lookup(SRC, "twice"),
            Lookup::Overloaded { lines: vec![9, 10] }
        );
        assert_eq!(
            kernel("declared").params.len(),
            1,
            "a declaration and its definition"
        );
        assert_eq!(
            lookup(SRC, "made"),
            Lookup::Mentioned {
                line: 15,
                in_directive: false
            }
        );
        assert_eq!(kernel("empty").params, []);
        assert!(matches!(
            lookup("__global__ void f() {}\n/* open", "f"),
            Lookup::Unreadable(Unreadable { line: 2, .. })
        ));
    }
}
