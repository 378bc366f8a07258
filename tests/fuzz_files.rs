//! Damaged stored files fed to every command that reads them, as the user would run them: no
//! input reaches a panic. Each committed fixture — results files (formats 1 and 3: code, units,
//! counters, identical trials), the format-3 baselines, a run history, golden `.npy` files — is
//! damaged deterministically, one mutation per copy: every place in a JSON file (array
//! positions folded, so `trials[*].measurement.time_samples` is one place) gets its container
//! emptied, its type swapped, numbers made huge, tiny, zero, negative or null, its key deleted
//! or its element duplicated; the text is truncated and given `NaN`, `Infinity` and `1e400`; a
//! history gets bad values written into its rows and its bytes cut and flipped; a `.npy` gets
//! its header and data cut and flipped. Then `kernelgate compare`, `merge`, `report`,
//! `history import` / `history`, `lint FILE` and `run` (whose up-front check reads every
//! baseline of its suites) read it. Asserted: no exit code 101 (but from `compare` and `merge`, whose verdict for a run that failed correctness it is), no process killed by a signal,
//! no `panicked` and no "kernelgate failed inside" (the panic guard's message: a caught panic
//! is still a bug) on stderr. The counts are printed (`--nocapture`); on 2 busy cores the four
//! tests take about 100 s (results: 897 damaged files, 2338 processes; baselines: 1307 and
//! 2614; history 124 and 622; `.npy` 120 and 240).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Lcg;

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// What a mutation does to the value at one place.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Empty,
    Swap,
    Huge,
    NegHuge,
    Tiny,
    Zero,
    Negative,
    BigInt,
    Null,
    Delete,
    Duplicate,
}

const NUMBER_OPS: [Op; 9] = [
    Op::Huge,
    Op::NegHuge,
    Op::Tiny,
    Op::Zero,
    Op::Negative,
    Op::BigInt,
    Op::Null,
    Op::Swap,
    Op::Delete,
];
const STRING_OPS: [Op; 4] = [Op::Empty, Op::Swap, Op::Null, Op::Delete];
const ARRAY_OPS: [Op; 5] = [Op::Empty, Op::Duplicate, Op::Swap, Op::Null, Op::Delete];
const OBJECT_OPS: [Op; 4] = [Op::Empty, Op::Swap, Op::Null, Op::Delete];
const OTHER_OPS: [Op; 3] = [Op::Swap, Op::Null, Op::Delete];

fn ops_for(v: &Value) -> &'static [Op] {
    match v {
        Value::Number(_) => &NUMBER_OPS,
        Value::String(_) => &STRING_OPS,
        Value::Array(_) => &ARRAY_OPS,
        Value::Object(_) => &OBJECT_OPS,
        _ => &OTHER_OPS,
    }
}

/// Every place in `v`, with its shape (array positions and trial-name keys folded).
fn places(v: &Value, path: &mut Vec<Seg>, shape: String, out: &mut Vec<(String, Vec<Seg>)>) {
    out.push((shape.clone(), path.clone()));
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let folded = if k.contains("::") { "{name}" } else { k };
                path.push(Seg::Key(k.clone()));
                places(x, path, format!("{shape}.{folded}"), out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                places(x, path, format!("{shape}[*]"), out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Seg]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    })
}

