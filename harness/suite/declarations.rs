//! `declarations`, `function`: the namespace-scope declarations of CUDA tokens, and each read
//! as a function — qualifiers, attributes (`__launch_bounds__`, `__attribute__`, `alignas`,
//! `[[...]]`), a `template <...>` head and the parameter list, giving a [`Signature`].

use super::tokens::{Kind, Token};

/// One parameter of a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The declaration as written, e.g. `const float* __restrict__ x`.
    pub text: String,
    /// Whether it is a pointer (or an array).
    pub pointer: bool,
    /// For pointers: whether the elements are `const` (read-only).
    pub const_pointee: bool,
    /// Whether it is `__restrict__`: no other parameter may alias it.
    pub restrict: bool,
    /// The base type, as written without qualifiers (`float`, `unsigned int`, `T`).
    pub base: String,
}

/// A kernel's signature, read from its declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The parameters in order.
    pub params: Vec<Param>,
    /// Line of the function name in the source.
    pub line: usize,
    /// For templates: each template parameter's name and whether it is a type (`typename T`),
    /// and whether it has a default.
    pub template: Option<Vec<TemplateParam>>,
}

/// One parameter of a `template <...>`.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateParam {
    /// Its name.
    pub name: String,
    /// `typename T` / `class T` (rather than a value such as `int N`).
    pub is_type: bool,
    /// Whether it has a default.
    pub has_default: bool,
}

/// Attributes and specifiers that take a parenthesized argument and say nothing about types.
const ATTRIBUTES: &[&str] = &[
    "__launch_bounds__",
    "__attribute__",
    "alignas",
    "__align__",
    "__declspec",
    "__cluster_dims__",
    "__maxnreg__",
    "__grid_constant__",
    "noexcept",
    "decltype",
];

/// Words that qualify a parameter or a function without being its type.
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "__restrict__",
    "__restrict",
    "restrict",
    "struct",
    "__grid_constant__",
];

/// The declarations at namespace scope: token runs ending at `;` or at a body's `{`. Bodies
/// are skipped; `namespace x {` and `extern "C" {` blocks are looked into.
pub(super) fn declarations<'a, 'b>(toks: &'b [Token<'a>]) -> Vec<&'b [Token<'a>]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut parens = 0i32;
    while i < toks.len() {
        match toks[i].text {
            "(" | "[" => parens += 1,
            ")" | "]" => parens -= 1,
            ";" if parens <= 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
                parens = 0;
            }
            "}" if parens <= 0 => {
                // The end of a namespace or extern block.
                start = i + 1;
            }
            "{" if parens <= 0 => {
                let head = &toks[start..i];
                // `namespace x {` and `extern "C" {` (perhaps after a macro use with no `;`).
                let transparent = head.iter().any(|t| t.text == "namespace")
                    || (head.len() >= 2 && head[head.len() - 2].text == "extern");
                if transparent {
                    start = i + 1;
                } else {
                    out.push(head);
                    // Skip the body (or an initializer's braces).
                    i = closing(toks, i).unwrap_or(toks.len());
                    start = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A function declaration: its name token, whether it is `__global__` / `__device__`, and
/// its signature.
pub(super) struct Function<'a> {
    pub name: Token<'a>,
    pub global: bool,
    pub device: bool,
    pub sig: Signature,
}

/// The index of the token that closes the bracket opened at `open` (`(`, `<`, `{` or `[`).
fn closing(toks: &[Token], open: usize) -> Option<usize> {
    let (o, c) = match toks[open].text {
        "(" => ("(", ")"),
        "<" => ("<", ">"),
        "{" => ("{", "}"),
        _ => ("[", "]"),
    };
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        if t.text == o {
            depth += 1;
        } else if t.text == c {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

/// Reads a declaration as a function, if it is one. The parameter list is the last
/// `name(...)` group: anything before it (a macro use with no `;`, say) is not this function's.
pub(super) fn function<'a>(decl: &[Token<'a>]) -> Option<Function<'a>> {
    let mut i = 0;
    let mut template = None;
    let (mut global, mut device) = (false, false);
    let mut prev: Option<Token> = None;
    let mut last = None;
    while i < decl.len() {
        let t = decl[i];
        if t.text == "template" && decl.get(i + 1).is_some_and(|n| n.text == "<") {
            let close = closing(decl, i + 1)?;
            template = Some(template_params(&decl[i + 2..close]));
            (global, device, prev) = (false, false, None);
            i = close + 1;
            continue;
        }
        if t.text == "[" && decl.get(i + 1).is_some_and(|n| n.text == "[") {
            i = closing(decl, i)? + 1; // a [[attribute]]
            continue;
        }
        if ATTRIBUTES.contains(&t.text) && decl.get(i + 1).is_some_and(|n| n.text == "(") {
            i = closing(decl, i + 1)? + 1;
            continue;
        }
        match t.text {
            "__global__" => global = true,
            "__device__" => device = true,
            "=" if last.is_none() => return None, // a variable
            "(" => {
                let close = closing(decl, i)?;
                if let Some(name) = prev.filter(|p| p.kind == Kind::Ident) {
                    last = Some((name, i, close, global, device, template.take()));
                }
                (global, device, prev) = (false, false, None);
                i = close + 1;
                continue;
            }
            _ => {}
        }
        prev = Some(t);
        i += 1;
    }
    let (name, open, close, global, device, template) = last?;
    let params = split(&decl[open + 1..close])
        .into_iter()
        .map(param)
        .filter(|p| !(p.text.is_empty() || p.text == "void"))
        .collect();
    Some(Function {
        name,
        global,
        device,
        sig: Signature {
            params,
            line: name.line,
            template,
        },
    })
}

fn template_params(toks: &[Token]) -> Vec<TemplateParam> {
    split(toks)
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            let eq = p.iter().position(|t| t.text == "=").unwrap_or(p.len());
            let head = &p[..eq];
            TemplateParam {
                name: head
                    .iter()
                    .rev()
                    .find(|t| t.kind == Kind::Ident)
                    .map_or(String::new(), |t| t.text.to_string()),
                is_type: matches!(head.first().map(|t| t.text), Some("typename" | "class")),
                has_default: eq < p.len(),
            }
        })
        .collect()
}

