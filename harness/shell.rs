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
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// A command's leading `NAME=value` words (with the space after them) and the rest.
pub fn split_variables(command: &str) -> (String, String) {
    let mut vars = String::new();
    let mut rest = command;
    while let Some((word, after)) = rest.split_once(' ') {
        let is_var = word.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        });
        if !is_var {
            break;
        }
        vars.push_str(word);
        vars.push(' ');
        rest = after;
    }
    (vars, rest.to_string())
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
        assert_eq!(
            split_variables("KERNELGATE_BASE=main K_2=x ./kernelgate run --exact 'a b'"),
            (
                "KERNELGATE_BASE=main K_2=x ".to_string(),
                "./kernelgate run --exact 'a b'".to_string()
            )
        );
        assert_eq!(split_variables("cargo test").0, "");
    }
}
