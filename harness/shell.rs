//! Shell words: what the commands kernelgate prints are made of, so a person can paste them.

/// How the trials are run again where nothing says how this run was started: the perf binary
/// under cargo.
pub const DEFAULT_LAUNCHER: &str = "cargo test --test perf --";

/// `text` as one shell word: as it is when it needs no quoting, else in single quotes.
pub fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=+,@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        quoted(text)
    }
}

/// `text` in single quotes, as one shell word whatever it holds (a trial name: `'saxpy::vec4::n=4096'`).
pub fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_where_needed() {
        assert_eq!(shell_word("origin/main"), "origin/main");
        assert_eq!(shell_word("HEAD~1"), "'HEAD~1'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
