//! Bad suite files, each beside the message it must produce (`<name>.stderr`); suites that load
//! with warnings beside theirs; and fuzzing: no mutation of any fixture, suite or CUDA source,
//! and no folder of links, makes the loader panic or take long. `BLESS=1 cargo test --test
//! suite_errors` rewrites the expected messages; review the diff.

use kernelgate::error::LoadError;
use kernelgate::suite::signature;
use kernelgate::suite::{load_bytes, load_dir, load_file, load_text};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fixtures() -> Vec<PathBuf> {
    files_in("tests/fixtures/bad", "toml")
}

fn files_in(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixtures folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bad_suite_fails_with_its_message() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut wrong = Vec::new();
    let files = fixtures();
    assert!(files.len() >= 86, "fixtures went missing: {}", files.len());
    for path in files {
        let diagnostics = match load_file(&path) {
            Ok(_) => {
                wrong.push(format!("{}: loaded, but must fail", path.display()));
                continue;
            }
            Err(d) => d,
        };
        for d in &diagnostics {
            // The suite file, or a kernel source beside it (a bad byte is reported where it is).
            assert!(
                d.file == path || d.file.parent() == path.parent(),
                "a diagnostic names the file: {d}"
            );
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
fn the_variant_limit_counts_what_skip_leaves() {
    // The bad fixture's 289 combinations, with a skip that leaves 255 variants: it loads.
    let path = Path::new("tests/fixtures/bad/axes_too_many.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replace("\"UNROLL > 16\"", "\"UNROLL > 15\"");
    let suite = load_text(path, &text).expect("255 variants are under the limit");
    let tiles = suite
        .kernels
        .iter()
        .filter(|k| k.name.starts_with("tile["))
        .count();
    assert_eq!(tiles, 289 - 34, "UNROLL > 15 removes 34 of 289");
}

#[test]
fn duplicate_suite_names_across_files() {
    let e = load_dir(Path::new("tests/fixtures/duplicate")).unwrap_err();
    assert_eq!(e.diagnostics.len(), 1);
    let d = &e.diagnostics[0];
    assert!(d.file.ends_with("b.toml"), "{d}");
    assert_eq!(
        (d.line, d.col),
        (3, 8),
        "at the name's value, not a comment: {d}"
    );
    assert!(d.message.contains("suite `twin` is also defined in"), "{d}");
    assert!(d.message.contains("a.toml"), "{d}");
}

#[test]
fn a_source_outside_the_suites_folder_is_an_error_at_its_path() {
    let e = load_dir(Path::new("tests/fixtures/outside/suites")).unwrap_err();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let actual = format!("{e}\n").replace(&root.display().to_string(), "<repo>");
    let expected_path = Path::new("tests/fixtures/outside/outside.stderr");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(expected_path, &actual).unwrap();
    }
    assert_eq!(
        actual,
        std::fs::read_to_string(expected_path).unwrap_or_default()
    );
}

#[test]
fn a_missing_suites_folder_says_what_to_do() {
    let e = load_dir(Path::new("no/such/folder")).unwrap_err();
    assert!(e.to_string().contains("KERNELGATE_SUITES"), "{e}");
}

#[test]
fn suites_the_loader_cannot_fully_check_load_with_warnings() {
    let bless = std::env::var_os("BLESS").is_some();
    let files = files_in("tests/fixtures/warn", "toml");
    assert_eq!(files.len(), 4);
    for path in files {
        let suite = load_file(&path).unwrap_or_else(|d| panic!("{path:?}: {d:?}"));
        assert!(!suite.warnings.is_empty(), "{path:?} warns");
        let actual: String = suite
            .warnings
            .iter()
            .map(|w| format!("warning: {w}\n"))
            .collect();
        let expected_path = path.with_extension("stderr");
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
        } else {
            let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
            assert_eq!(actual, expected, "{path:?} (BLESS=1 rewrites)");
        }
    }
}

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

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

/// One way to damage a file: the fuzz mutations the issue names.
fn mutate(rng: &mut Lcg, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    for _ in 0..1 + rng.next(3) {
        if b.is_empty() {
            break;
        }
        let at = rng.next(b.len());
        match rng.next(4) {
            0 => b[at] ^= 1 << rng.next(8), // a bit flip
            1 => {
                let end = (at + 1 + rng.next(16)).min(b.len());
                b.drain(at..end); // a deletion
            }
            2 => {
                let end = (at + 1 + rng.next(64)).min(b.len());
                let piece = b[at..end].to_vec();
                b.splice(at..at, piece); // a duplication
            }
            _ => b.truncate(at), // a truncation
        }
    }
    b
}

/// Loads or reads one input, returning how long it took.
fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// Per-input time bound. Loads take about a millisecond in a debug build; this is for hangs
/// (a 2^n walk, a quadratic scan), not for speed.
const BOUND: Duration = Duration::from_secs(2);

#[test]
fn fuzz_every_fixture_suite_and_source() {
    let mut inputs: Vec<PathBuf> = fixtures();
    inputs.extend(files_in("tests/fixtures/warn", "toml"));
    inputs.extend(files_in("suites", "toml"));
    let mut rng = Lcg(7);
    let (mut runs, mut errors, mut loaded) = (0usize, 0usize, 0usize);
    let mut slowest = (Duration::ZERO, String::new());
    for path in &inputs {
        let base = std::fs::read(path).unwrap();
        for i in 0..60 {
            let bytes = mutate(&mut rng, &base);
            let mut result = None;
            let took = timed(|| result = Some(load_bytes(path, &bytes)));
            runs += 1;
            match result.unwrap() {
                Ok(_) => loaded += 1,
                Err(d) => {
                    errors += 1;
                    assert!(!d.is_empty());
                    assert!(d
                        .iter()
                        .all(|d| d.line >= 1 && d.col >= 1 && !d.message.is_empty()));
                }
            }
            if took > slowest.0 {
                slowest = (took, format!("{} mutation {i}", path.display()));
            }
        }
    }
    // CUDA sources: damaged text through the tokenizer and the signature reader.
    let mut sources: Vec<PathBuf> = files_in("tests/fixtures/bad", "cu");
    sources.extend(files_in("tests/fixtures/warn", "cu"));
    for d in std::fs::read_dir("suites").unwrap() {
        let d = d.unwrap().path();
        if d.is_dir() {
            sources.extend(files_in(d.to_str().unwrap(), "cu"));
        }
    }
    let mut source_runs = 0;
    for path in &sources {
        let base = std::fs::read(path).unwrap();
        for i in 0..300 {
            let text = String::from_utf8_lossy(&mutate(&mut rng, &base)).into_owned();
            let took = timed(|| {
                for entry in [
                    "scale",
                    "tscale<float>",
                    "made",
                    "twice",
                    "saxpy",
                    "softmax",
                ] {
                    let _ = signature::lookup(&text, entry);
                }
            });
            source_runs += 1;
            if took > slowest.0 {
                slowest = (took, format!("{} (source) mutation {i}", path.display()));
            }
        }
    }
    println!(
        "fuzz: {runs} damaged suite files from {} originals ({errors} rejected with located errors, {loaded} still valid); {source_runs} damaged CUDA sources from {}; slowest {:?} ({})",
        inputs.len(),
        sources.len(),
        slowest.0,
        slowest.1
    );
    assert!(inputs.len() >= 90 && sources.len() >= 10);
    assert!(errors > runs / 2, "the mutations exercise the error paths");
    assert!(
        slowest.0 < BOUND,
        "slowest input took {:?}: {}",
        slowest.0,
        slowest.1
    );
}

#[test]
fn pathological_nesting_is_an_error_not_a_crash() {
    let path = Path::new("tests/fixtures/bad/nested.toml");
    for text in [
        format!(
            "[suite]\nname = \"a\"\nx = {}{}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
        format!(
            "[suite]\nname = \"a\"\nx = {}1{}",
            "{a=".repeat(50_000),
            "}".repeat(50_000)
        ),
        format!("[suite]\nname = \"a\"\n{}", "[a.".repeat(20_000)),
    ] {
        let took = timed(|| assert!(load_text(path, &text).is_err()));
        assert!(took < BOUND, "{took:?}");
    }
}

#[cfg(unix)]
#[test]
fn link_loop_trees_are_bounded() {
    use std::os::unix::fs::symlink;
    let suite = std::fs::read_to_string("tests/fixtures/duplicate/a.toml").unwrap();
    let root = std::env::temp_dir().join(format!("kg-link-trees-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut slowest = Duration::ZERO;
    let mut loops = 0;
    let trees = 5;
    for tree in 0..trees {
        let dir = root.join(format!("t{tree}"));
        let mut deep = dir.clone();
        for level in 0..6 {
            deep = deep.join(format!("d{level}"));
            std::fs::create_dir_all(&deep).unwrap();
            // Two links back up from every level: 2^depth paths if followed.
            symlink(&dir, deep.join("again")).unwrap();
            symlink(deep.parent().unwrap(), deep.join("up")).unwrap();
            if tree % 2 == 1 {
                symlink(deep.join("nowhere"), deep.join("dangling")).unwrap();
            }
        }
        // The one suite, reached by its real path and by a link to its folder and to itself.
        std::fs::write(deep.join("s.toml"), &suite).unwrap();
        // Beside the suite, and beside the link to it (paths are relative to where it is read).
        std::fs::copy("tests/fixtures/bad/k.cu", deep.join("k.cu")).unwrap();
        std::fs::copy("tests/fixtures/bad/k.cu", dir.join("k.cu")).unwrap();
        symlink(&deep, dir.join("shortcut")).unwrap();
        symlink(deep.join("s.toml"), dir.join("same.toml")).unwrap();
        if tree >= 3 {
            // Sibling folders that link to each other.
            std::fs::create_dir_all(dir.join("a")).unwrap();
            std::fs::create_dir_all(dir.join("b")).unwrap();
            symlink(dir.join("b"), dir.join("a/to_b")).unwrap();
            symlink(dir.join("a"), dir.join("b/to_a")).unwrap();
        }
        let mut result = None;
        let took = timed(|| result = Some(load_dir(&dir)));
        slowest = slowest.max(took);
        let e = result.unwrap().unwrap_err();
        assert!(
            e.diagnostics
                .iter()
                .all(|d| d.message.contains("link loop")),
            "{e}"
        );
        assert!(e.diagnostics.len() >= 6, "every loop is named: {e}");
        assert!(e.diagnostics.len() <= 14, "and named once: {e}");
        loops += e.diagnostics.len();
    }
    println!("link trees: {trees} trees, {loops} link loops reported, slowest load {slowest:?}");
    std::fs::remove_dir_all(&root).unwrap();
    assert!(slowest < BOUND, "{slowest:?}");
}
