//! The issue-11 fixtures compile with NVRTC and load: the timing-integrity kernels
//! (`tests/fixtures/integrity`) and the init-forms example (`tests/fixtures/inits`). Their GPU
//! behaviour is described in `docs/timing-integrity.md`.

use std::process::Command;

fn lint(suites: &str) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .arg("lint")
        .env("KERNELGATE_SUITES", suites)
        .env(
            "KERNELGATE_CACHE",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/integrity-cache"),
        )
        .output()
        .expect("kernelgate runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn the_fixtures_compile() {
    if let Some(why) = kernelgate::device::nvrtc_missing() {
        panic!("this test needs NVRTC, which does not load here ({why}): ci/test.sh installs it");
    }
    let (ok, text) = lint("tests/fixtures/integrity");
    assert!(ok, "{text}");
    assert!(
        text.contains("1 suite(s), 5 kernel(s), 2 case(s),"),
        "{text}"
    );
    let (ok, text) = lint("tests/fixtures/inits");
    assert!(ok, "{text}");
    assert!(
        text.contains("1 suite(s), 2 kernel(s), 1 case(s),"),
        "{text}"
    );
}
