//! `locate`: where a TOML syntax error really is. The parser names the place it gave up, which
//! for an unclosed array, inline table or multi-line string is lines below where it was opened
//! (seen: an unclosed `args = [` reported at the next `[check]` header); this scanner finds the
//! opener. `utf8` places an encoding error at the bad byte's line.

use crate::error::{line_col, Diagnostic};
use std::path::Path;

/// `bytes` as text, or a diagnostic at the first byte that is not UTF-8.
pub(super) fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = e.valid_up_to();
        // The prefix up to `good` is valid UTF-8 by definition.
        let prefix = std::str::from_utf8(&bytes[..good]).unwrap_or("");
        let message = format!("byte 0x{:02x} is not UTF-8 (suite files and kernel sources are UTF-8 text: re-save the file as UTF-8)", bytes[good]);
        Diagnostic::at(path, prefix, good, message)
    })
}

/// The byte offsets and messages to report for a TOML parse error in `text`: one, or for a
/// duplicate key or table two — at the first definition and at the second.
pub(super) fn locate(text: &str, e: &toml::de::Error) -> Vec<(usize, String)> {
    let at = e.span().map(|s| s.start).unwrap_or(0);
    let mut message = e.message().trim().to_string();
    if message.contains("missing field `suite`") {
        message.push_str(" (start the file with a `[suite]` table holding `name`)");
    }
    if message == "duplicate key" {
        if let Some(both) = duplicate(text, at, e.span().map_or(at, |s| s.end)) {
            return both;
        }
        message.push_str(" (a key is written once per table, and a `[table]` once per file: remove one, or write `[[kernel]]`-style headers for a list of tables)");
    }
    if let Some(misplaced) = misplaced_header(text, at, &message) {
        return vec![misplaced];
    }
    message.push_str(&unknown_field_hint(&message));
    message.push_str(invalid_type_hint(&message));
    vec![place(text, at, e.span().is_none(), message)]
}

/// For a key a table does not take but the table before it does (`grid` under a `[check]`
/// written right after a `[[kernel]]`): the mistake is the header above the key, written too
/// early. An error at that header, naming the key, its line and the table it belongs to. (A key
/// of some other table — `output` under `[[buffer]]` — is the unknown key it looks like.)
fn misplaced_header(text: &str, at: usize, message: &str) -> Option<(usize, String)> {
    let key = message.strip_prefix("unknown field `")?.split('`').next()?;
    let header = header_above(text, at)?;
    let written = text[header..].lines().next()?.trim();
    let before = text[header_above(text, header.checked_sub(1)?)?..]
        .lines()
        .next()?
        .trim();
    let belongs: Vec<&str> = super::schema::table_keys()
        .into_iter()
        .filter(|(table, keys)| keys.iter().any(|k| k == key) && !written.starts_with(table))
        .filter(|(table, _)| before.starts_with(table))
        .map(|(table, _)| table)
        .collect();
    if belongs.is_empty() {
        return None;
    }
    let (line, _) = line_col(text, at);
    let tables = crate::suggest::quoted(belongs, " or ");
    let offset = header + text[header..].find('[').unwrap_or(0);
    Some((offset, format!(
        "`{written}` is written before `{key}` (line {line}), a key of {tables}, not of `{written}`: a key belongs to the nearest header above it, so this header is in the wrong place (move it below that table's keys)"
    )))
}

/// The offset of the line of the nearest `[table]` header above the line of `end`.
fn header_above(text: &str, end: usize) -> Option<usize> {
    let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
    text[..line_start]
        .rmatch_indices('\n')
        .map(|(i, _)| i + 1)
        .chain([0])
        .find(|&i| text[i..].trim_start().starts_with('['))
}

/// `at` and `message` for a parse error, moved to the opener of an array, inline table or
/// multi-line string left open before `at` (where the parser gave up).
fn place(text: &str, at: usize, unplaced: bool, message: String) -> (usize, String) {
    match unclosed(text) {
        Some((open, kind)) if open < at || unplaced => {
            let (what, close) = match kind {
                Opener::Array => ("array", "`]`"),
                Opener::Table => ("inline table", "`}`"),
                Opener::String(q) => ("multi-line string", q),
            };
            let (line, _) = line_col(text, at);
            (
                open,
                format!("this {what} is never closed: add {close} to end it (the parser gave up at line {line}: {message})"),
            )
        }
        _ => (at, message),
    }
}

/// For "unknown field `soruce`, expected one of `name`, `source`, ...": ` (did you mean
/// `source`?)`, or nothing.
fn unknown_field_hint(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return String::new();
    };
    let Some((name, expected)) = rest.split_once('`') else {
        return String::new();
    };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    crate::suggest::did_you_mean(name, known)
}

