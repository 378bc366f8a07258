//! Phase `sweep`: the sizes of `[suite]` (`sizes = { n = [4096, 65536] }`) and how they combine
//! into cases (`sweep = "product"`, every combination, or `"zip"`, the lists side by side).

use super::ctx::{choice, is_ident, Ctx};
use super::schema::RawSuite;

/// The sizes and how they combine, checked.
pub(super) struct Sweep {
    /// Each size's name and values, in the order written.
    pub sizes: Vec<(String, Vec<i64>)>,
    /// `sweep = "zip"`: the lists side by side rather than every combination.
    pub zip: bool,
    /// Where `sizes` was written (or `[suite]`): where errors about cases point.
    pub at: usize,
}

impl Sweep {
    /// The sizes' names: what expressions may refer to.
    pub fn names(&self) -> Vec<String> {
        self.sizes.iter().map(|(k, _)| k.clone()).collect()
    }
}

/// Reads `sizes` and `sweep` of `[suite]` (written at `suite_at`); errors are recorded.
pub(super) fn sweep(ctx: &mut Ctx, rs: &RawSuite, suite_at: usize) -> Sweep {
    let at = rs.sizes.as_ref().map_or(suite_at, |s| s.span().start);
    let zip = rs.sweep.as_ref().is_some_and(|s| s.get_ref() == "zip");
    let sizes = values(ctx, rs.sizes.as_ref(), (at, "size"), zip);
    // The word is checked after the sizes, whose errors come first.
    if let Some(s) = &rs.sweep {
        let words = [("product", false), ("zip", true)];
        let fix =
            "write \"product\" for every combination or \"zip\" to pair lists element by element";
        choice(ctx, s.span().start, s.get_ref(), &words, "sweep", fix);
    }
    if zip && sizes.windows(2).any(|w| w[0].1.len() != w[1].1.len()) {
        ctx.error(
            at,
            "`sweep = \"zip\"` needs every size list to have the same length",
        );
    }
    Sweep { sizes, zip, at }
}

/// Each size's (or a kernel's axis's: `noun`) values: an integer or a non-empty list of them,
/// none negative; an error at the value. A size whose values are wrong still names a size (its
/// expressions are not also "unknown size" errors): it gets the value 1.
/// In a product sweep (not `zipped`) a value written twice in one list is an error at its second
/// writing, and the case is made once.
pub(super) fn values(
    ctx: &mut Ctx,
    table: Option<&toml::Spanned<super::schema::SizeTable>>,
    (at, noun): (usize, &str),
    zipped: bool,
) -> Vec<(String, Vec<i64>)> {
    let mut sizes = Vec::new();
    let Some(table) = table else {
        return sizes;
    };
    for (k, spanned) in &table.get_ref().0 {
        let value_at = spanned.span().start;
        // The integers written, and how many values are written.
        let (values, count): (Vec<i64>, usize) = match spanned.get_ref() {
            toml::Value::Integer(i) => (vec![*i], 1),
            toml::Value::Array(a) => (a.iter().filter_map(|x| x.as_integer()).collect(), a.len()),
            _ => (vec![], 1),
        };
        if !is_ident(k) || k.contains('-') {
            ctx.error(
                at,
                format!("{noun} name `{k}` must be letters, digits or `_`"),
            );
        } else if values.is_empty() || values.len() != count || values.iter().any(|v| *v < 0) {
            ctx.error(
                value_at,
                format!("{noun} `{k}` must be a non-negative integer or a non-empty list of them, as in `{k} = [1024, 4096]`"),
            );
            sizes.push((k.clone(), vec![1]));
        } else {
            let mut once: Vec<i64> = Vec::new();
            for (j, value) in values.iter().enumerate() {
                if !zipped && once.contains(value) {
                    let made = if noun == "size" {
                        "its cases"
                    } else {
                        "its variants"
                    };
                    ctx.error(
                        element_at(ctx.text, value_at, j),
                        format!("{noun} `{k}` has the value {value} twice: {made} would be made twice (remove one)"),
                    );
                    continue;
                }
                once.push(*value);
            }
            sizes.push((k.clone(), once));
        }
    }
    sizes
}

/// Where element `j` of the array written at `at` in `text` starts (`at` itself when it cannot
/// be told: not an array, or fewer elements).
fn element_at(text: &str, at: usize, j: usize) -> usize {
    let Some(rest) = text.get(at..).and_then(|r| r.strip_prefix('[')) else {
        return at;
    };
    let mut start = at + 1;
    let mut index = 0;
    for (i, c) in rest.char_indices() {
        match c {
            ',' if index < j => {
                index += 1;
                start = at + 1 + i + 1;
            }
            ']' => break,
            _ => {}
        }
    }
    if index < j {
        return at;
    }
    let skipped = text[start..].len() - text[start..].trim_start().len();
    start + skipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::ctx::tests::{messages, parsed};
    use std::path::Path;

    fn read(suite: &str) -> (Sweep, Vec<String>) {
        let (raw, text) = parsed(&format!("[suite]\nname = \"s\"\n{suite}"));
        let mut ctx = Ctx::new(Path::new("s.toml"), &text);
        let s = sweep(&mut ctx, raw.suite.get_ref(), raw.suite.span().start);
        (s, messages(&ctx))
    }

    #[test]
    fn sizes_in_order_with_their_values() {
        let (s, m) = read("sizes = { n = [1, 2], k = 7 }\nsweep = \"product\"\n");
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(s.sizes, [("n".into(), vec![1, 2]), ("k".into(), vec![7])]);
        assert!(!s.zip);
        assert_eq!(s.names(), ["n", "k"]);
        let (s, m) = read("");
        assert!(s.sizes.is_empty() && m.is_empty());
    }

    /// A value written twice in a product sweep: at the second writing, the case made once; in
    /// a zip sweep the pairs differ, and nothing is said.
    #[test]
    fn a_repeated_value_is_an_error_where_it_is_repeated() {
        let (s, m) = read("sizes = { n = [256, 1_024,\n  256], k = 7 }\n");
        assert_eq!(
            m,
            ["4:3: size `n` has the value 256 twice: its cases would be made twice (remove one)"]
        );
        assert_eq!(s.sizes[0].1, [256, 1024]);
        let (s, m) = read("sizes = { n = [1, 1], k = [2, 3] }\nsweep = \"zip\"\n");
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(s.sizes[0].1, [1, 1]);
    }

    #[test]
    fn bad_sizes_are_errors_at_their_values_and_sweeps_at_the_table() {
        let (_, m) = read("sizes = { n = [1, -2], x = \"big\" }\n");
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].starts_with("3:15: size `n` must be a non-negative integer"),
            "{m:?}"
        );
        assert!(m[1].starts_with("3:28: size `x`"), "{m:?}");
        let (s, m) = read("sizes = { n = [1, 2], k = [3] }\nsweep = \"zip\"\n");
        assert!(s.zip);
        assert_eq!(
            m,
            ["3:9: `sweep = \"zip\"` needs every size list to have the same length"]
        );
        let (_, m) = read("sweep = \"diagonal\"\n");
        assert!(m[0].starts_with("3:9: unknown sweep `diagonal`"), "{m:?}");
    }
}
