//! `order`: the runs of a history in the order their code was written — by commit along the
//! repository's first-parent history where the repository knows the commit, by start time
//! otherwise — so a run of an old commit imported late (a backfill) takes its commit's place
//! instead of looking like drift.

use super::store::Run;

/// The repository's first-parent history from `HEAD`, oldest first (`git rev-list
/// --first-parent HEAD` in the current directory); empty outside a repository.
pub fn first_parent() -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["rev-list", "--first-parent", "HEAD"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            text.lines().rev().map(str::to_string).collect()
        }
        _ => Vec::new(),
    }
}

/// Where `commit` (full, or a prefix of at least 7 characters) is in `history`.
fn position(history: &[String], commit: &str) -> Option<usize> {
    if commit.len() < 7 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    history.iter().position(|c| c.starts_with(commit))
}

/// How the runs were ordered: how many by commit, how many by start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ordered {
    /// Runs whose commit is on the first-parent history.
    pub by_commit: usize,
    /// Runs placed by start time (commit unknown, or not on that history).
    pub by_time: usize,
}

/// Sorts `runs` (oldest first) by their commit's place in `history` (oldest first), runs of
/// one commit by start time; a run whose commit is not there goes by start time, right after
/// the last run by commit that started before it.
pub fn order(runs: &mut [Run], history: &[String]) -> Ordered {
    let place = |r: &Run| position(history, &r.info.commit);
    // The runs placed by commit, in commit order: (commit position, start, id).
    let mut known: Vec<(usize, String, i64)> = (runs.iter())
        .filter_map(|r| Some((place(r)?, r.info.when().to_string(), r.id)))
        .collect();
    known.sort();
    // Each run's key: the rank of the run by commit it follows (its own for those: a run's id
    // is its own), then 0 for a run by commit and 1 for one by time, then start time and
    // insertion.
    runs.sort_by_cached_key(|r| {
        let when = r.info.when().to_string();
        match place(r) {
            Some(_) => (known.iter().position(|k| k.2 == r.id), 0, when, r.id),
            None => (known.iter().rposition(|k| k.1 <= when), 1, when, r.id),
        }
    });
    Ordered {
        by_commit: known.len(),
        by_time: runs.len() - known.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::RunInfo;

    fn run(id: i64, commit: &str, started: &str) -> Run {
        Run {
            id,
            info: RunInfo {
                date: started[..10].to_string(),
                started: Some(started.into()),
                commit: commit.into(),
                branch: "main".into(),
                dirty: false,
                mode: "stored".into(),
            },
            device: "H200".into(),
            gpu_uuid: None,
        }
    }

    #[test]
    fn commits_first_then_start_times() {
        let history: Vec<String> = (0..5)
            .map(|i| format!("{i}{i}{i}{i}{i}{i}{i}abc"))
            .collect();
        let mut runs = vec![
            run(1, "2222222abc", "2026-11-03T10:00:00Z"),
            run(2, "unknown", "2026-11-03T11:00:00Z"),
            // A backfill: the oldest commit, imported last.
            run(3, "0000000", "2026-11-09T10:00:00Z"),
            run(4, "4444444abc", "2026-11-05T10:00:00Z"),
            run(5, "2222222abc", "2026-11-02T10:00:00Z"),
            run(6, "unknown", "2026-11-01T00:00:00Z"),
        ];
        let ordered = order(&mut runs, &history);
        let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        // 6 started before every run by commit: first. 5 and 1 are one commit, by start. 2
        // started after 1 (the last by commit before it). 3, backfilled, still by commit.
        assert_eq!(ids, vec![6, 3, 5, 1, 2, 4]);
        assert_eq!(
            ordered,
            Ordered {
                by_commit: 4,
                by_time: 2
            }
        );
        assert_eq!(position(&history, "00000"), None, "too short a prefix");
        assert_eq!(position(&history, "zzzzzzz"), None);
    }

    #[test]
    fn without_a_repository_runs_go_by_start_time() {
        let mut runs = vec![
            run(1, "b", "2026-11-03T10:00:00Z"),
            run(2, "a", "2026-11-01T10:00:00Z"),
        ];
        order(&mut runs, &[]);
        assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![2, 1]);
    }
}
