//! `merge`: joins the results files of shards (`KERNELGATE_SHARD=k/n` on n runners) into one,
//! for reports and `kernelgate compare`.

use super::results::Results;
use super::results_file::ResultsError;

/// Merges `inputs`: one device fingerprint, no trial twice, trials in input order; the
/// earliest start time, the first file's commit and branch.
pub fn merge(inputs: &[Results]) -> Result<Results, ResultsError> {
    let first = inputs.first().ok_or(ResultsError::NothingToMerge)?;
    let mut out = first.clone();
    out.trials.clear();
    for r in inputs {
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
