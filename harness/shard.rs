//! `split`: which trials shard `k` of `n` runs (`KERNELGATE_SHARD=k/n`, or the CI's own
//! parallel-job variables, `config`). Where the committed baselines record what trials cost
//! (`trial_seconds`, averaged over the devices that recorded them), the trials are dealt by
//! cost — the longest first, each to the least loaded shard — so the shards take about as long;
//! a trial no baseline records counts as the median cost. Every shard reads the same files and
//! so computes the same split. Without any recorded cost, a stable hash of each name decides
//! (`config::in_shard`).

use crate::baseline::BaselineFile;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Each trial's recorded seconds in `files` (the stored baselines), averaged over the devices
/// that recorded it.
pub fn costs(files: &[(PathBuf, BaselineFile)]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (_, file) in files {
        for (name, entry) in &file.trials {
            if let Some(s) = entry.trial_seconds {
                let sum = sums.entry(name.clone()).or_default();
                *sum = (sum.0 + s, sum.1 + 1.0);
            }
        }
    }
    sums.into_iter().map(|(k, (s, n))| (k, s / n)).collect()
}

/// Whether each of `names` is shard `k` of `n`'s; the shards' recorded loads (seconds, as
/// `costs` says; `None` where the hash decided).
pub fn split(
    names: &[&str],
    (k, n): (u64, u64),
    costs: &BTreeMap<String, f64>,
) -> (Vec<bool>, Option<Vec<f64>>) {
    let mut known: Vec<f64> = names
        .iter()
        .filter_map(|t| costs.get(*t).copied())
        .collect();
    if known.is_empty() {
        let hashed = names
            .iter()
            .map(|t| crate::config::in_shard(t, (k, n)))
            .collect();
        return (hashed, None);
    }
    known.sort_by(f64::total_cmp);
    let median = known[known.len() / 2];
    let cost = |i: usize| costs.get(names[i]).copied().unwrap_or(median);
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| cost(b).total_cmp(&cost(a)).then(names[a].cmp(names[b])));
    let mut load = vec![0.0_f64; n as usize];
    let mut mine = vec![false; names.len()];
    for i in order {
        // The first of the least loaded, so every shard deals alike.
        let s = (0..load.len())
            .min_by(|&a, &b| load[a].total_cmp(&load[b]))
            .unwrap_or(0);
        load[s] += cost(i);
        mine[i] = s as u64 == k - 1;
    }
    (mine, Some(load))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_costs_deal_the_trials_evenly_and_alike_in_every_shard() {
        let names: Vec<String> = (0..40).map(|i| format!("s::k::n={i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        // Ten trials cost 10 s, the rest 1 s; one is not recorded (counted as the median).
        let costs: BTreeMap<String, f64> = names[1..]
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), if i < 10 { 10.0 } else { 1.0 }))
            .collect();
        let shards: Vec<(Vec<bool>, Option<Vec<f64>>)> =
            (1..=4).map(|k| split(&names, (k, 4), &costs)).collect();
        // Every trial in exactly one shard; every shard computed the same loads.
        for i in 0..names.len() {
            assert_eq!(
                shards.iter().filter(|(m, _)| m[i]).count(),
                1,
                "{}",
                names[i]
            );
        }
        let loads = shards[0].1.clone().unwrap();
        assert!(shards.iter().all(|(_, l)| l.as_ref() == Some(&loads)));
        assert_eq!(loads.iter().sum::<f64>(), 130.0);
        assert!(loads.iter().all(|l| (30.0..=35.0).contains(l)), "{loads:?}");
        // The hash splits 10 s trials unevenly here: 4 shards of 40 names by hash vary more.
        let (hashed, none) = split(&names, (1, 4), &BTreeMap::new());
        assert_eq!(none, None);
        let by_hash: Vec<bool> = names
            .iter()
            .map(|t| crate::config::in_shard(t, (1, 4)))
            .collect();
        assert_eq!(hashed, by_hash);
    }
}
