//! Counted facts in the docs match the code: how many trials the example suites hold, and the
//! exit codes the docs and scripts quote. (The README's exit-code table has its own test in
//! `harness/exit.rs`.) A historical figure is written so that it does not read as a current
//! count ("36 kernel trials then"), and is not checked.

use kernelgate::exit;
use kernelgate::plan::{plan, Kind};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page under docs/, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Every number written just before `words` (`60 GPU trials`), with the line it is on.
fn counts_before(text: &str, words: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices(words) {
            let before = line[..at].trim_end();
            let digits: String = before
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if let Ok(v) = digits.parse() {
                out.push((n + 1, v));
            }
        }
    }
    out
}

/// The example suites' GPU (kernel) trials and compile trials, as a run lists them.
fn example_trials() -> (usize, usize) {
    let suites = kernelgate::suite::load_dir(&root().join("suites")).expect("the examples load");
    let planned = plan(&suites);
    let gpu = planned
        .iter()
        .filter(|p| matches!(p.kind, Kind::Kernel { .. }))
        .count();
    (gpu, planned.len() - gpu)
}

#[test]
fn trial_counts_in_the_docs_are_the_example_suites() {
    let (gpu, compile) = example_trials();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (path, text) in pages() {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        let facts = [
            ("GPU trials", gpu),
            ("compile trials", compile),
            // `kernelgate: nextest run …: this process ran all 71 trials of the run`
            ("trials of the run", gpu + compile),
            // calibration.md: `(…, 71 trials, 60 compared)`
            ("trials, ", gpu + compile),
            ("compared)", gpu),
        ];
        for (words, want) in facts {
            for (line, found) in counts_before(&text, words) {
                let on = text.lines().nth(line - 1).unwrap_or("");
                if words == "trials, " && !on.contains("compared)") {
                    continue;
                }
                checked += 1;
                if found != want {
                    wrong.push(format!(
                        "{name}:{line}: {found} {words} (the examples: {want})"
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "counted facts gone stale (update the docs, or write a figure of the past as one):\n{}",
        wrong.join("\n")
    );
    assert!(
        checked >= 3,
        "the facts this test checks are written somewhere ({checked})"
    );
}

#[test]
fn exit_codes_quoted_outside_the_readme_are_the_exit_module() {
    // ci/gate.sh's header: `0 pass · 1 performance regression · 101 correctness failure · 2 …`
    let gate = fs::read_to_string(root().join("ci/gate.sh")).unwrap();
    let line = gate
        .lines()
        .find(|l| l.contains(" pass · "))
        .expect("ci/gate.sh lists the exit codes");
    for (code, word) in [
        (exit::SUCCESS, "pass"),
        (exit::PERFORMANCE, "performance"),
        (exit::CORRECTNESS, "correctness"),
        (exit::BAD_INPUT, "infrastructure"),
    ] {
        assert!(
            line.contains(&format!("{code} {word}")),
            "{line}: {code} {word}"
        );
    }
    // docs/nextest.md: a process's exit code is its own trial's `(1, 101 or 2, …)`.
    let nextest = fs::read_to_string(root().join("docs/nextest.md")).unwrap();
    let codes = format!(
        "({}, {} or {},",
        exit::PERFORMANCE,
        exit::CORRECTNESS,
        exit::BAD_INPUT
    );
    assert!(
        nextest.contains(&codes),
        "docs/nextest.md should say {codes}"
    );
    // docs/reports-and-history.md: the `history --check` table.
    let history = fs::read_to_string(root().join("docs/reports-and-history.md")).unwrap();
    for (code, meaning) in [
        (exit::SUCCESS, "no trend's latest run regressed"),
        (
            exit::DRIFT,
            "a trend's latest run regressed against its trailing runs by the gate's rule",
        ),
        (exit::BAD_INPUT, "bad input"),
    ] {
        assert!(
            history.contains(&format!("| {code} | {meaning}")),
            "docs/reports-and-history.md: `| {code} | {meaning}`"
        );
    }
}

/// The checker sees a stale figure.
#[test]
fn a_stale_count_is_found() {
    assert_eq!(
        counts_before("holds 36 GPU trials and 11 compile trials", "GPU trials"),
        [(1, 36)]
    );
    assert_eq!(
        counts_before("(`./kernelgate run`, 71 trials, 60 compared)", "compared)"),
        [(1, 60)]
    );
    assert!(counts_before("36 kernel trials then", "GPU trials").is_empty());
}
