//! `closest`: "did you mean" — the known name nearest a misspelt one, by edit distance, for every
//! place a person names something kernelgate knows: `KERNELGATE_*` variables, suite keys and
//! table entries, buffer and kernel names, size names. (Commands and flags get clap's.)

/// The name among `known` closest to `name` (Levenshtein distance, ASCII case ignored), when it
/// is close enough to be what was meant: at most a third of the longer name's length, 1 edit
/// from 3 characters on, 2 from 6 (a swap of neighbours is one edit). Names of one or two
/// letters are all that close to each other, so they get no suggestion but for case.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    known
        .into_iter()
        .map(|k| {
            let k_lower = k.to_ascii_lowercase();
            // A start of the name (`out` for `output`) is as good as one edit.
            let prefix = lower.len() >= 3 && k_lower.starts_with(&lower);
            // Optimal string alignment: a swap of neighbours is one edit (`scael` for `scale`).
            let d = if prefix {
                1
            } else {
                strsim::osa_distance(&lower, &k_lower)
            };
            (d, k)
        })
        .filter(|(d, k)| {
            let longest = name.len().max(k.len());
            let allowed = match longest {
                0..=2 => 0,
                3..=5 => 1,
                _ => (longest / 3).max(2),
            };
            *k != name && *d <= allowed
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// ` (did you mean `x`?)`, or nothing when no known name is close.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(name, known)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// `names` each in backticks, joined by `sep`: "`a`, `b`".
pub fn quoted<T: std::fmt::Display>(names: impl IntoIterator<Item = T>, sep: &str) -> String {
    let quoted: Vec<String> = names.into_iter().map(|n| format!("`{n}`")).collect();
    quoted.join(sep)
}

/// `items` joined by `sep`, or `none` when there are none.
pub fn joined_or_none<T: AsRef<str>>(items: &[T], sep: &str) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(sep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested_far_ones_not() {
        let keys = [
            "max_slowdown",
            "min_samples",
            "max_samples",
            "bytes",
            "flops",
        ];
        assert_eq!(closest("max_slowdwn", keys), Some("max_slowdown"));
        assert_eq!(closest("min_sample", keys), Some("min_samples"));
        assert_eq!(closest("byts", keys), Some("bytes"));
        assert_eq!(closest("colour", keys), None);
        assert_eq!(closest("bytes", keys), None, "not a misspelling");
        assert_eq!(closest("RTOL", ["rtol", "atol"]), Some("rtol"));
        assert_eq!(did_you_mean("flop", keys), " (did you mean `flops`?)");
        assert_eq!(did_you_mean("zzz", keys), "");
        assert_eq!(
            closest("scael", ["scale", "shape"]),
            Some("scale"),
            "a swap is one edit"
        );
        assert_eq!(closest("f23", ["f32", "f64", "i32"]), Some("f32"));
        assert_eq!(closest("out", ["input", "output", "inout"]), Some("output"));
    }
}
