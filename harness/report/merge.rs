//! `merge`: joins the results files of shards (`KERNELGATE_SHARD=k/n` on n runners) into one
//! run, for reports, `kernelgate compare` and the gate of a sharded run: files of one run only
//! (one mode and base, one commit, one revision of each suite), every shard present, no trial
//! twice. Files of several GPU models make a pool: one run per device fingerprint, each merged
//! and decided as its own family, side by side in the reports.

use super::provenance::{Provenance, Shard};
use super::results::{Identical, Results, SavedFrom};
use super::results_file::ResultsError;
use std::path::{Path, PathBuf};

/// Reads every file, in order, for [`merge`].
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Results)>, ResultsError> {
    paths
        .iter()
        .map(|p| Ok((p.clone(), Results::load(p)?)))
        .collect()
}

/// Checks that `inputs` are the files of one run: one mode and base, one commit, one revision
/// of each suite, and — where they were shards — one shard count, each shard once, none missing
/// (`device` names the pool's device the files ran on, for the error).
fn one_run(inputs: &[(PathBuf, Results)], device: Option<String>) -> Result<(), ResultsError> {
    let Some((first_path, first)) = inputs.first() else {
        return Err(ResultsError::NothingToMerge);
    };
    let other = |p: &Path, what: String| ResultsError::OtherRun {
        first: first_path.clone(),
        other: p.to_path_buf(),
        what,
    };
    for (path, r) in &inputs[1..] {
        if r.mode() != first.mode() {
            return Err(other(
                path,
                format!("decided {} and {}", first.mode(), r.mode()),
            ));
        }
        if let (Some(a), Some(b)) = (&first.provenance.commit, &r.provenance.commit) {
            if a != b {
                return Err(other(path, format!("ran commits {a} and {b}")));
            }
        }
        if let Some(suite) = first.provenance.changed_suites(&r.provenance).first() {
            return Err(other(
                path,
                format!("hold different revisions of suite `{suite}` (its file differs)"),
            ));
        }
        if first.provenance.shard.map(|s| s.count) != r.provenance.shard.map(|s| s.count) {
            let word = |s: Option<Shard>| s.map_or("not a shard".into(), |s| format!("shard {s}"));
            return Err(other(
                path,
                format!(
                    "are {} and {}",
                    word(first.provenance.shard),
                    word(r.provenance.shard)
                ),
            ));
        }
    }
    let Some(count) = first.provenance.shard.map(|s| s.count) else {
        return Ok(());
    };
    let mut missing = Vec::new();
    for shard in (1..=count).map(|index| Shard { index, count }) {
        let files: Vec<PathBuf> = inputs
            .iter()
            .filter(|(_, r)| r.provenance.shard == Some(shard))
            .map(|(p, _)| p.clone())
            .collect();
        match files.len() {
            0 => missing.push(shard),
            1 => {}
            _ => return Err(ResultsError::ShardTwice { shard, files }),
        }
    }
    if !missing.is_empty() {
        return Err(ResultsError::MissingShards(missing, device));
    }
    Ok(())
}

