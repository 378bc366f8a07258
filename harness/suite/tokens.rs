//! `tokenize`: CUDA source as tokens, enough to read kernel signatures. Comments are dropped;
//! strings, character literals and raw strings are single tokens (so a name inside them is no
//! declaration); preprocessor lines (with their `\` continuations) are marked, so a name that
//! only appears in a macro is told apart from a declaration.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A name or keyword.
    Ident,
    /// A number (any form: `1`, `0x1f`, `1.5e-3f`).
    Number,
    /// A string or character literal, quotes included.
    Literal,
    /// One punctuation character; `::` is one token.
    Punct,
}

/// One token of a CUDA source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// What it is.
    pub kind: Kind,
    /// The text as written.
    pub text: &'a str,
    /// 1-based line in the source.
    pub line: usize,
    /// Whether it sits on a preprocessor line (`#define`, `#if`, ...).
    pub directive: bool,
}

/// Something in the source the tokenizer could not follow, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// 1-based line.
    pub line: usize,
    /// What was not understood.
    pub what: String,
}

/// The tokens of `src`, or the first place it cannot be read (an unterminated comment,
/// string or raw string).
pub fn tokenize(src: &str) -> Result<Vec<Token<'_>>, Unreadable> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut line_start = true;
    let mut directive = false;
    let fail = |line: usize, what: &str| Unreadable {
        line,
        what: what.to_string(),
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                line_start = true;
                directive = false;
                i += 1;
                continue;
            }
            b'\\' if b[i..].starts_with(b"\\\n") || b[i..].starts_with(b"\\\r\n") => {
                // A line continuation: the directive (if any) goes on.
                line += 1;
                i += if b[i + 1] == b'\r' { 3 } else { 2 };
                continue;
            }
            _ if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let start = line;
            let Some(end) = src[i + 2..].find("*/") else {
                return Err(fail(start, "a `/*` comment that is never closed"));
            };
            line += src[i..i + 2 + end].matches('\n').count();
            i += 2 + end + 2;
            continue;
        }
        if std::mem::replace(&mut line_start, false) && c == b'#' {
            directive = true;
        }
        let start = i;
        let kind = if c == b'R' && b.get(i + 1) == Some(&b'"') {
            // A raw string: R"delim( ... )delim".
            let open = src[i + 2..]
                .find('(')
                .ok_or_else(|| fail(line, "a raw string without `(`"))?;
            let delim = &src[i + 2..i + 2 + open];
            let close = format!("){delim}\"");
            let body = i + 2 + open + 1;
            let end = src[body..]
                .find(&close)
                .ok_or_else(|| fail(line, "a raw string that is never closed"))?;
            let text_end = body + end + close.len();
            let newlines = src[i..text_end].matches('\n').count();
            out.push(Token {
                kind: Kind::Literal,
                text: &src[start..text_end],
                line,
                directive,
            });
            line += newlines;
            i = text_end;
            continue;
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\n' && directive {
                    // `#error don't`: a directive's text need not be C tokens.
                    i = start;
                    break;
                }
                if b[i] == b'\n' {
                    let what = if c == b'"' {
                        "a string that is never closed"
                    } else {
                        "a character literal that is never closed"
                    };
                    return Err(fail(line, what));
                }
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            if i == start {
                i += 1;
                Kind::Punct
            } else if i >= b.len() {
                return Err(fail(line, "a string that is never closed"));
            } else {
                i += 1;
                Kind::Literal
            }
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            // A prefixed literal: u8"..", L'..' and the like are one literal token.
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') && i - start <= 2 {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                Kind::Literal
            } else {
                Kind::Ident
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'.'
                    || b[i] == b'\''
                    || ((b[i] == b'+' || b[i] == b'-')
                        && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')))
            {
                i += 1;
            }
            Kind::Number
        } else {
            i += if c == b':' && b.get(i + 1) == Some(&b':') {
                2
            } else {
                // One character (a whole UTF-8 sequence, to stay on a boundary).
                src[i..].chars().next().map_or(1, char::len_utf8)
            };
            Kind::Punct
        };
        out.push(Token {
            kind,
            text: &src[start..i.min(src.len())],
            line,
            directive,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        tokenize(src).unwrap().iter().map(|t| t.text).collect()
    }

    #[test]
    fn comments_strings_and_directives() {
        let src = "// f(\n/* g(\n */ #define H(x) \\\n  x\nconst char* s = \"k(\\\"\"; char c = '\\'';\nstd::max";
        let toks = tokenize(src).unwrap();
        let t: Vec<_> = toks.iter().map(|t| t.text).collect();
        assert_eq!(
            t,
            [
                "#",
                "define",
                "H",
                "(",
                "x",
                ")",
                "x",
                "const",
                "char",
                "*",
                "s",
                "=",
                "\"k(\\\"\"",
                ";",
                "char",
                "c",
                "=",
                "'\\''",
                ";",
                "std",
                "::",
                "max"
            ]
        );
        assert!(toks[6].directive, "a continued directive line");
        assert_eq!(toks[6].line, 4);
        assert!(!toks[7].directive);
        assert_eq!(toks[7].line, 5);
    }

    #[test]
    fn raw_strings_numbers_and_prefixes() {
        assert_eq!(texts("R\"x(a)\" b)x\" n"), ["R\"x(a)\" b)x\"", "n"]);
        assert_eq!(texts("1.5e-3f+0x1F"), ["1.5e-3f", "+", "0x1F"]);
        assert_eq!(texts("u8\"a\" L'b'"), ["u8\"a\"", "L'b'"]);
    }

    #[test]
    fn what_cannot_be_read() {
        assert_eq!(tokenize("a\n/* open").unwrap_err().line, 2);
        assert!(tokenize("\"open\nx").is_err());
        assert!(tokenize("R\"x(open").is_err());
        assert!(tokenize("'").is_err());
        assert_eq!(
            texts("#error don't\nx"),
            ["#", "error", "don", "'", "t", "x"]
        );
    }
}
