//! `kernelgate calibrate` as a user meets it without a GPU: its help, the exact message for a
//! bad argument, and a plain exit 2 (no panic) where no GPU can be opened (the lab's own
//! benchmark, `kernelgate-lab calibrate`, is tested in lab/tests). The GPUs are hidden
//! (`CUDA_VISIBLE_DEVICES=""`), so the same holds on a machine with one; nothing is timed.

use std::process::{Command, Output};

fn calibrate(args: &[&str]) -> (Option<i32>, String, String) {
    let o: Output = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .arg("calibrate")
        .args(args)
        .env_remove("KERNELGATE_DEVICE")
        .env("CUDA_VISIBLE_DEVICES", "")
        .env(
            "KERNELGATE_CACHE",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/calibrate-cache"),
        )
        .output()
        .expect("kernelgate runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_names_every_option() {
    let (code, out, _) = calibrate(&["--help"]);
    assert_eq!(code, Some(0));
    for option in ["--reps <N>", "--out <FILE.md>", "--suites <DIR>"] {
        assert!(out.contains(option), "{option} missing from:\n{out}");
    }
    assert!(out.contains("not a planted slowdown"), "{out}");
    assert!(
        out.contains("kernelgate-lab calibrate"),
        "where the lab benchmark went: {out}"
    );
}

#[test]
fn a_bad_argument_is_named_with_the_usage() {
    let (code, out, err) = calibrate(&["--reps", "0"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert_eq!(
        err,
        "error: invalid value '0' for '--reps <N>': `0` is not a positive count\n\nFor more information, try '--help'.\n"
    );
    // A misspelt option: the one meant.
    let (code, _, err) = calibrate(&["--rep", "3"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("a similar argument exists: '--reps'"), "{err}");
}

#[test]
fn without_a_gpu_it_says_so_and_exits_2() {
    let (code, out, err) = calibrate(&["--reps", "1"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.is_empty(), "no report without measurements: {out}");
    // No driver: "...: calibration needs a GPU"; a driver with the GPUs hidden: the worker's
    // reason for device 0.
    assert!(
        err.starts_with("error: calibration failed: ")
            && (err.contains("calibration needs a GPU")
                || err.contains("the GPU worker could not open device 0")),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