/// For "invalid type: ..., expected ...": what to write instead.
fn invalid_type_hint(message: &str) -> &'static str {
    if !message.starts_with("invalid type:") {
        return "";
    }
    let expected = message.rsplit("expected ").next().unwrap_or("");
    match expected {
        "a boolean" => " (write true or false, without quotes)",
        "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" => {
            " (write a whole number, without quotes)"
        }
        "f32" | "f64" => " (write a number, without quotes)",
        "a string" => " (write it in quotes)",
        "a sequence" => " (write a list in brackets: [ ... ])",
        _ => "",
    }
}

/// A key or `[table]` defined twice (the parser names the second, `at..end`): an error at
/// each definition, each naming the other's line; `None` when the first is not found.
fn duplicate(text: &str, at: usize, end: usize) -> Option<Vec<(usize, String)>> {
    let name = text.get(at..end)?.trim_matches(|c| c == '"' || c == '\'');
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("").trim();
    let header = line.starts_with('[');
    let first = if header {
        // The same header, earlier: `[check]` (not `[[kernel]]`, which repeats).
        let mut offset = 0;
        text.lines()
            .map(|l| {
                let here = offset;
                offset += l.len() + 1;
                (here, l)
            })
            .take_while(|(o, _)| *o < line_start)
            .find(|(_, l)| l.trim() == line)
            .map(|(o, l)| o + l.find(name).unwrap_or(0))
    } else {
        // The same key earlier in this table: from its header (or the file's start) on.
        let table = header_above(text, at).unwrap_or(0);
        key_in(&text[table..at], name).map(|o| table + o)
    }?;
    let (line_of, _) = line_col(text, at);
    let (first_line, _) = line_col(text, first);
    let what = if header {
        format!("table `{line}`")
    } else {
        format!("key `{name}`")
    };
    Some(vec![
        (first, format!("{what} is written here and again at line {line_of} (a key is written once per table, a `[table]` once per file: keep one)")),
        (at, format!("{what} is written again here, first at line {first_line} (a key is written once per table, a `[table]` once per file: keep one)")),
    ])
}

/// The offset in `text` of the key `name` written as `name =` (at a line's start or inside an
/// inline table), if it is.
fn key_in(text: &str, name: &str) -> Option<usize> {
    text.match_indices(name).find_map(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].trim_start();
        let starts = before.is_none_or(|c| c.is_whitespace() || c == '{' || c == ',');
        (starts && after.starts_with('=')).then_some(i)
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Opener {
    Array,
    Table,
    String(&'static str),
}

/// The outermost array, inline table or multi-line string left open at the end of `text`,
/// with its offset; `None` when every opener is closed or the brackets do not nest (then the
/// parser's own position is the right one).
fn unclosed(text: &str) -> Option<(usize, Opener)> {
    let b = text.as_bytes();
    let mut stack: Vec<(usize, Opener)> = Vec::new();
    let mut line_start = true;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            continue;
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let triple = b.get(i..i + 3).is_some_and(|t| t.iter().all(|x| *x == c));
                if triple {
                    let q: &'static str = if c == b'"' { "`\"\"\"`" } else { "`'''`" };
                    let end = text[i + 3..].find(if c == b'"' { "\"\"\"" } else { "'''" });
                    match end {
                        Some(e) => i += 3 + e + 3,
                        None => return Some((i, Opener::String(q))),
                    }
                    continue;
                }
                // A one-line string: ends at its quote (skipping escapes in "...") or the line.
                i += 1;
                while i < b.len() && b[i] != c && b[i] != b'\n' {
                    if c == b'"' && b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            b'[' if at_line_start && stack.is_empty() => {
                // A table header: runs to its line's end.
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'[' => stack.push((i, Opener::Array)),
            b'{' => stack.push((i, Opener::Table)),
            b']' | b'}' => {
                let want = if c == b']' {
                    Opener::Array
                } else {
                    Opener::Table
                };
                if stack.pop().map(|(_, k)| k) != Some(want) {
                    return None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    stack.first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_opener() {
        let t = "[suite]\nargs = [\"x\",\n \"y\",\n\n[check]\nrtol = 1\n";
        assert_eq!(unclosed(t), Some((15, Opener::Array)));
        let t = "a = { n = [1, 2], m = 3\n[check]\n";
        assert_eq!(unclosed(t), Some((4, Opener::Table)));
        assert_eq!(unclosed("a = [1, \"]\", '[' ] # [\n[x]\n"), None);
        assert_eq!(unclosed("a = [1}\n"), None);
        assert!(matches!(
            unclosed("x = \"\"\"abc\n"),
            Some((4, Opener::String(_)))
        ));
    }

    #[test]
    fn bad_bytes_name_their_line() {
        let d = utf8(Path::new("s.toml"), b"[suite]\nname = \"a\xff\"\n").unwrap_err();
        assert_eq!((d.line, d.col), (2, 10));
        assert!(d.message.contains("0xff"), "{}", d.message);
    }
}
