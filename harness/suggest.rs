//! `closest`: "did you mean" — the known name nearest a misspelt one, by edit distance, for every
//! place a person names something kernelgate knows: `KERNELGATE_*` variables, suite keys and
//! table entries, buffer and kernel names, size names. (Commands and flags get clap's.)

/// The name among `known` closest to `name` (Levenshtein distance, ASCII case ignored), when it
/// is close enough to be what was meant: at most a third of the longer name's length, and at
/// least 1 edit allowed, 2 from 6 characters on.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    known
        .into_iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), k))
        .filter(|(d, k)| {
            let longest = name.len().max(k.len());
            let allowed = (longest / 3).max(if longest >= 6 { 2 } else { 1 });
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

/// Levenshtein distance, by bytes.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
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
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