/// `path` written as a JSON path: `.trials[3].name`.
fn concrete(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => format!(".{k}"),
            Seg::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// `base` with `op` applied at `path`.
fn apply(base: &Value, path: &[Seg], op: Op) -> Value {
    let mut v = base.clone();
    if let (Op::Delete, Some((last, parent))) = (op, path.split_last()) {
        match (at(&mut v, parent), last) {
            (Value::Object(m), Seg::Key(k)) => {
                m.remove(k);
            }
            (Value::Array(a), Seg::Index(i)) => {
                a.remove(*i);
            }
            _ => {}
        }
        return v;
    }
    let node = at(&mut v, path);
    *node = match (op, &*node) {
        (Op::Empty, Value::Array(_)) => Value::Array(vec![]),
        (Op::Empty, Value::Object(_)) => Value::Object(Default::default()),
        (Op::Empty, _) => Value::String(String::new()),
        (Op::Swap, Value::Number(n)) => Value::String(n.to_string()),
        (Op::Swap, Value::String(_)) => serde_json::json!(1),
        (Op::Swap, Value::Array(_)) => serde_json::json!({}),
        (Op::Swap, Value::Object(_)) => serde_json::json!([]),
        (Op::Swap, Value::Bool(_)) => serde_json::json!("yes"),
        (Op::Swap, Value::Null) => serde_json::json!(0),
        (Op::Huge, _) => serde_json::json!(1e308),
        (Op::NegHuge, _) => serde_json::json!(-1e308),
        (Op::Tiny, _) => serde_json::json!(5e-324),
        (Op::Zero, _) => serde_json::json!(0),
        (Op::Negative, _) => serde_json::json!(-1),
        (Op::BigInt, _) => serde_json::json!(u64::MAX),
        (Op::Null, _) => Value::Null,
        (Op::Duplicate, Value::Array(a)) => {
            let mut a = a.clone();
            if let Some(first) = a.first().cloned() {
                a.push(first);
            }
            Value::Array(a)
        }
        (_, other) => other.clone(),
    };
    v
}

/// One damaged copy of a file, and how it was damaged.
struct Mutation {
    what: String,
    bytes: Vec<u8>,
}

/// The JSON mutations of `text`: at every shape of place not in `seen` (then added to it),
/// `per_shape` operations (rotating through those that fit the value), at an instance of that
/// shape chosen by `rng`; then text damage: truncations and non-JSON numbers.
fn json_mutations(
    text: &str,
    per_shape: usize,
    rng: &mut Lcg,
    seen: &mut std::collections::BTreeSet<String>,
) -> Vec<Mutation> {
    let base: Value = serde_json::from_str(text).unwrap();
    let mut all = Vec::new();
    places(&base, &mut Vec::new(), String::new(), &mut all);
    let mut shapes: Vec<&str> = all.iter().map(|(s, _)| s.as_str()).collect();
    shapes.sort();
    shapes.dedup();
    shapes.retain(|s| seen.insert(s.to_string()));
    let mut out = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        let instances: Vec<&Vec<Seg>> = all
            .iter()
            .filter(|(s, _)| s == shape)
            .map(|(_, p)| p)
            .collect();
        let path = instances[rng.next(instances.len())];
        let node = at(&mut base.clone(), path).clone();
        let ops = ops_for(&node);
        for j in 0..per_shape.min(ops.len()) {
            let op = ops[(k + j) % ops.len()];
            let v = apply(&base, path, op);
            out.push(Mutation {
                what: format!("{op:?} at `{shape}` ({})", concrete(path)),
                bytes: serde_json::to_vec_pretty(&v).unwrap(),
            });
        }
    }
    for i in 0..8 {
        let cut = rng.next(text.len());
        let mut cut = cut.max(1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push(Mutation {
            what: format!("truncated at byte {cut} (#{i})"),
            bytes: text.as_bytes()[..cut].to_vec(),
        });
    }
    for word in ["NaN", "Infinity", "-Infinity", "1e400"] {
        // The first number after a random point becomes `word`.
        let from = rng.next(text.len());
        if let Some(off) = text[from..].find(|c: char| c.is_ascii_digit()) {
            let s = from + off;
            let e = s + text[s..]
                .find(|c: char| !(c.is_ascii_digit() || ".eE+-".contains(c)))
                .unwrap_or(0);
            out.push(Mutation {
                what: format!("a number at byte {s} written {word}"),
                bytes: format!("{}{word}{}", &text[..s], &text[e..]).into_bytes(),
            });
        }
    }
    out
}

/// Byte damage for binary files: truncations and bit flips at points chosen by `rng`.
fn byte_mutations(bytes: &[u8], n: usize, rng: &mut Lcg) -> Vec<Mutation> {
    (0..n)
        .map(|i| {
            let at = rng.next(bytes.len());
            if i % 2 == 0 {
                Mutation {
                    what: format!("truncated at byte {at}"),
                    bytes: bytes[..at].to_vec(),
                }
            } else {
                let mut b = bytes.to_vec();
                for _ in 0..1 + rng.next(8) {
                    let p = if rng.next(2) == 0 {
                        rng.next(b.len().min(128))
                    } else {
                        at
                    };
                    b[p] ^= 1 << rng.next(8);
                }
                Mutation {
                    what: format!("bits flipped near byte {at}"),
                    bytes: b,
                }
            }
        })
        .collect()
}

/// What the commands did with the damaged files.
#[derive(Default)]
struct Tally {
    processes: AtomicUsize,
    rejected: AtomicUsize,
    panics: Mutex<Vec<String>>,
}

impl Tally {
    /// Runs `kernelgate args` with `env`; records a panic (with what was damaged) if it
    /// reached one.
    fn run(&self, what: &str, args: &[&str], env: &[(&str, &Path)]) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernelgate"));
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let Some((code, stderr)) = run_bounded(cmd) else {
            self.panics.lock().unwrap().push(format!(
                "{what}: `kernelgate {}` took more than {HANG:?} (stopped)",
                args.join(" ")
            ));
            return;
        };
        self.processes.fetch_add(1, Ordering::Relaxed);
        if code == Some(2) {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        // `compare` and `merge` exit 101 for a run that failed correctness (their verdict, not
        // a panic: the guard turns every panic into its message and exit 2).
        let verdict_101 = matches!(args.first(), Some(&"compare" | &"merge"));
        if (code == Some(101) && !verdict_101)
            || code.is_none()
            || stderr.contains("panicked")
            || stderr.contains("kernelgate failed inside")
        {
            self.panics.lock().unwrap().push(format!(
                "{what}: `kernelgate {}` exited {code:?}:\n{stderr}",
                args.join(" ")
            ));
        }
    }

    fn report(&self, name: &str, files: usize, mutations: usize) {
        let panics = self.panics.lock().unwrap();
        println!(
            "fuzz {name}: {files} file(s), {mutations} mutation(s), {} process(es), {} rejected with exit 2, {} reached a panic",
            self.processes.load(Ordering::Relaxed),
            self.rejected.load(Ordering::Relaxed),
            panics.len()
        );
        assert!(
            panics.is_empty(),
            "{} damaged input(s) reached a panic:\n{}",
            panics.len(),
            panics.join("\n")
        );
    }
}

/// Longer than any command takes on a damaged file (they take well under a second in a debug
/// build): past it the command hangs, which is a finding like a panic.
const HANG: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs `cmd` to its end, or stops it after [`HANG`]: its exit code and stderr, `None` when it
/// had to be stopped.
fn run_bounded(mut cmd: Command) -> Option<(Option<i32>, String)> {
    use std::io::Read;
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kernelgate starts");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some((status.code(), reader.join().unwrap()));
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A fresh folder under the target directory's temporary space.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `each(index, mutation, folder)` over `mutations` on every core.
fn in_parallel(mutations: &[Mutation], dir: &Path, each: impl Fn(usize, &Mutation, &Path) + Sync) {
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (next, each) = (&next, &each);
            let own = dir.join(format!("t{t}"));
            std::fs::create_dir_all(&own).unwrap();
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(m) = mutations.get(i) else { break };
                each(i, m, &own);
            });
        }
    });
}

