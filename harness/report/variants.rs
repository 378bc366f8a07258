//! `best`: a kernel's variants (`tile[TILE=16]`, declared by its axes) compared case by case —
//! the fastest by median, the slowest, and which was fastest in the baseline where that differs
//! (a change in the best variant is reported, never failed: each variant is gated on its own).

use super::results::{Results, TrialRecord};

/// One case of a kernel with variants.
#[derive(Debug, Clone, PartialEq)]
pub struct Best {
    /// `suite::kernel::case`, the kernel without its variant.
    pub trial: String,
    /// How many of its variants were measured.
    pub variants: usize,
    /// The fastest: its axis values (`[TILE=16]`), median seconds and speedup.
    pub fastest: (String, f64, Option<f64>),
    /// The slowest: its axis values and median seconds.
    pub slowest: (String, f64),
    /// The fastest in the baseline (or the paired base) where it is another variant.
    pub was: Option<String>,
}

/// `suite::kernel[..]::case` split into `suite::kernel::case` and `[..]`; `None` for a trial
/// that is no variant.
fn split(name: &str) -> Option<(String, &str)> {
    let open = name.find('[')?;
    let close = open + name[open..].find(']')?;
    Some((
        format!("{}{}", &name[..open], &name[close + 1..]),
        &name[open..=close],
    ))
}

/// Every case of a kernel with two or more measured variants, in the order of the results.
pub fn best(results: &Results) -> Vec<Best> {
    let measured = results.trials.iter().filter(|t| t.measurement.is_some());
    let groups = crate::order::grouped(measured.filter_map(|t| {
        let (trial, variant) = split(&t.name)?;
        Some((trial, (variant, t)))
    }));
    let median = |t: &TrialRecord| t.measurement.as_ref().map_or(f64::NAN, |m| m.time.median);
    let baseline = |t: &TrialRecord| {
        let samples = &t.measurement.as_ref()?.baseline_samples;
        crate::stats::Summary::of(samples).map(|s| s.median)
    };
    let kernels = groups.into_iter().filter(|(_, m)| m.len() >= 2);
    kernels
        .filter_map(|(trial, members)| {
            let order = |a: &&(&str, &TrialRecord), b: &&(&str, &TrialRecord)| {
                median(a.1).total_cmp(&median(b.1))
            };
            let (fast, slow) = (members.iter().min_by(order)?, members.iter().max_by(order)?);
            // The fastest in what they were compared with, where two or more were compared.
            let compared: Vec<(f64, &str)> = (members.iter())
                .filter_map(|(variant, t)| Some((baseline(t)?, *variant)))
                .collect();
            let was = (compared.iter().min_by(|a, b| a.0.total_cmp(&b.0)))
                .filter(|_| compared.len() >= 2)
                .map(|m| m.1.to_string())
                .filter(|v| v != fast.0);
            let speedup = fast.1.measurement.as_ref().and_then(|m| m.speedup);
            Some(Best {
                trial,
                variants: members.len(),
                fastest: (
                    fast.0.to_string(),
                    median(fast.1),
                    speedup.map(|s| s.median),
                ),
                slowest: (slow.0.to_string(), median(slow.1)),
                was,
            })
        })
        .collect()
}

/// One line per case of a kernel with variants: the fastest and the slowest.
pub fn lines(results: &Results) -> Vec<String> {
    best(results)
        .into_iter()
        .map(|b| {
            let speedup = b
                .fastest
                .2
                .map_or(String::new(), |s| format!(", {s:.2}× the reference"));
            let was = b.was.as_ref().map_or(String::new(), |w| {
                format!("; the fastest was {w} in what it was compared with (reported, not failed)")
            });
            format!(
                "{}: fastest of {} variants {} at {}{speedup}, slowest {} at {}{was}",
                b.trial,
                b.variants,
                b.fastest.0,
                super::duration(b.fastest.1),
                b.slowest.0,
                super::duration(b.slowest.1),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_splits_from_its_kernel() {
        assert_eq!(
            split("m::tile[TILE=8,U=1]::n=256"),
            Some(("m::tile::n=256".to_string(), "[TILE=8,U=1]"))
        );
        assert_eq!(
            split("m::tile[TILE=8]"),
            Some(("m::tile".to_string(), "[TILE=8]"))
        );
        assert_eq!(split("m::tiled::n=256"), None);
    }

    /// Two kernels of a real run renamed as two variants of one: the faster is the best in each
    /// case, and a baseline in which the other was faster is said.
    #[test]
    fn the_fastest_variant_per_case_and_a_change_of_it() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/results/h200-run.json");
        let mut results: Results =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for t in &mut results.trials {
            t.name = t
                .name
                .replace("::cub_warp_reductions::", "::cub[algo=1]::")
                .replace("::cub_raking::", "::cub[algo=2]::");
        }
        let found = best(&results);
        assert_eq!(found.len(), 2, "{found:?}");
        let medians = |case: &str| {
            let m = |v: &str| {
                let name = format!("blockreduce::cub[algo={v}]::{case}");
                let t = results.trials.iter().find(|t| t.name == name).unwrap();
                t.measurement.as_ref().unwrap().time.median
            };
            (m("1"), m("2"))
        };
        for b in &found {
            let case = b.trial.rsplit("::").next().unwrap();
            let (one, two) = medians(case);
            let fastest = if one <= two { "[algo=1]" } else { "[algo=2]" };
            assert_eq!(b.fastest.0, fastest);
            assert_eq!(b.fastest.1, one.min(two));
            assert_eq!(b.slowest.1, one.max(two));
            assert_eq!((b.variants, b.was.as_deref()), (2, None));
        }
        // The baseline had the slower variant faster.
        let case = found[0].trial.rsplit("::").next().unwrap().to_string();
        let (one, two) = medians(&case);
        for t in &mut results.trials {
            if let (Some((trial, v)), Some(m)) = (split(&t.name), t.measurement.as_mut()) {
                if trial == found[0].trial {
                    let fast_now = (v == "[algo=1]") == (one <= two);
                    m.baseline_samples = vec![if fast_now { 2.0 } else { 1.0 }; 5];
                }
            }
        }
        let again = best(&results);
        let other = if one <= two { "[algo=2]" } else { "[algo=1]" };
        assert_eq!(again[0].was.as_deref(), Some(other));
        let line = &lines(&results)[0];
        assert!(line.contains(&format!("the fastest was {other}")), "{line}");
    }
}
