//! `State`: what one trial record says at a glance, and its place in a size sweep — read from
//! the typed record only.

pub use crate::report::reading::State;
use crate::report::results::TrialRecord;

/// `suite::kernel::case` split into its kernel and case (`("compile", "")` for a compile
/// trial, `(kernel, "")` for a suite without sizes).
pub fn kernel_and_case(t: &TrialRecord) -> (&str, &str) {
    let rest = t
        .name
        .strip_prefix(t.suite.as_str())
        .and_then(|r| r.strip_prefix("::"))
        .unwrap_or(&t.name);
    rest.split_once("::").unwrap_or((rest, ""))
}

/// The sizes of a case label `m=64,n=128`.
pub fn sizes(case: &str) -> Vec<(&str, f64)> {
    case.split(',')
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| v.trim().parse().ok().map(|v| (k.trim(), v)))
        .collect()
}

/// The size to draw a suite's sweep against: the first size whose value differs between
/// the cases, or `None` when the suite has one case.
pub fn sweep_axis<'a>(cases: impl Iterator<Item = &'a str> + Clone) -> Option<String> {
    let first = cases.clone().find(|c| !c.is_empty())?;
    sizes(first)
        .into_iter()
        .map(|(k, _)| k)
        .find(|key| {
            let mut values = (cases.clone())
                .filter_map(|c| sizes(c).into_iter().find(|(k, _)| k == key).map(|(_, v)| v));
            let first = values.next();
            values.any(|v| Some(v) != first)
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sweeps() {
        assert_eq!(sizes("m=64,n=128"), vec![("m", 64.0), ("n", 128.0)]);
        assert_eq!(sizes(""), vec![]);
        let cases = ["m=64,n=128", "m=64,n=256"];
        assert_eq!(sweep_axis(cases.iter().copied()).as_deref(), Some("n"));
        assert_eq!(sweep_axis(["n=4"].iter().copied()), None);
        let with_compile = ["", "n=4", "n=8"];
        assert_eq!(
            sweep_axis(with_compile.iter().copied()).as_deref(),
            Some("n")
        );
    }
}
