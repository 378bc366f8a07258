//! `merge`: joins the results files of shards (`KERNELGATE_SHARD=k/n` on n runners) into one,
//! for reports and `kernelgate compare`.

use super::results::{Identical, Results, SavedFrom};
use super::results_file::ResultsError;

/// Merges `inputs`: one device fingerprint, no trial twice, trials in input order; the
/// earliest start time, the first file's commit and branch.
pub fn merge(inputs: &[Results]) -> Result<Results, ResultsError> {
    let first = inputs.first().ok_or(ResultsError::NothingToMerge)?;
    let mut out = first.clone();
    out.trials.clear();
    out.identical = None;
    out.sass.clear();
    for r in inputs {
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
        if let (Some(a), Some(b)) = (&out.device, &r.device) {
            if a != b {
                return Err(ResultsError::OtherGpus(a.describe(), b.describe()));
            }
        }
        if out.device.is_none() {
            out.device = r.device.clone();
            out.device_info = r.device_info.clone();
        }
        // The run started when its first shard did; every shard's suites are the run's.
        if let Some(s) = &r.provenance.started {
            if out.provenance.started.as_ref().is_none_or(|o| s < o) {
                out.provenance.started = Some(s.clone());
            }
        }
        for (name, digest) in &r.provenance.suites {
            out.provenance
                .suites
                .entry(name.clone())
                .or_insert_with(|| digest.clone());
        }
        for t in &r.trials {
            if out.trials.iter().any(|x| x.name == t.name) {
                return Err(ResultsError::TrialTwice(t.name.clone()));
            }
            out.trials.push(t.clone());
        }
    }
    Ok(out)
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
