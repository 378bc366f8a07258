//! `Diagnostic` and the harness's error types: every error a user can cause names the file and
//! place, says what is wrong in lower case, and says what to write instead.

use std::path::{Path, PathBuf};

/// A problem found in a user's file, at a line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{col}: {message}", .file.display())]
pub struct Diagnostic {
    /// The file, as the user named it (relative paths stay relative).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at byte `offset` of `text`, the contents of `file`.
    pub fn at(file: &Path, text: &str, offset: usize, message: impl Into<String>) -> Diagnostic {
        let (line, col) = line_col(text, offset);
        Diagnostic {
            file: file.to_path_buf(),
            line,
            col,
            message: message.into(),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    (line, before[line_start..].chars().count() + 1)
}

/// Everything wrong with the suite files of a run: all of it, not just the first problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .diagnostics.iter().map(|d| format!("error: {d}")).collect::<Vec<_>>().join("\n"))]
pub struct LoadError {
    /// One entry per problem, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let text = "a\nbcd\n\u{e9}f";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 2));
        assert_eq!(
            line_col(text, 8),
            (3, 2),
            "columns count characters, not bytes"
        );
        assert_eq!(line_col(text, 999), (3, 3));
    }
}
