//! The search against a scripted probe: per commit, its identity (or why it is broken) and
//! what timing it would say; every call recorded.

use super::*;

fn c(slowdown: f64) -> Comparison {
    Comparison {
        slowdown,
        low: slowdown - 0.01,
        high: slowdown + 0.01,
        p: 1e-4,
        p_adjusted: 1e-4,
    }
}

/// Commit `k` of a history: `c0` is good, `c1..=cN` the range.
fn commit(k: usize) -> Commit {
    Commit {
        id: format!("c{k}{}", "0".repeat(39)),
        subject: format!("commit {k}"),
    }
}

/// A scripted commit: its identity (`Err`: broken), and its timing.
struct Script {
    identity: Result<Option<String>, Broken>,
    timed: Timed,
}

struct Scripted {
    commits: Vec<Script>,
    identities: Vec<usize>,
    times: Vec<usize>,
}

impl Scripted {
    fn index(commit: &Commit) -> usize {
        commit.subject["commit ".len()..].parse().unwrap()
    }
}

impl Probe for Scripted {
    fn identity(&mut self, commit: &Commit) -> Result<Option<String>, Broken> {
        let k = Scripted::index(commit);
        self.identities.push(k);
        self.commits[k].identity.clone()
    }
    fn time(&mut self, commit: &Commit) -> Timed {
        let k = Scripted::index(commit);
        self.times.push(k);
        self.commits[k].timed.clone()
    }
}

/// A history of `n` commits after good: regressed from `first` on, each with its own code.
fn history(n: usize, first: usize) -> Vec<Script> {
    (0..=n)
        .map(|k| Script {
            identity: Ok(Some(format!("id{k}"))),
            timed: if k >= first {
                Timed::Regressed(c(1.12))
            } else {
                Timed::Unchanged(Some(c(1.0)))
            },
        })
        .collect()
}

fn run(commits: Vec<Script>) -> (Found, Scripted) {
    let n = commits.len() - 1;
    let mut probe = Scripted {
        commits,
        identities: Vec::new(),
        times: Vec::new(),
    };
    let found = bisect(&commit(0), (1..=n).map(commit).collect(), &mut probe);
    (found, probe)
}

#[test]
fn a_binary_search_finds_the_first_regressed_commit() {
    for first in 1..=16 {
        let (found, probe) = run(history(16, first));
        assert_eq!(found.first, Some(commit(first)), "first = {first}");
        assert!(found.candidates.is_empty() && found.stopped.is_none());
        // bad, then about log2(16) = 4 more.
        assert!(probe.times.len() <= 6, "{first}: {:?}", probe.times);
        assert_eq!(probe.times[0], 16, "bad is confirmed first");
        assert_eq!(found.change_of(&commit(first).id), Some(&c(1.12)));
    }
}

#[test]
fn commits_with_good_s_or_a_decided_commit_s_code_are_not_timed() {
    // c1–c3 change only comments (good's code); c4 regresses; c5–c8 leave c4's code alone.
    let mut h = history(8, 4);
    for script in &mut h[1..=3] {
        script.identity = Ok(Some("id0".into()));
    }
    for script in &mut h[5..=8] {
        script.identity = Ok(Some("id4".into()));
    }
    let (found, probe) = run(h);
    assert_eq!(found.first, Some(commit(4)));
    // Only bad (c8) is timed: c4 has its code, so regressed; c2 and c3 have good's.
    assert_eq!(probe.times, [8]);
    assert_eq!(found.counts(), (1, 3));
    assert_eq!(
        found.change_of(&commit(4).id),
        Some(&c(1.12)),
        "c8's timing"
    );
    for p in &found.probed {
        if let How::SameCode {
            as_commit,
            regressed,
        } = &p.how
        {
            let k = Scripted::index(&p.commit);
            if k <= 3 {
                assert_eq!(
                    (as_commit.as_str(), *regressed),
                    (commit(0).id.as_str(), false)
                );
            } else {
                assert!(*regressed, "{p:?}");
            }
        }
    }
    assert!(
        probe.times.iter().all(|k| !(1..=3).contains(k)),
        "a commit with good's code is never timed: {:?}",
        probe.times
    );
}

#[test]
fn a_broken_commit_is_skipped_and_the_search_goes_on_around_it() {
    // c2 does not compile: the search goes around it.
    let mut h = history(8, 5);
    h[2].identity = Err(Broken::NoTrial("t".into()));
    let (found, probe) = run(h);
    assert_eq!(found.first, Some(commit(5)));
    assert!(!probe.times.contains(&2));
    // c4, the commit just before the first regressed one, does not load: c4 or c5.
    let mut h = history(8, 5);
    h[4].identity = Err(Broken::NoTrial("t".into()));
    let (found, _) = run(h);
    assert_eq!(found.first, None);
    assert_eq!(found.candidates, [commit(4), commit(5)]);
    assert_eq!(
        found.skipped(),
        [(&commit(4), "no trial `t` at this commit".to_string())]
    );
}

#[test]
fn an_inconclusive_commit_is_skipped() {
    let mut h = history(4, 3);
    h[2].timed = Timed::Inconclusive(c(1.03));
    let (found, _) = run(h);
    assert_eq!(found.candidates, [commit(2), commit(3)]);
    let skipped = found.skipped();
    assert_eq!(skipped.len(), 1);
    assert!(
        skipped[0]
            .1
            .starts_with("inconclusive after re-measuring (+3.0%"),
        "{skipped:?}"
    );
}

#[test]
fn nothing_to_search_when_bad_did_not_regress_and_no_gpu_stops_it() {
    let (found, probe) = run(history(4, 9));
    assert_eq!(probe.times, [4]);
    assert!(found.first.is_none());
    assert!(
        matches!(&found.stopped, Some(Stopped::NotRegressed(why)) if why.contains("did not regress at bad")),
        "{found:?}"
    );
    let mut h = history(4, 2);
    h[4].timed = Timed::Unavailable("no usable GPU".into());
    let (found, _) = run(h);
    assert_eq!(
        found.stopped,
        Some(Stopped::Unavailable("no usable GPU".into()))
    );
}
