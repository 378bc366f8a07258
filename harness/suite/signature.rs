//! `Param`: a `__global__` function's parameter list, read from the CUDA source text so that
//! argument mistakes are caught at load time, before any GPU work. Where the signature cannot
//! be read with certainty (macros, overloads), nothing is claimed.

use super::args::ScalarType;
use crate::dtype::DType;

/// One parameter of a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The declaration as written, e.g. `const float* __restrict__ x`.
    pub text: String,
    /// Whether it is a pointer.
    pub pointer: bool,
    /// For pointers: the element type, where it is one kernelgate knows; for scalars: the
    /// scalar type, where known.
    pub kind: ParamKind,
}

/// What a parameter's type is, as far as the source says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A pointer to elements of this type.
    Elements(DType),
    /// A scalar of this type.
    Scalar(ScalarType),
    /// Something else (vector types, structs, template parameters): not checked.
    Unknown,
}

/// A kernel's signature: the parameters and the 1-based line of the function name.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The parameters in order.
    pub params: Vec<Param>,
    /// Line of the function name in the source.
    pub line: usize,
}

/// Finds the single `__global__` function named `entry` (template arguments stripped) in
/// `source`. `None` when it is absent, defined more than once, or not readable.
pub fn find(source: &str, entry: &str) -> Option<Signature> {
    let base = entry.split('<').next()?.trim();
    let clean = strip_comments(source);
    let mut found = None;
    let mut search = 0;
    while let Some(rel) = clean[search..].find("__global__") {
        let at = search + rel;
        search = at + "__global__".len();
        // The declaration runs to the first `(` after `__global__`.
        let open = search + clean[search..].find('(')?;
        let head = &clean[search..open];
        let name = head
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        if name != base {
            continue;
        }
        let close = matching_paren(&clean, open)?;
        let params = split_params(&clean[open + 1..close]);
        let line = clean[..open].matches('\n').count() + 1;
        if found.is_some() {
            return None; // overloaded: ambiguous
        }
        found = Some(Signature { params, line });
    }
    found
}

fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_params(list: &str) -> Vec<Param> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in list.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&list[start..]);
    out.into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .map(|text| classify(&text))
        .collect()
}

fn classify(text: &str) -> Param {
    let pointer = text.contains('*');
    // Drop the parameter name (the last word, when more than a type remains) and qualifiers.
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '*' || c == '&')
        .filter(|w| !w.is_empty())
        .filter(|w| {
            !matches!(
                *w,
                "const" | "volatile" | "__restrict__" | "__restrict" | "restrict"
            )
        })
        .collect();
    let type_words = if words.len() > 1 {
        &words[..words.len() - 1]
    } else {
        &words[..]
    };
    let ty = type_words.join(" ");
    let kind = if pointer {
        element_type(&ty).map_or(ParamKind::Unknown, ParamKind::Elements)
    } else {
        scalar_type(&ty).map_or(ParamKind::Unknown, ParamKind::Scalar)
    };
    Param {
        text: text.to_string(),
        pointer,
        kind,
    }
}

fn element_type(ty: &str) -> Option<DType> {
    Some(match ty {
        "float" => DType::F32,
        "double" => DType::F64,
        "__half" | "half" => DType::F16,
        "__nv_bfloat16" | "nv_bfloat16" => DType::Bf16,
        "int" | "int32_t" | "signed int" => DType::I32,
        "unsigned" | "unsigned int" | "uint32_t" => DType::U32,
        "long long" | "long long int" | "int64_t" => DType::I64,
        "unsigned char" | "uint8_t" => DType::U8,
        _ => return None,
    })
}

fn scalar_type(ty: &str) -> Option<ScalarType> {
    Some(match ty {
        "float" => ScalarType::F32,
        "double" => ScalarType::F64,
        "__half" | "half" => ScalarType::F16,
        "__nv_bfloat16" | "nv_bfloat16" => ScalarType::Bf16,
        "int" | "int32_t" | "signed int" => ScalarType::I32,
        "unsigned" | "unsigned int" | "uint32_t" => ScalarType::U32,
        "long long" | "long long int" | "int64_t" => ScalarType::I64,
        "unsigned long long" | "uint64_t" | "size_t" => ScalarType::U64,
        _ => return None,
    })
}

/// Replaces comments with spaces, keeping newlines so line numbers hold.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
// a comment with __global__ void saxpy(int) in it
extern "C" __global__ void saxpy(float a, const float* __restrict__ x,
                                 float *y, int n) { }
/* __global__ void hidden(int a) */
template <typename T>
__global__ void scale(T* out, const T* in, unsigned int n, size_t m, float4* v) {}
__global__ void twice(int a) {}
__global__ void twice(float a) {}
extern "C" __global__ void empty() {}
"#;

    #[test]
    fn reads_parameters() {
        let s = find(SRC, "saxpy").unwrap();
        assert_eq!(s.line, 3);
        let kinds: Vec<_> = s.params.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            [
                ParamKind::Scalar(ScalarType::F32),
                ParamKind::Elements(DType::F32),
                ParamKind::Elements(DType::F32),
                ParamKind::Scalar(ScalarType::I32),
            ]
        );
        assert_eq!(s.params[1].text, "const float* __restrict__ x");
    }

    #[test]
    fn templates_and_unknown_types() {
        let s = find(SRC, "scale<float>").unwrap();
        assert_eq!(s.params.len(), 5);
        assert_eq!(s.params[0].kind, ParamKind::Unknown);
        assert!(s.params[0].pointer);
        assert_eq!(s.params[2].kind, ParamKind::Scalar(ScalarType::U32));
        assert_eq!(s.params[3].kind, ParamKind::Scalar(ScalarType::U64));
        assert_eq!(s.params[4].kind, ParamKind::Unknown);
    }

    #[test]
    fn absent_overloaded_and_empty() {
        assert_eq!(find(SRC, "hidden"), None, "commented out");
        assert_eq!(find(SRC, "twice"), None, "overloads are ambiguous");
        assert_eq!(find(SRC, "nope"), None);
        assert_eq!(find(SRC, "empty").unwrap().params, []);
    }
}