/// The results fixtures, with operations per place, and whether every command reads each
/// damaged copy (the large real runs: `compare` and `report`, which read every field).
const RESULTS: [(&str, usize, bool); 4] = [
    ("tests/fixtures/results/example.json", 2, true),
    ("tests/fixtures/results/h200-run.json", 1, false),
    ("tests/fixtures/results/h200-paired.json", 1, false),
    // Format 3: code, units, counters, identical trials.
    ("tests/fixtures/results/h200-paired-block.json", 1, false),
];

#[test]
fn damaged_results_files_reach_no_panic() {
    let dir = scratch("results");
    let tally = Tally::default();
    let mut rng = Lcg(20);
    let mut total = 0;
    for (file, per_shape, every_command) in RESULTS {
        let text = std::fs::read_to_string(file).unwrap();
        // Every shape of every file: the files differ in their values and fields.
        let mutations = json_mutations(&text, per_shape, &mut rng, &mut Default::default());
        total += mutations.len();
        in_parallel(&mutations, &dir, |i, m, own| {
            let damaged = own.join("damaged.json");
            std::fs::write(&damaged, &m.bytes).unwrap();
            let d = damaged.to_str().unwrap();
            let what = format!("{file}: {}", m.what);
            // OLD and NEW in turn.
            let pair = if i % 2 == 0 { [file, d] } else { [d, file] };
            tally.run(&what, &["compare", "--all", pair[0], pair[1]], &[]);
            let html = own.join("report.html");
            tally.run(&what, &["report", d, "--html", html.to_str().unwrap()], &[]);
            if every_command {
                let merged = own.join("merged.json");
                tally.run(&what, &["merge", merged.to_str().unwrap(), d], &[]);
                let db = own.join(format!("h{i}.sqlite"));
                let db = db.to_str().unwrap();
                tally.run(&what, &["history", "import", d, "--db", db], &[]);
                let _ = std::fs::remove_file(db);
            }
        });
    }
    tally.report("results", RESULTS.len(), total);
    assert!(total >= 500, "{total} mutations");
    assert!(tally.rejected.load(Ordering::Relaxed) >= total / 2);
}