/// Merges `inputs` (each with the file it came from) into one run ([`merge_one`]), or, where
/// they ran on several GPU models, into a pool: one run per device fingerprint in the order
/// first given, each checked and merged as one run; a file that ran on no GPU joins the one
/// device's run, or is a run of its own in a pool.
pub fn merge(inputs: &[(PathBuf, Results)]) -> Result<Results, ResultsError> {
    if let Some((path, _)) = inputs.iter().find(|(_, r)| !r.pool.is_empty()) {
        return Err(ResultsError::Pooled(path.clone()));
    }
    let devices = crate::order::first_seen(inputs.iter().filter_map(|(_, r)| r.device.as_ref()));
    if devices.len() < 2 {
        return merge_one(inputs, None);
    }
    // Across the devices, still one run: one mode, commit and revision of each suite (each
    // device's shard count its own).
    let heads: Vec<_> = (devices.iter())
        .filter_map(|d| inputs.iter().find(|(_, r)| r.device.as_ref() == Some(*d)))
        .map(|(p, r)| {
            let mut r = r.clone();
            r.provenance.shard = None;
            (p.clone(), r)
        })
        .collect();
    one_run(&heads, None)?;
    let mut runs = Vec::new();
    for device in devices.into_iter().map(Some).chain([None]) {
        let own = inputs.iter().filter(|(_, r)| r.device.as_ref() == device);
        let own: Vec<(PathBuf, Results)> = own.cloned().collect();
        if !own.is_empty() {
            let name = device.map_or("no GPU".into(), |d| d.describe());
            runs.push(merge_one(&own, Some(name))?);
        }
    }
    let mut out = runs[0].clone();
    out.format = super::results::FORMAT;
    (out.device, out.device_info, out.totals, out.identical) = (None, None, None, None);
    (out.sass_note, out.provenance.incomplete) = (None, None);
    (out.trials, out.sass, out.undecided, out.gone) = Default::default();
    for r in &runs {
        join_provenance(&mut out.provenance, &r.provenance, None);
    }
    out.pool = runs;
    Ok(out)
}

/// Merges the files of one run on one device: checked to be one run's files ([`one_run`]), no
/// trial twice (the error names the file or files it is in), trials in input order; the
/// earliest start time, the first file's commit and branch. The merged run is no shard.
fn merge_one(
    inputs: &[(PathBuf, Results)],
    device: Option<String>,
) -> Result<Results, ResultsError> {
    one_run(inputs, device)?;
    let (_, first) = &inputs[0];
    let mut out = first.clone();
    (out.trials, out.sass, out.identical) = Default::default();
    (out.provenance.shard, out.provenance.incomplete) = (None, None);
    let mut from: Vec<&Path> = Vec::new();
    for (path, r) in inputs {
        out.identical = join_identical(out.identical.take(), r.identical.as_ref());
        for d in &r.sass {
            let same = |x: &&crate::sass::change::KernelDiff| {
                (&x.suite, &x.kernel, &x.arch) == (&d.suite, &d.kernel, &d.arch)
            };
            if !out.sass.iter().any(|x| same(&x)) {
                out.sass.push(d.clone());
            }
        }
        if out.sass_note.is_none() {
            out.sass_note = r.sass_note.clone();
        }
        if out.device.is_none() {
            out.device = r.device.clone();
            out.device_info = r.device_info.clone();
        }
        join_provenance(&mut out.provenance, &r.provenance, Some(path));
        for t in &r.trials {
            if let Some(k) = out.trials.iter().position(|x| x.name == t.name) {
                let mut files = vec![from[k].to_path_buf()];
                if from[k] != path.as_path() {
                    files.push(path.clone());
                }
                return Err(ResultsError::TrialTwice {
                    trial: t.name.clone(),
                    files,
                });
            }
            out.trials.push(t.clone());
            from.push(path);
        }
    }
    out.undecided = decide_again(&mut out.trials);
    Ok(out)
}

/// Joins a shard's (or a device's run's) provenance into the merged run's: a stopped shard
/// leaves the whole run incomplete and says which (`path`, where the line is a file's); the run
/// started when its first shard did; every shard's suites are the run's.
fn join_provenance(out: &mut Provenance, r: &Provenance, path: Option<&Path>) {
    if let Some(why) = &r.incomplete {
        let line = path.map_or(why.clone(), |path| format!("{}: {why}", path.display()));
        out.incomplete = Some(match out.incomplete.take() {
            Some(before) => format!("{before}; {line}"),
            None => line,
        });
    }
    let time = |s: &String| crate::baseline::parse_rfc3339(s);
    if let Some(s) = &r.started {
        if out.started.as_ref().is_none_or(|o| time(s) < time(o)) {
            out.started = Some(s.clone());
        }
    }
    for (name, digest) in &r.suites {
        out.suites
            .entry(name.clone())
            .or_insert_with(|| digest.clone());
    }
}

