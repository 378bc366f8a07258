//! Bad suite files, each beside the message it must produce (`<name>.stderr`), and a mutation
//! test: no input makes the loader panic. `BLESS=1 cargo test --test suite_errors` rewrites
//! the expected messages; review the diff.

use kernelgate::error::LoadError;
use kernelgate::suite::{load_dir, load_file, load_text};
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/fixtures/bad")
        .expect("fixtures folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bad_suite_fails_with_its_message() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut wrong = Vec::new();
    let files = fixtures();
    assert!(files.len() >= 30, "fixtures went missing: {}", files.len());
    for path in files {
        let diagnostics = match load_file(&path) {
            Ok(_) => {
                wrong.push(format!("{}: loaded, but must fail", path.display()));
                continue;
            }
            Err(d) => d,
        };
        for d in &diagnostics {
            assert_eq!(d.file, path, "a diagnostic names the file");
            assert!(d.line >= 1 && d.col >= 1);
        }
        let actual = format!("{}\n", LoadError { diagnostics });
        let expected_path = path.with_extension("stderr");
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            wrong.push(format!(
                "{}:\n  expected: {expected}  actual:   {actual}",
                path.display()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} fixture(s) differ (BLESS=1 rewrites):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_example_suites_load() {
    let suites = load_dir(Path::new("suites")).expect("example suites are valid");
    assert!(suites.len() >= 7);
    let swept = suites.iter().filter(|s| s.cases.len() > 1).count();
    assert!(swept >= 2, "at least two suites sweep sizes");
    for s in &suites {
        assert!(
            s.kernels.len() >= 2,
            "{}: a reference and a faster variant",
            s.name
        );
        assert!(s.kernels[s.reference].reference);
    }
}

#[test]
fn duplicate_suite_names_across_files() {
    let e = load_dir(Path::new("tests/fixtures/duplicate")).unwrap_err();
    assert_eq!(e.diagnostics.len(), 1);
    let d = &e.diagnostics[0];
    assert!(d.file.ends_with("b.toml"), "{d}");
    assert!(d.message.contains("suite `twin` is also defined in"), "{d}");
    assert!(d.message.contains("a.toml"), "{d}");
}

#[test]
fn a_missing_suites_folder_says_what_to_do() {
    let e = load_dir(Path::new("no/such/folder")).unwrap_err();
    assert!(e.to_string().contains("KERNELGATE_SUITES"), "{e}");
}

/// A tiny deterministic generator, so the mutations are the same on every run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}

#[test]
fn no_mutation_of_a_valid_suite_panics() {
    let path = Path::new("tests/fixtures/bad/mutated.toml");
    let base = std::fs::read_to_string("tests/fixtures/bad/wrong_arg_count.toml").unwrap();
    let pieces = [
        "\"",
        "[",
        "]",
        "=",
        "0",
        "-1",
        "n",
        "ceil(",
        ")",
        "/",
        "*",
        "x",
        "99999999999999999999",
        ",",
        "\n",
        "{",
        "}",
        "as i32",
        "f32",
        "1e400",
        "\u{e9}",
        "'",
        "#",
        "inout",
        "npy",
        "\\u0000",
    ];
    let mut rng = Lcg(42);
    let mut failures = 0;
    for _ in 0..3000 {
        let mut text = base.clone();
        for _ in 0..1 + rng.next(3) {
            let mut at = rng.next(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match rng.next(3) {
                0 => text.insert_str(at, pieces[rng.next(pieces.len())]),
                1 => {
                    let mut end = (at + 1 + rng.next(8)).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, "");
                }
                _ => text.replace_range(at..at, &text[at..].chars().take(5).collect::<String>()),
            }
        }
        // Only the absence of a panic is asserted for arbitrary text; errors must be located.
        if let Err(d) = load_text(path, &text) {
            failures += 1;
            assert!(!d.is_empty());
            assert!(d.iter().all(|d| d.line >= 1 && !d.message.is_empty()));
        }
    }
    assert!(
        failures > 1000,
        "the mutations exercise the error paths ({failures})"
    );
}