/// The committed baselines folder, one device.
fn baseline_files() -> Vec<PathBuf> {
    let device = std::fs::read_dir("baselines")
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a device folder under baselines/");
    let mut files: Vec<PathBuf> = std::fs::read_dir(device)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn damaged_baselines_reach_no_panic() {
    let dir = scratch("baselines");
    let tally = Tally::default();
    let mut rng = Lcg(21);
    let files = baseline_files();
    let mut total = 0;
    // The files of one format share their shapes: the first file gets every operation at each
    // place, the next two three; later files one at the places none of those had, and each is
    // cut and given non-JSON numbers.
    let mut seen = std::collections::BTreeSet::new();
    for (n, file) in files.iter().enumerate() {
        let text = std::fs::read_to_string(file).unwrap();
        let per_shape = [9, 3, 3].get(n).copied().unwrap_or(1);
        let mut own = std::collections::BTreeSet::new();
        let shapes = if n < 3 { &mut own } else { &mut seen };
        let mutations = json_mutations(&text, per_shape, &mut rng, shapes);
        seen.extend(own);
        total += mutations.len();
        let device = file.parent().unwrap().file_name().unwrap();
        let name = file.file_name().unwrap();
        in_parallel(&mutations, &dir, |_, m, own| {
            let baselines = own.join("baselines");
            let at = baselines.join(device).join(name);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(&at, &m.bytes).unwrap();
            let what = format!("{}: {}", file.display(), m.what);
            // `run` checks its suites' baselines before anything runs (no GPU needed); the
            // filter selects no trial.
            tally.run(
                &what,
                &["run", "--", "no-trial-is-named-this"],
                &[
                    ("KERNELGATE_BASELINES", &baselines),
                    ("KERNELGATE_SUITES", Path::new("suites")),
                ],
            );
            tally.run(&what, &["lint", at.to_str().unwrap()], &[]);
        });
    }
    tally.report("baselines", files.len(), total);
    assert!(total >= 800, "{total} mutations");
}

#[test]
fn a_damaged_history_reaches_no_panic() {
    let dir = scratch("history");
    let tally = Tally::default();
    let good = dir.join("good.sqlite");
    for file in [
        "tests/fixtures/results/example.json",
        "tests/fixtures/results/h200-run.json",
    ] {
        tally.run(
            "building the history",
            &["history", "import", file, "--db", good.to_str().unwrap()],
            &[],
        );
    }
    assert!(good.exists());
    let mut mutations = Vec::new();
    // Bad values in the rows: every column of both tables, row by row, as NULL, text, a
    // negative and a huge number, a blob, and (for the JSON columns) damaged JSON.
    let conn = rusqlite::Connection::open(&good).unwrap();
    let columns = |table: &str| -> Vec<String> {
        let mut stmt = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        let names = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        names.map(Result::unwrap).collect()
    };
    let values = [
        "NULL",
        "'x'",
        "-1",
        "1e308",
        "X'FF00'",
        "''",
        "'[]'",
        "'{\"measurement\": 3}'",
        "'[1e308, -1, 0]'",
    ];
    let bytes = std::fs::read(&good).unwrap();
    let mut rng = Lcg(22);
    for table in ["runs", "trials"] {
        for (c, column) in columns(table).iter().enumerate() {
            for (v, value) in values.iter().enumerate() {
                if (c + v) % 2 == 1 {
                    continue;
                }
                let copy = dir.join("edit.sqlite");
                std::fs::write(&copy, &bytes).unwrap();
                let edit = rusqlite::Connection::open(&copy).unwrap();
                let n: i64 = edit
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                    .unwrap();
                let row = 1 + rng.next(n as usize) as i64;
                // A NOT NULL column refuses some values: then that value is not a mutation.
                let changed = edit.execute(
                    &format!(
                        "UPDATE {table} SET {column} = {value} WHERE rowid IN (SELECT rowid FROM {table} LIMIT 1 OFFSET {})",
                        row - 1
                    ),
                    [],
                );
                drop(edit);
                if changed.is_ok() {
                    mutations.push(Mutation {
                        what: format!("{table}.{column} = {value} in row {row}"),
                        bytes: std::fs::read(&copy).unwrap(),
                    });
                }
            }
        }
    }
    drop(conn);
    mutations.extend(byte_mutations(&bytes, 40, &mut rng));
    in_parallel(&mutations, &dir, |i, m, own| {
        let db = own.join(format!("m{i}.sqlite"));
        std::fs::write(&db, &m.bytes).unwrap();
        let d = db.to_str().unwrap();
        let html = own.join("trend.html");
        tally.run(&m.what, &["history", "--db", d], &[]);
        tally.run(&m.what, &["history", "--db", d, "--check"], &[]);
        tally.run(
            &m.what,
            &["history", "--db", d, "--html", html.to_str().unwrap()],
            &[],
        );
        tally.run(
            &m.what,
            &[
                "history",
                "import",
                "tests/fixtures/results/example.json",
                "--db",
                d,
            ],
            &[],
        );
        tally.run(&m.what, &["lint", d], &[]);
        let _ = std::fs::remove_file(&db);
    });
    tally.report("history", 1, mutations.len());
    assert!(mutations.len() >= 80, "{}", mutations.len());
}

#[test]
fn damaged_golden_and_input_files_reach_no_panic() {
    let dir = scratch("npy");
    let tally = Tally::default();
    let mut rng = Lcg(23);
    let mut npys: Vec<PathBuf> = std::fs::read_dir("suites/conv2d")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    npys.sort();
    let mut total = 0;
    for npy in &npys {
        let bytes = std::fs::read(npy).unwrap();
        let mutations = byte_mutations(&bytes, 40, &mut rng);
        total += mutations.len();
        in_parallel(&mutations, &dir, |_, m, own| {
            // The conv2d suite alone, with one of its .npy files damaged.
            let suites = own.join("suites");
            let folder = suites.join("conv2d");
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::copy("suites/conv2d.toml", suites.join("conv2d.toml")).unwrap();
            for entry in std::fs::read_dir("suites/conv2d").unwrap() {
                let p = entry.unwrap().path();
                std::fs::copy(&p, folder.join(p.file_name().unwrap())).unwrap();
            }
            let damaged = folder.join(npy.file_name().unwrap());
            std::fs::write(&damaged, &m.bytes).unwrap();
            let what = format!("{}: {}", npy.display(), m.what);
            tally.run(
                &what,
                &["run", "--", "no-trial-is-named-this"],
                &[("KERNELGATE_SUITES", &suites)],
            );
            tally.run(&what, &["lint", damaged.to_str().unwrap()], &[]);
        });
    }
    tally.report("npy", npys.len(), total);
    assert!(total >= 100);
}