/// Decides the compared trials of shards again, as one family, as one process would
/// ([`gate::settle_again`]: the re-measures and confirmations the shards made used as made):
/// each one's verdict, family and status. A shard defers its verdicts, so a verdict that fails
/// fails the trial here. Returns the trials left `inconclusive` because their decision needs a
/// re-measure or confirmation their shard did not make.
fn decide_again(trials: &mut [super::results::TrialRecord]) -> Vec<String> {
    use super::results::{GateNote, Status};
    let (at, evidence): (Vec<usize>, Vec<crate::gate::Evidence>) = (trials.iter().enumerate())
        .filter_map(|(i, t)| Some((i, t.evidence.as_deref()?.clone())))
        .unzip();
    let decided = crate::gate::settle_again(&evidence.iter().collect::<Vec<_>>());
    let mut undecided = Vec::new();
    for ((&i, (d, needs)), e) in at.iter().zip(decided).zip(&evidence) {
        let t = &mut trials[i];
        t.verdict = Some(d.verdict);
        if let Some(e) = t.evidence.as_mut() {
            e.merged = true;
        }
        if let Some(
            GateNote::Compared {
                remeasured, family, ..
            }
            | GateNote::Paired {
                remeasured, family, ..
            },
        ) = &mut t.gate
        {
            (*remeasured, *family) = (d.remeasured, d.family);
        }
        if d.verdict.verdict.fails(e.strict) {
            t.status = Status::Failed;
            t.failure = t.failure.max(Some(crate::failure::FailKind::Performance));
        }
        if needs {
            undecided.push(t.name.clone());
        }
    }
    undecided
}

