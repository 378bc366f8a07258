//! `config`'s tests.

use super::*;

#[test]
fn devices_and_shards() {
    assert_eq!(devices("0"), Ok(vec![0]));
    assert_eq!(devices("0, 1"), Ok(vec![0, 1]));
    assert_eq!(
        devices("0,0").unwrap_err().to_string(),
        "`KERNELGATE_DEVICE=0,0` names GPU 0 twice"
    );
    assert!(devices("first").is_err());
    assert!(devices("-1").is_err());
    assert_eq!(shard("1/2"), Ok((1, 2)));
    assert!(shard("0/2").is_err());
    assert!(shard("3/2").is_err());
    assert!(shard("half").is_err());
    // Every name lands in exactly one shard, and the shards are about even.
    let names: Vec<String> = (0..1000).map(|i| format!("suite::kernel::n={i}")).collect();
    let sizes: Vec<usize> = (1..=3)
        .map(|k| names.iter().filter(|n| in_shard(n, (k, 3))).count())
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 1000);
    assert!(sizes.iter().all(|s| (280..=390).contains(s)), "{sizes:?}");
}

#[test]
fn the_cis_parallel_job_variables_make_a_shard() {
    let env = |set: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            set.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let from = |set| ci_shard(env(set));
    assert_eq!(from(&[]), Ok(None));
    // Buildkite and CircleCI count from 0, GitLab from 1, Slurm from its array's first index.
    assert_eq!(
        from(&[
            ("BUILDKITE_PARALLEL_JOB", "0"),
            ("BUILDKITE_PARALLEL_JOB_COUNT", "3")
        ]),
        Ok(Some((1, 3)))
    );
    assert_eq!(
        from(&[("CIRCLE_NODE_INDEX", "2"), ("CIRCLE_NODE_TOTAL", "3")]),
        Ok(Some((3, 3)))
    );
    assert_eq!(
        from(&[("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "4")]),
        Ok(Some((2, 4)))
    );
    const SLURM: [(&str, &str); 3] = [
        ("SLURM_ARRAY_TASK_ID", "11"),
        ("SLURM_ARRAY_TASK_MIN", "10"),
        ("SLURM_ARRAY_TASK_COUNT", "4"),
    ];
    assert_eq!(from(&SLURM), Ok(Some((2, 4))));
    // One job is no shard; an index past the count is an error naming the variable.
    assert_eq!(
        from(&[("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "1")]),
        Ok(None)
    );
    let e = from(&[("CI_NODE_INDEX", "5"), ("CI_NODE_TOTAL", "4")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("CI_NODE_INDEX=5") && e.contains("CI_NODE_TOTAL=4"),
        "{e}"
    );
}

#[test]
fn an_unknown_variable_names_the_closest_known_one() {
    let e = unknown_variable(["PATH", "KERNELGATE_REQUIRE_GPUS", "KERNELGATE_SUITES"])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "unknown variable `KERNELGATE_REQUIRE_GPUS`: did you mean `KERNELGATE_REQUIRE_GPU`?"
        ),
        "{e}"
    );
    let e = unknown_variable(["KERNELGATE_REQUIRE_GUP"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean `KERNELGATE_REQUIRE_GPU`?"), "{e}");
    let e = unknown_variable(["KERNELGATE_SUITE"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean `KERNELGATE_SUITES`?"), "{e}");
    assert_eq!(unknown_variable(KNOWN.iter().copied()), Ok(()));
    let e = unknown_variable(["KERNELGATE_FROBNICATE"])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("unknown variable `KERNELGATE_FROBNICATE`: it is not one"),
        "{e}"
    );
}

#[test]
fn architectures_are_checked_up_front() {
    for good in ["sm_80", "sm_90", "sm_90a", "sm_100", "sm_100f", "sm_120a"] {
        assert!(valid_arch(good), "{good}");
    }
    for bad in ["sm_9x", "sm_9", "compute_90", "90", "sm_1000", "sm_90b", ""] {
        assert!(!valid_arch(bad), "{bad}");
    }
    assert_eq!(
        archs_of("sm_90,sm90").unwrap_err().to_string(),
        "`KERNELGATE_ARCH=sm_90,sm90` names `sm90`, which is not a GPU architecture (write e.g. sm_80, sm_90 or sm_90a, or a list: sm_90,sm_100)"
    );
    assert_eq!(archs_of("sm_90, sm_80,sm_90").unwrap(), ["sm_90", "sm_80"]);
}

#[test]
fn bless_replaces_or_adds() {
    assert_eq!(blessing(None), Ok(None));
    assert_eq!(blessing(Some("0")), Ok(None));
    assert_eq!(blessing(Some("1")), Ok(Some(Blessing::Replace)));
    assert_eq!(blessing(Some("add")), Ok(Some(Blessing::Add)));
    assert_eq!(
        blessing(Some("append")).unwrap_err().to_string(),
        "`KERNELGATE_BLESS=append` is not 1, add or 0 (1 replaces the baselines, add adds this run to them)"
    );
}

#[test]
fn the_timeout_is_bounded() {
    assert_eq!(timeout(None), Ok(Duration::from_secs(120)));
    assert_eq!(timeout(Some("30")), Ok(Duration::from_secs(30)));
    assert_eq!(
        timeout(Some("100000000000000000")).unwrap_err().to_string(),
        "`KERNELGATE_TIMEOUT=100000000000000000` is not a number of seconds from 1 to 86400 (a day)"
    );
    assert!(timeout(Some("0")).is_err());
    assert!(timeout(Some("1e3")).is_err());
    assert!(timeout(Some("86400")).is_ok());
}

#[test]
fn seeds_in_decimal_or_hex() {
    assert_eq!(parse_seed("24303"), Some(24303));
    assert_eq!(parse_seed("0x5EED"), Some(0x5EED));
    assert_eq!(parse_seed("seed"), None);
}