/// Splits a token list at top-level commas.
fn split<'a, 'b>(toks: &'b [Token<'a>]) -> Vec<&'b [Token<'a>]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "(" | "<" | "[" | "{" => depth += 1,
            ")" | ">" | "]" | "}" => depth -= 1,
            "," if depth == 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&toks[start..]);
    out
}

/// Tokens as a person writes them: `const float* __restrict__ x`, `alignas(16) float* p`.
fn render(toks: &[Token]) -> String {
    let mut out = String::new();
    let word = |t: &Token| t.kind != Kind::Punct;
    for (i, t) in toks.iter().enumerate() {
        if i > 0 && word(t) {
            let prev = &toks[i - 1];
            if word(prev) || matches!(prev.text, "*" | "&" | ")" | "]" | ">" | ",") {
                out.push(' ');
            }
        }
        out.push_str(t.text);
    }
    out
}

fn param(toks: &[Token]) -> Param {
    let text = render(toks);
    let eq = toks
        .iter()
        .position(|t| t.text == "=")
        .unwrap_or(toks.len());
    let mut words = Vec::new();
    let (mut stars, mut const_before_star, mut restrict, mut array) = (0, false, false, false);
    let mut i = 0;
    while i < eq {
        let t = toks[i];
        if ATTRIBUTES.contains(&t.text) && toks.get(i + 1).is_some_and(|n| n.text == "(") {
            i = closing(toks, i + 1).unwrap_or(eq) + 1;
            continue;
        }
        match t.text {
            "*" => stars += 1,
            "[" => array = true,
            "const" if stars == 0 => const_before_star = true,
            "__restrict__" | "__restrict" | "restrict" => restrict = true,
            w if t.kind == Kind::Ident && !QUALIFIERS.contains(&w) => words.push(w),
            "::" => words.push("::"),
            _ => {}
        }
        i += 1;
    }
    // The last word is the parameter's name when more than a type remains.
    if words.len() > 1 && words.last() != Some(&"::") {
        words.pop();
    }
    let pointer = stars > 0 || array;
    Param {
        text,
        pointer,
        const_pointee: pointer && const_before_star,
        restrict,
        base: words.join(" ").replace(" :: ", "::"),
    }
}