/// The identical-code trials of two shards as one run's: counts and time saved added (the time
/// unknown when either shard's is), the larger noise kept with both shards' counts.
fn join_identical(a: Option<Identical>, b: Option<&Identical>) -> Option<Identical> {
    let Some(b) = b else { return a };
    let Some(a) = a else {
        return Some(b.clone());
    };
    let saved = match (a.saved_seconds, b.saved_seconds) {
        (Some(x), Some(y)) => Some(x + y),
        (x, None) if b.skipped == 0 => x,
        (None, y) if a.skipped == 0 => y,
        _ => None,
    };
    let saved_from = match (a.saved_from, b.saved_from) {
        (Some(x), Some(y)) if x == y => Some(x),
        (Some(_), Some(_)) => Some(SavedFrom::Both),
        (x, y) => x.or(y),
    };
    let noise = match (a.noise, b.noise.clone()) {
        (Some(x), Some(y)) => {
            let size = |n: &super::results::Noise| n.change.slowdown.ln().abs();
            let (regressed, improved) = (x.regressed + y.regressed, x.improved + y.improved);
            let larger = if size(&y) > size(&x) { y } else { x };
            Some(super::results::Noise {
                regressed,
                improved,
                ..larger
            })
        }
        (x, y) => x.or(y),
    };
    Some(Identical {
        skipped: a.skipped + b.skipped,
        timed: a.timed + b.timed,
        saved_seconds: saved.filter(|_| saved_from.is_some()),
        saved_from: saved_from.filter(|_| saved.is_some()),
        noise,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::results::BaseRevision;

    fn file(name: &str, shard: Option<(u64, u64)>, trials: &[&str]) -> (PathBuf, Results) {
        let mut r: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/results/example.json"))
                .unwrap();
        let template = r.trials[0].clone();
        r.trials = trials
            .iter()
            .map(|n| {
                let mut t = template.clone();
                t.name = n.to_string();
                t
            })
            .collect();
        r.provenance.commit = Some("c0ffee".into());
        r.provenance.shard = shard.map(|(index, count)| Shard { index, count });
        (PathBuf::from(name), r)
    }

    fn error(inputs: &[(PathBuf, Results)]) -> String {
        merge(inputs).unwrap_err().to_string()
    }

    #[test]
    fn a_stopped_shard_leaves_the_run_incomplete() {
        let a = file("a.json", Some((1, 2)), &["s::k::n=1"]);
        let mut b = file("b.json", Some((2, 2)), &["s::k::n=2"]);
        b.1.provenance.incomplete = Some("stopped by SIGTERM after 1 of 4 trial(s)".into());
        let merged = merge(&[a.clone(), b]).unwrap();
        assert_eq!(
            merged.provenance.incomplete.as_deref(),
            Some("b.json: stopped by SIGTERM after 1 of 4 trial(s)")
        );
        let text = crate::report::markdown::render(&merged);
        assert!(
            text.contains("**Incomplete:** the run was b.json: stopped by SIGTERM"),
            "{text}"
        );
        let whole = merge(&[a, file("c.json", Some((2, 2)), &["s::k::n=3"])]).unwrap();
        assert_eq!(whole.provenance.incomplete, None);
    }

    #[test]
    fn only_the_files_of_one_run_merge() {
        let a = file("a.json", Some((1, 3)), &["s::k::n=1"]);
        let b = file("b.json", Some((2, 3)), &["s::k::n=2"]);
        let c = file("c.json", Some((3, 3)), &["s::k::n=3"]);
        let merged = merge(&[a.clone(), b.clone(), c.clone()]).unwrap();
        assert_eq!(merged.trials.len(), 3);
        assert_eq!(merged.provenance.shard, None, "the merged run is whole");
        assert_eq!(
            error(&[a.clone(), c.clone()]),
            "shard(s) 2/3 of the run are missing: give every shard's results file"
        );
        assert_eq!(
            error(&[a.clone(), b.clone(), c.clone(), c.clone()]),
            "shard 3/3 is given twice: `c.json`, `c.json`"
        );
        let twice = file("d.json", Some((3, 3)), &["s::k::n=1"]);
        assert_eq!(
            error(&[a.clone(), b.clone(), twice]),
            "trial `s::k::n=1` is in `a.json` and `d.json` (two shards given the same k/n, or one run's file twice)"
        );
        let inside = file("e.json", None, &["s::k::n=1", "s::k::n=1"]);
        assert_eq!(error(&[inside]), "trial `s::k::n=1` is twice in `e.json`");
        let mut paired = b.clone();
        paired.1.base = Some(BaseRevision {
            rev: "origin/main".into(),
            commit: "1234567890abcdef".into(),
        });
        assert!(error(&[a.clone(), paired, c.clone()]).starts_with(
            "`a.json` and `b.json` are not the files of one run: they decided against stored baselines and paired against KERNELGATE_BASE=origin/main"
        ));
        let mut later = b.clone();
        later.1.provenance.commit = Some("beef".into());
        assert!(error(&[a.clone(), later, c.clone()]).contains("ran commits c0ffee and beef"));
        let mut revised = b.clone();
        revised.1.provenance.suites.insert("s".into(), "one".into());
        let mut first = a.clone();
        first.1.provenance.suites.insert("s".into(), "two".into());
        assert!(error(&[first, revised, c.clone()]).contains("different revisions of suite `s`"));
        let whole = file("w.json", None, &["s::k::n=9"]);
        assert!(error(&[a.clone(), whole]).contains("are shard 1/3 and not a shard"));
        // Disjoint suites of one commit, not sharded, merge.
        let x = file("x.json", None, &["x::k"]);
        let y = file("y.json", None, &["y::k"]);
        assert_eq!(merge(&[x, y]).unwrap().trials.len(), 2);
    }

    #[test]
    fn identical_trials_of_shards_add_up() {
        let shard = |skipped, saved: Option<f64>| Identical {
            skipped,
            timed: 0,
            saved_seconds: saved,
            saved_from: saved.map(|_| SavedFrom::ThisRun),
            noise: None,
        };
        let both = join_identical(Some(shard(3, Some(2.0))), Some(&shard(5, Some(4.5)))).unwrap();
        assert_eq!((both.skipped, both.saved_seconds), (8, Some(6.5)));
        assert_eq!(both.saved_from, Some(SavedFrom::ThisRun));
        let unknown = join_identical(Some(shard(3, Some(2.0))), Some(&shard(5, None))).unwrap();
        assert_eq!(
            (unknown.skipped, unknown.saved_seconds, unknown.saved_from),
            (8, None, None)
        );
        assert_eq!(
            join_identical(None, Some(&shard(2, None))).unwrap().skipped,
            2
        );
    }
}
