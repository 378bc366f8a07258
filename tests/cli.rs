//! The `kernelgate run` command end to end, as a user meets it on a machine without a GPU:
//! exit codes, ignored trials with their reason, selection by name, bad input. Every run here
//! hides the GPUs (`CUDA_VISIBLE_DEVICES=""`) and reads no committed baselines, so the tests
//! assert the same things on a machine with a GPU as on one without, and time nothing.

use std::process::{Command, Output};

fn kernelgate(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernelgate"));
    cmd.args(args);
    for key in [
        "KERNELGATE_SUITES",
        "KERNELGATE_REQUIRE_GPU",
        "KERNELGATE_REQUIRE_NVRTC",
        "KERNELGATE_DEVICE",
    ] {
        cmd.env_remove(key);
    }
    // A GPU, where there is one, stays out of these runs: they describe GPU-less machines.
    cmd.env("CUDA_VISIBLE_DEVICES", "");
    cmd.env(
        "KERNELGATE_BASELINES",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-no-baselines"),
    );
    // Keep the compile cache of these runs apart from a developer's.
    cmd.env(
        "KERNELGATE_CACHE",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-cache"),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("kernelgate runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn without_a_gpu_trials_are_ignored_with_the_reason_and_the_run_passes() {
    let o = kernelgate(&["run", "saxpy"], &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("test saxpy::vec4::n=4096"), "{out}");
    // "no CUDA driver: ..." without a driver; "no usable GPU: ..." with the GPUs hidden.
    assert!(
        out.contains("ignored (no CUDA driver: libcuda could not be loaded)")
            || out.contains("ignored (no usable GPU: "),
        "{out}"
    );
    assert!(out.contains("0 failed"), "{out}");
}

#[test]
fn require_gpu_turns_no_gpu_into_a_failure() {
    let o = kernelgate(&["run", "saxpy::naive"], &[("KERNELGATE_REQUIRE_GPU", "1")]);
    let (out, err) = text(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an infrastructure failure: {out}{err}"
    );
    assert!(out.contains("KERNELGATE_REQUIRE_GPU is set"), "{out}");
}

#[test]
fn list_names_select_exactly_one_trial() {
    let o = kernelgate(&["run", "--list"], &[]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .collect();
    assert!(names.len() >= 30, "{out}");
    assert!(names.contains(&"conv2d::tiled::h=200,w=200"), "{out}");
    for name in [
        "saxpy::vec4::n=4096",
        "conv2d::tiled::h=200,w=200",
        "matmul::compile",
    ] {
        let o = kernelgate(&["run", "--list", "--exact", name], &[]);
        let (out, _) = text(&o);
        let listed: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .collect();
        assert_eq!(listed, [name]);
    }
}

#[test]
fn json_format_prints_only_json() {
    let o = kernelgate(&["run", "saxpy::vec4", "--format", "json"], &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let mut events = 0;
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v.get("type").is_some(), "{line}");
        events += 1;
    }
    assert!(events >= 4, "{out}");
}

#[test]
fn bad_suites_stop_the_run_before_any_trial() {
    let o = kernelgate(&["run"], &[("KERNELGATE_SUITES", "tests/fixtures/bad")]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(!out.contains("test "), "nothing runs: {out}");
    assert!(
        err.contains("error: tests/fixtures/bad/wrong_arg_count.toml:24:8: 3 args given"),
        "{err}"
    );
    assert!(
        err.contains("problem(s) in the suite files; nothing was run"),
        "{err}"
    );
}

#[test]
fn a_bad_variable_is_named() {
    let o = kernelgate(&["run"], &[("KERNELGATE_DEVICE", "first")]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("`KERNELGATE_DEVICE=first` is not a device ordinal"),
        "{err}"
    );
    // Seen before issue 20: this time-out, under nextest's variables, overflowed a `Duration`
    // and panicked (exit 101).
    let o = kernelgate(
        &["run", "--exact", "saxpy::vec4::n=4096"],
        &[
            ("KERNELGATE_TIMEOUT", "100000000000000000"),
            ("NEXTEST_EXECUTION_MODE", "process-per-test"),
            ("NEXTEST_RUN_ID", "robust-timeout"),
            ("NEXTEST_TEST_NAME", "saxpy::vec4::n=4096"),
        ],
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a number of seconds from 1 to 86400 (a day)"),
        "{err}"
    );
}

#[test]
fn a_misspelled_variable_a_bad_arch_and_an_empty_folder_stop_the_run_with_2() {
    let o = kernelgate(&["run"], &[("KERNELGATE_REQUIRE_GUP", "1")]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains(
            "unknown variable `KERNELGATE_REQUIRE_GUP`: did you mean `KERNELGATE_REQUIRE_GPU`?"
        ),
        "{err}"
    );
    assert!(!out.contains("test "), "nothing ran: {out}");
    let o = kernelgate(&["lint"], &[("KERNELGATE_ARCH", "sm_9x")]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`KERNELGATE_ARCH=sm_9x` is not a GPU architecture"),
        "{err}"
    );
    if kernelgate::device::nvrtc_missing().is_none() {
        let o = kernelgate(&["run"], &[("KERNELGATE_ARCH", "sm_20")]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(
                "`KERNELGATE_ARCH=sm_20` is not a target of this NVRTC (it compiles for sm_75"
            ),
            "{err}"
        );
    }
    let empty = concat!(env!("CARGO_TARGET_TMPDIR"), "/no-suites");
    std::fs::create_dir_all(empty).unwrap();
    for command in ["run", "lint"] {
        let o = kernelgate(&[command], &[("KERNELGATE_SUITES", empty)]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains("no suite found in"), "{err}");
        assert!(err.contains("KERNELGATE_ALLOW_EMPTY=1"), "{err}");
        let o = kernelgate(
            &[command],
            &[
                ("KERNELGATE_SUITES", empty),
                ("KERNELGATE_ALLOW_EMPTY", "1"),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{command}: {}", text(&o).1);
    }
}

#[test]
fn help_version_and_a_double_dash_before_libtest_arguments() {
    let o = kernelgate(&["--version"], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o).0.trim(),
        format!("kernelgate {}", env!("CARGO_PKG_VERSION"))
    );
    let o = kernelgate(&["--help"], &[]);
    assert!(text(&o).0.contains("help <command>"), "{}", text(&o).0);
    // A misspelt flag or command: exit 2 with the one meant.
    let o = kernelgate(&["--verison"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .contains("a similar argument exists: '--version'"),
        "{}",
        text(&o).1
    );
    // A misspelt variable, in a command that reads no harness options too.
    let o = kernelgate(
        &["history", "--check"],
        &[("KERNELGATE_HISTROY", "h.sqlite")],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("did you mean `KERNELGATE_HISTORY`?"),
        "{}",
        text(&o).1
    );
    let o = kernelgate(&["histroy", "--check"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o)
        .1
        .contains("a similar subcommand exists: 'history'"));
    for args in [&["help", "run"][..], &["run", "--help"][..]] {
        let o = kernelgate(args, &[]);
        let (out, _) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(out.contains("KERNELGATE_REQUIRE_GPU=1"), "{out}");
        assert!(!out.contains("running "), "nothing ran: {out}");
    }
    let o = kernelgate(&["help", "frobnicate"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("unrecognized subcommand 'frobnicate'"));
    // `kernelgate run -- --list` lists, as `cargo test --test perf -- --list` does.
    let o = kernelgate(&["run", "--", "--list"], &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("saxpy::vec4::n=4096: test"), "{out}");
    assert!(!out.contains("running"), "listed, not run: {out}");
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn the_whole_of_cub_under_nvrtc_says_which_header_to_include() {
    if let Some(why) = kernelgate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
    let o = kernelgate(
        &["lint"],
        &[("KERNELGATE_SUITES", "tests/fixtures/cub_host")],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains(
            "hint: `<cstdint>` is a C++ standard library header, which NVRTC does not have"
        ) || err.contains("hint: a header declares `__host__` functions"),
        "{err}"
    );
    assert!(
        err.contains("#include <cub/block/block_reduce.cuh>"),
        "{err}"
    );
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn a_compile_error_fails_with_nvrtc_log_naming_suite_and_kernel() {
    if let Some(why) = kernelgate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
    let o = kernelgate(
        &["run", "broken::compile"],
        &[("KERNELGATE_SUITES", "tests/fixtures/compile_error")],
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(101), "{out}{err}");
    assert!(
        out.contains("suite `broken`, kernels `naive`, `broken`"),
        "{out}"
    );
    assert!(
        out.contains("identifier \"undeclared_value\" is undefined"),
        "{out}"
    );
    assert!(out.contains("broken.cu(9)"), "{out}");
    // The rerun repeats this run: its suites folder, with the binary that ran it.
    assert!(
        out.contains("rerun:   KERNELGATE_SUITES=tests/fixtures/compile_error ")
            && out.contains("kernelgate run --exact 'broken::compile'"),
        "{out}"
    );
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn fp64_forbid_fails_the_kernel_that_uses_double_naming_count_and_instruction() {
    if let Some(why) = kernelgate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
    let env = [("KERNELGATE_SUITES", "tests/fixtures/fp64")];
    let o = kernelgate(&["run", "fp64_forbid::compile"], &env);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "a limit, like spills: {out}{err}");
    assert!(
        out.contains("kernel `f64_acc` has 17 double-precision instruction(s) in its code, e.g. `cvt.f64.f32 %fd1, %f1;`, and fp64 = \"forbid\""),
        "{out}"
    );
    assert!(
        !out.contains("kernel `f64_allowed`"),
        "allowed per kernel: {out}"
    );
    let o = kernelgate(&["lint"], &env);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("error: tests/fixtures/fp64/forbid.toml:31:1: kernel `f64_acc` has 17"),
        "{err}"
    );
    // Without the policy the count is shown, not failed: conv2d's double accumulator.
    let o = kernelgate(&["run", "--exact", "conv2d::compile"], &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("· fp64 ops: `f64_acc` 508"), "{out}");
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn the_second_run_compiles_nothing() {
    if let Some(why) = kernelgate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
    let cache = concat!(env!("CARGO_TARGET_TMPDIR"), "/second-run-cache");
    let _ = std::fs::remove_dir_all(cache);
    let env = [("KERNELGATE_CACHE", cache)];
    let first = kernelgate(&["run", "compile"], &env);
    let second = kernelgate(&["run", "compile"], &env);
    let (out1, _) = text(&first);
    let (out2, _) = text(&second);
    assert!(out1.contains("NVRTC 15 compiled, 0 from cache"), "{out1}");
    assert!(out2.contains("NVRTC 0 compiled, 15 from cache"), "{out2}");
}

#[test]
fn bless_is_refused_in_ci() {
    for value in ["1", "add"] {
        let o = kernelgate(&["run"], &[("KERNELGATE_BLESS", value), ("CI", "true")]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{value}: {out}{err}");
        assert!(
            err.contains("KERNELGATE_BLESS is refused when `CI` is set"),
            "{value}: {err}"
        );
        assert!(!out.contains("test "), "nothing ran: {out}");
    }
    let o = kernelgate(&["run"], &[("KERNELGATE_BLESS", "append")]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("`KERNELGATE_BLESS=append` is not 1, add or 0"),
        "{err}"
    );
}

#[test]
fn a_results_file_is_written_without_a_gpu_too() {
    let path = concat!(env!("CARGO_TARGET_TMPDIR"), "/results-nogpu.json");
    let _ = std::fs::remove_file(path);
    let o = kernelgate(&["run", "saxpy"], &[("KERNELGATE_RESULTS", path)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let r = kernelgate::report::results::Results::load(std::path::Path::new(path)).unwrap();
    assert_eq!(r.trials.len(), 9, "saxpy: compile + 4 cases x 2 kernels");
    assert!(r.trials.iter().any(|t| t.name == "saxpy::vec4::n=4096"));
    if kernelgate::device::driver_missing().is_some() {
        let t = r
            .trials
            .iter()
            .find(|t| t.name == "saxpy::vec4::n=4096")
            .unwrap();
        assert_eq!(t.status, kernelgate::report::results::Status::Ignored);
        let reason = t.ignored.as_deref().unwrap();
        assert!(
            reason.contains("no CUDA driver") || reason.contains("no usable GPU"),
            "{reason}"
        );
    }
}

#[test]
fn lint_validates_and_compiles_without_a_gpu() {
    let o = kernelgate(&["lint"], &[("KERNELGATE_BASELINES", "baselines")]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("13 suite(s)"), "{out}");
    assert!(out.contains("11 baseline file(s) valid"), "{out}");
    // A corrupted baseline fails lint without a GPU (exit 2, as it would fail a GPU run).
    let broken = concat!(env!("CARGO_TARGET_TMPDIR"), "/broken-baselines");
    std::fs::create_dir_all(format!("{broken}/some-gpu")).unwrap();
    std::fs::write(
        format!("{broken}/some-gpu/saxpy.json"),
        "{\"format\": 1, \"suite\"",
    )
    .unwrap();
    let o = kernelgate(&["lint"], &[("KERNELGATE_BASELINES", broken)]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("some-gpu/saxpy.json` is not valid JSON"),
        "{err}"
    );
    let o = kernelgate(&["lint"], &[("KERNELGATE_SUITES", "tests/fixtures/bad")]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("tests/fixtures/bad/wrong_arg_count.toml:24:8"),
        "{err}"
    );
    if kernelgate::device::nvrtc_missing().is_none() {
        let o = kernelgate(
            &["lint"],
            &[("KERNELGATE_SUITES", "tests/fixtures/compile_error")],
        );
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("error: tests/fixtures/compile_error/broken.toml:12:1: suite `broken`"),
            "{err}"
        );
    }
}

#[test]
fn shards_split_the_trials_and_merge_back() {
    let list = |shard: Option<&str>| {
        let env: Vec<(&str, &str)> = shard
            .map(|s| vec![("KERNELGATE_SHARD", s)])
            .unwrap_or_default();
        let o = kernelgate(&["run", "--list"], &env);
        text(&o)
            .0
            .lines()
            .filter_map(|l| l.strip_suffix(": test").map(String::from))
            .collect::<Vec<_>>()
    };
    let (all, one, two) = (list(None), list(Some("1/2")), list(Some("2/2")));
    assert!(!one.is_empty() && !two.is_empty());
    assert!(one.iter().all(|n| !two.contains(n)), "disjoint");
    let mut union: Vec<String> = one.iter().chain(&two).cloned().collect();
    union.sort();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(union, sorted, "together they are every trial");

    let dir = env!("CARGO_TARGET_TMPDIR");
    let paths = [
        format!("{dir}/shard1.json"),
        format!("{dir}/shard2.json"),
        format!("{dir}/merged.json"),
    ];
    for (k, p) in ["1/2", "2/2"].iter().zip(&paths) {
        let o = kernelgate(
            &["run"],
            &[("KERNELGATE_SHARD", k), ("KERNELGATE_RESULTS", p)],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    }
    let o = kernelgate(&["merge", &paths[2], &paths[0], &paths[1]], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let merged =
        kernelgate::report::results::Results::load(std::path::Path::new(&paths[2])).unwrap();
    assert_eq!(merged.trials.len(), all.len());
    let o = kernelgate(&["merge", &paths[2], &paths[0], &paths[0]], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("error: shard 1/2 is given twice: "),
        "{}",
        text(&o).1
    );
    // Each file records its shard; a missing one is named.
    let o = kernelgate(&["merge", &paths[2], &paths[1]], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .contains("error: shard(s) 1/2 of the run are missing"),
        "{}",
        text(&o).1
    );
}

#[test]
fn reports_are_written_where_asked() {
    let dir = env!("CARGO_TARGET_TMPDIR");
    let (junit, md, summary) = (
        format!("{dir}/j.xml"),
        format!("{dir}/s.md"),
        format!("{dir}/step.md"),
    );
    let _ = std::fs::remove_file(&summary);
    let o = kernelgate(
        &["run", "saxpy"],
        &[
            ("KERNELGATE_JUNIT", &junit),
            ("KERNELGATE_MARKDOWN", &md),
            ("GITHUB_STEP_SUMMARY", &summary),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(roxmltree::Document::parse(&xml).is_ok());
    assert!(xml.contains("saxpy::vec4::n=4096"));
    assert_eq!(
        std::fs::read_to_string(&md).unwrap(),
        std::fs::read_to_string(&summary).unwrap()
    );
}

/// `lint --launches FILTER` prints what a run would launch for each matching trial, resolved for
/// its case — grid, block, shared bytes, buffers by name and scalars by value and type — and
/// nothing of the other trials; without a GPU or NVRTC.
/// Parameter types behind a typedef, an alias or a macro are resolved by NVRTC: a bf16 pipeline
/// (its second launch reading, through `const floatX*`, what the first wrote) is linted and
/// compiled clean; without NVRTC the same suite loads with a warning naming each parameter.
#[test]
fn lint_resolves_typedefs_through_the_compiler_or_says_it_did_not() {
    let suites = [("KERNELGATE_SUITES", "tests/fixtures/types")];
    if kernelgate::device::nvrtc_missing().is_none() {
        let o = kernelgate(&["lint"], &suites);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        assert!(!err.contains("warning: tests/fixtures/types"), "{err}");
        assert!(out.contains("1 source(s) compiled"), "{out}");
    }
    // No NVRTC: none on the library path, and not looked for elsewhere.
    let none = [
        suites[0],
        ("LD_LIBRARY_PATH", ""),
        ("_KERNELGATE_LIBRARIES", "1"),
    ];
    let o = kernelgate(&["lint"], &none);
    let (out, err) = text(&o);
    if !out.contains("not compiled: no NVRTC") {
        return; // this machine's system libraries hold an NVRTC
    }
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("warning: tests/fixtures/types/pipeline.toml:33:10: parameters `floatX* m`, `const floatX* in`, `index_t n` of `mean` (tests/fixtures/types/types.cu:14): of types (`floatX`, `index_t`) only the compiler can resolve, and no NVRTC could be loaded here to ask: their arguments are not checked"), "{err}");
}

/// Launch expressions read the device (`sm_count`, ...): without a GPU, lint resolves them for
/// the first known device of the target and checks every other known one, naming it.
#[test]
fn lint_evaluates_device_expressions_for_every_known_device() {
    let env = [
        ("KERNELGATE_SUITES", "tests/fixtures/device"),
        ("KERNELGATE_ARCH", "sm_90"),
    ];
    let o = kernelgate(
        &["lint", "--launches", "persist::persistent::n=1048576"],
        &env,
    );
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains(
            "# expressions read NVIDIA H100 80GB HBM3 (sm_count = 132, max_threads_per_sm = 2048"
        ),
        "{out}"
    );
    assert!(
        out.contains("scale_persistent<<<grid [1056, 1, 1], block [256, 1, 1]"),
        "{out}"
    );
    let o = kernelgate(&["lint"], &env);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("error: tests/fixtures/device/small_grid.toml:30:10: grid[0] is -6 for n=1048576 on NVIDIA H100 PCIe, outside 1..=2147483647"), "{err}");
    assert!(!err.contains("persist.toml"), "{err}");
    // A target with no known device says so, rather than passing on another's values.
    let o = kernelgate(&["lint"], &[env[0], ("KERNELGATE_ARCH", "sm_89")]);
    let (_, err) = text(&o);
    assert!(err.contains("warning: tests/fixtures/device/persist.toml: its expressions read the device, and kernelgate knows no device of sm_89: they were resolved for NVIDIA H100 80GB HBM3"), "{err}");
}

#[test]
fn lint_launches_prints_each_cases_resolved_launches() {
    let o = kernelgate(&["lint", "--launches", "saxpy::vec4::n=10"], &[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(
        out,
        "saxpy::vec4::n=1048576\n  saxpy_vec4<<<grid [1024, 1, 1], block [256, 1, 1], shared 0 B>>>(2 as f32, x, y, 1048576 as i32)\n\
         saxpy::vec4::n=1000003\n  saxpy_vec4<<<grid [977, 1, 1], block [256, 1, 1], shared 0 B>>>(2 as f32, x, y, 1000003 as i32)\n"
    );
    // Every trial without a filter: the compile trials have no launches and are not listed.
    let all = kernelgate(&["lint", "--launches"], &[]);
    let (all, _) = text(&all);
    assert!(all.lines().any(|l| l == "saxpy::naive::n=4096"), "{all}");
    assert!(!all.contains("::compile"), "{all}");
}
