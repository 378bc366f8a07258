//! The shape of `harness/`: no import circle between files, and no file over 600 lines.
//!
//! A file depends on another when it names an item there: in a `use` tree, or inline in code
//! (`crate::suite::expr::eval(..)`, `super::Ctx`, `child::f()`, or through a name a `use` brought
//! in). A path is resolved to the file that defines its module, following `pub use` re-exports to
//! the file that defines the item, the way `cargo modules dependencies --acyclic` does. This test
//! stands in for that tool: it needs nothing installed, so CI runs it with every `cargo test`,
//! and it prints each circle with the line that makes each step. Declaring a child module
//! (`mod x;`) is ownership, not a dependency; comments and strings are not code.
//!
//! The module tree is found the way rustc finds it: from `harness/lib.rs` through `mod x;`
//! declarations (and `#[path]`), so a file no `mod` reaches is reported too.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest a file under `harness/` may be (issue 21): past it, split by what the parts do.
const MAX_LINES: usize = 600;

/// The most stringly error types `harness/` may keep outside tests (issue 21), each with a
/// `// stringly:` comment just above saying why.
const MAX_STRINGLY: usize = 8;

#[test]
fn no_import_circle_between_files() {
    let tree = Tree::load(&harness());
    let graph = tree.graph();
    let circles = circles(&graph);
    let mut text = String::new();
    for members in &circles {
        text.push_str(&format!(
            "circle of {} files: {}\n",
            members.len(),
            members
                .iter()
                .map(|m| rel(m))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for step in inside(&graph, members) {
            text.push_str(&format!("    {step}\n"));
        }
    }
    assert!(
        circles.is_empty(),
        "{} import circle(s) between files under harness/ (move what both sides share into a \
         file of its own, below both):\n{text}",
        circles.len()
    );
}

#[test]
fn no_file_over_600_lines() {
    let mut long = Vec::new();
    for file in rust_files(&harness()) {
        let lines = fs::read_to_string(&file).unwrap().lines().count();
        if lines > MAX_LINES {
            long.push(format!("{} ({lines} lines)", rel(&file)));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by what the parts do):\n{}",
        long.join("\n")
    );
}

/// `Result<_, String>` and `Box<dyn Error>` (aliases and newtypes over `String` likewise)
/// in code outside tests: at most `MAX_STRINGLY`, each with its reason.
#[test]
fn few_stringly_errors_each_with_a_reason() {
    let mut found = Vec::new();
    let mut unexplained = Vec::new();
    for file in rust_files(&harness()) {
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Unit tests are the file's last item (`#[cfg(test)] mod tests`): not counted.
        let end = lines
            .windows(2)
            .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
            .unwrap_or(lines.len());
        for (i, line) in lines[..end].iter().enumerate() {
            if !stringly(line) {
                continue;
            }
            let place = format!("{}:{}: {}", rel(&file), i + 1, line.trim());
            let above = &lines[i.saturating_sub(4)..i];
            if !above
                .iter()
                .any(|l| l.trim_start().starts_with("// stringly:"))
            {
                unexplained.push(place.clone());
            }
            found.push(place);
        }
    }
    assert!(
        unexplained.is_empty(),
        "stringly error types without a `// stringly:` reason above them (use a thiserror \
         enum, or say why text is the right type):\n{}",
        unexplained.join("\n")
    );
    assert!(
        found.len() <= MAX_STRINGLY,
        "{} stringly error types, at most {MAX_STRINGLY}:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// Whether a line declares a stringly error type.
fn stringly(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    let result_string = code.find("Result<").is_some_and(|at| {
        let rest = &code[at..];
        rest.contains(", String>") || rest.contains(",String>")
    });
    let alias = code.trim_start().starts_with("type ") && code.trim_end().ends_with("= String;");
    let newtype = code.contains("(String);") && code.contains("struct ");
    result_string
        || alias
        || newtype
        || code.contains("Box<dyn Error")
        || code.contains("Box<dyn std::error::Error")
}

#[test]
fn every_file_is_in_the_module_tree() {
    let tree = Tree::load(&harness());
    let known: BTreeSet<&PathBuf> = tree.modules.values().chain(&tree.included).collect();
    let lost: Vec<String> = rust_files(&harness())
        .into_iter()
        .filter(|f| !known.contains(f) && !f.starts_with(harness().join("bin")))
        .map(|f| rel(&f))
        .collect();
    assert!(
        lost.is_empty(),
        "files no `mod` declaration reaches:\n{}",
        lost.join("\n")
    );
}

/// The checker itself, on small crates written here: it sees what it must and nothing more.
/// docs/architecture.md maps every Rust file of the product and the lab (`### \`dir/\``
/// headings, then one `- \`file.rs\` — …` line per file): none missing, none gone.
#[test]
fn the_map_lists_every_file() {
    let doc = fs::read_to_string("docs/architecture.md").unwrap();
    let mut listed = BTreeSet::new();
    let mut folder = None;
    for line in doc.lines() {
        if let Some(dir) = line
            .strip_prefix("### `")
            .and_then(|l| l.strip_suffix("/`"))
        {
            folder = Some(dir.to_string());
        } else if let (Some(dir), Some(item)) = (&folder, line.strip_prefix("- `")) {
            let (name, room) = item.split_once("` — ").unwrap_or((item, ""));
            assert!(!room.trim().is_empty(), "{dir}/{name}: no room given");
            listed.insert(format!("{dir}/{name}"));
        }
    }
    let mut files = BTreeSet::new();
    for root in ["harness", "lab/src"] {
        for f in rust_files(Path::new(root)) {
            files.insert(f.to_string_lossy().replace('\\', "/"));
        }
    }
    let missing: Vec<&String> = files.difference(&listed).collect();
    let gone: Vec<&String> = listed.difference(&files).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "docs/architecture.md's map of every file is out of date:\nnot listed: {missing:?}\nlisted but gone: {gone:?}"
    );
}

#[test]
fn the_checker_sees_use_trees_inline_paths_and_re_exports() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("architecture-selftest");
    let _ = fs::remove_dir_all(&dir);
    let files = [
        ("lib.rs", "pub mod a;\npub mod b;\nmod c;\nmod d;\n"),
        // a -> d through an inline path; not to c, named only in a comment and a string.
        (
            "a/mod.rs",
            "mod inner;\npub use inner::Thing;\n// crate::c::gone() in a comment is no edge\n\
             fn f() { let s = \"crate::c::x\"; crate::d::f(); }\n",
        ),
        ("d.rs", "pub fn f() {}\n"),
        ("a/inner.rs", "pub struct Thing;\n"),
        // b -> a::inner through a's re-export, not to a/mod.rs.
        ("b.rs", "use crate::a::Thing;\npub fn g() {}\n"),
        // c -> a/inner.rs (re-export) and b via a use-tree; b -> c inline closes b <-> c.
        (
            "c.rs",
            "use crate::{a::{self, Thing}, b};\nfn h() { b::g(); }\n",
        ),
    ];
    for (path, text) in files {
        let p = dir.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let graph = Tree::load(&dir).graph();
    let edges = |from: &str| -> BTreeSet<String> {
        graph
            .get(&dir.join(from))
            .map(|e| {
                e.keys()
                    .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        edges("a/mod.rs"),
        ["a/inner.rs", "d.rs"].map(String::from).into()
    );
    assert_eq!(edges("b.rs"), ["a/inner.rs"].map(String::from).into());
    assert_eq!(
        edges("c.rs"),
        ["a/inner.rs", "a/mod.rs", "b.rs"].map(String::from).into()
    );
    assert!(circles(&graph).is_empty());
    // Now b names c inline: b <-> c is a circle, and it is reported with both steps.
    fs::write(dir.join("b.rs"), "pub fn g() { crate::c::h(); }\n").unwrap();
    let graph = Tree::load(&dir).graph();
    let found = circles(&graph);
    assert_eq!(found.len(), 1);
    let steps = inside(&graph, &found[0]);
    assert_eq!(steps.len(), 2, "{steps:?}");
}

fn harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("harness")
}

fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(p)
        .display()
        .to_string()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// File → (file it depends on → the first place that says so).
type Graph = BTreeMap<PathBuf, BTreeMap<PathBuf, String>>;

/// A module path from the crate root: `["suite", "load"]`.
type ModPath = Vec<String>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    /// `::`
    Sep,
    Punct(char),
}

/// Tokens of one file, each with its line; comments dropped, literals kept as `Str`.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied().unwrap_or(' ');
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' || ((ch == 'r' || ch == 'b') && raw_string_start(&c, i).is_some()) {
            let start_line = line;
            let (text, end) = string_literal(&c, i);
            line += text.matches('\n').count();
            out.push((Tok::Str(text), start_line));
            i = end;
        } else if ch == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if next == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ident(ch) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            out.push((Tok::Ident(c[start..i].iter().collect()), line));
        } else if ch == ':' && next == ':' {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// Where a raw (or byte) string's quote is, when one starts at `i`: `r"`, `r#"`, `b"`, `br#"`.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) == Some(&'r') {
        j += 1;
        while c.get(j) == Some(&'#') {
            j += 1;
        }
    }
    (j > i && c.get(j) == Some(&'"')).then_some(j)
}

/// A string literal starting at `i`: its text and the index after it.
fn string_literal(c: &[char], i: usize) -> (String, usize) {
    let quote = raw_string_start(c, i).unwrap_or(i);
    let hashes = c[i..quote].iter().filter(|&&h| h == '#').count();
    let raw = c[i..quote].contains(&'r');
    let mut j = quote + 1;
    let mut text = String::new();
    while j < c.len() {
        if !raw && c[j] == '\\' {
            text.push(c[j]);
            text.extend(c.get(j + 1));
            j += 2;
            continue;
        }
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return (text, j + 1 + hashes);
        }
        text.push(c[j]);
        j += 1;
    }
    (text, j)
}

/// One path a file names, where, and in which (possibly inline) module.
#[derive(Debug, Clone)]
struct Mention {
    scope: ModPath,
    segments: Vec<String>,
    line: usize,
}

/// What one file says: the paths it names, its `use` bindings and its `pub use` re-exports.
#[derive(Debug, Default)]
struct FileFacts {
    /// Every path in a `use` tree or in code.
    mentions: Vec<Mention>,
    /// Per scope: a name a `use` binds → the path it stands for.
    bindings: BTreeMap<ModPath, BTreeMap<String, Vec<String>>>,
    /// Names this file's top level re-exports (`pub use`) → the path they stand for.
    re_exports: BTreeMap<String, Vec<String>>,
    /// Child modules declared with `mod x;`, with their `#[path]` when given.
    children: Vec<(String, Option<String>)>,
    /// Files pulled in with `include!("…")`: part of this file.
    includes: Vec<String>,
}

/// The crate's module tree: module path → file, and what each file says.
struct Tree {
    modules: BTreeMap<ModPath, PathBuf>,
    /// Files that `include!` pulls into a module's file.
    included: BTreeSet<PathBuf>,
    facts: BTreeMap<PathBuf, (ModPath, FileFacts)>,
}

impl Tree {
    fn load(root: &Path) -> Tree {
        let mut tree = Tree {
            modules: BTreeMap::new(),
            included: BTreeSet::new(),
            facts: BTreeMap::new(),
        };
        let mut todo = vec![(Vec::new(), root.join("lib.rs"))];
        while let Some((path, file)) = todo.pop() {
            let src = fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            let facts = read_facts(&tokens(&src), &path);
            let dir = file.parent().unwrap();
            let stem = file.file_stem().unwrap().to_string_lossy().to_string();
            let owns_dir = path.is_empty() || stem == "mod";
            tree.included
                .extend(facts.includes.iter().map(|name| dir.join(name)));
            for (name, explicit) in &facts.children {
                let child = match explicit {
                    Some(p) => dir.join(p),
                    None => {
                        let base = if owns_dir {
                            dir.to_path_buf()
                        } else {
                            dir.join(&stem)
                        };
                        let flat = base.join(format!("{name}.rs"));
                        if flat.exists() {
                            flat
                        } else {
                            base.join(name).join("mod.rs")
                        }
                    }
                };
                let mut child_path = path.clone();
                child_path.push(name.clone());
                todo.push((child_path, child));
            }
            tree.modules.insert(path.clone(), file.clone());
            tree.facts.insert(file, (path, facts));
        }
        tree
    }

    /// The file that defines `abs` (an absolute path), following re-exports; `None` outside
    /// the crate.
    fn file_of(&self, abs: &[String], depth: usize) -> Option<PathBuf> {
        let (len, file) = (0..=abs.len())
            .rev()
            .find_map(|n| self.modules.get(&abs[..n]).map(|f| (n, f)))?;
        if let (Some(name), true) = (abs.get(len), depth < 16) {
            let (module, facts) = &self.facts[file];
            if let Some(target) = facts.re_exports.get(name) {
                if let Some(mut target) = self.absolute(module, target, facts) {
                    target.extend(abs[len + 1..].iter().cloned());
                    if let Some(f) = self.file_of(&target, depth + 1) {
                        return Some(f);
                    }
                }
            }
        }
        Some(file.clone())
    }

    /// `segments`, named in module `scope` of a file with `facts`, as an absolute path; `None`
    /// for paths outside the crate (std, other crates, local names).
    fn absolute(
        &self,
        scope: &[String],
        segments: &[String],
        facts: &FileFacts,
    ) -> Option<ModPath> {
        let first = segments.first()?;
        let mut base: ModPath = match first.as_str() {
            "crate" => Vec::new(),
            "self" => scope.to_vec(),
            "super" => {
                let mut b = scope.to_vec();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    b.pop()?;
                    rest = &rest[1..];
                }
                b.extend(rest.iter().cloned());
                return Some(b);
            }
            _ => {
                let mut child = scope.to_vec();
                child.push(first.clone());
                if self.modules.contains_key(&child) {
                    child.pop();
                    child
                } else if let Some(bound) = facts.bindings.get(scope).and_then(|b| b.get(first)) {
                    // `use name;` binds a name to itself (a macro made importable by a `use`
                    // after its `macro_rules!`): a local item, not a path to follow.
                    if bound.as_slice() == std::slice::from_ref(first) {
                        return None;
                    }
                    let mut abs = self.absolute(scope, bound, facts)?;
                    abs.extend(segments[1..].iter().cloned());
                    return Some(abs);
                } else {
                    return None;
                }
            }
        };
        let skip = usize::from(matches!(first.as_str(), "crate" | "self"));
        base.extend(segments[skip..].iter().cloned());
        Some(base)
    }

    fn graph(&self) -> Graph {
        let mut graph = Graph::new();
        for (file, (_, facts)) in &self.facts {
            let edges = graph.entry(file.clone()).or_default();
            for m in &facts.mentions {
                let Some(abs) = self.absolute(&m.scope, &m.segments, facts) else {
                    continue;
                };
                let Some(to) = self.file_of(&abs, 0) else {
                    continue;
                };
                if &to != file {
                    edges
                        .entry(to)
                        .or_insert_with(|| format!("line {}: {}", m.line, m.segments.join("::")));
                }
            }
        }
        graph
    }
}

/// Reads one file's tokens: modules declared, `use` trees, inline paths.
fn read_facts(toks: &[(Tok, usize)], file_module: &[String]) -> FileFacts {
    let mut facts = FileFacts::default();
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let punct = |i: usize, c: char| matches!(toks.get(i), Some((Tok::Punct(p), _)) if *p == c);
    let sep = |i: usize| matches!(toks.get(i), Some((Tok::Sep, _)));
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let scope: ModPath = file_module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        if punct(i, '{') {
            depth += 1;
        } else if punct(i, '}') {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
        } else if ident(i) == Some("mod") && !sep(i.wrapping_sub(1)) {
            if let Some(name) = ident(i + 1) {
                if punct(i + 2, '{') {
                    inline.push((name.to_string(), depth + 1));
                } else if punct(i + 2, ';') && inline.is_empty() {
                    facts.children.push((name.to_string(), path_attr(toks, i)));
                }
            }
        } else if ident(i) == Some("use") && !sep(i.wrapping_sub(1)) {
            let public = is_pub(toks, i);
            let mut leaves = Vec::new();
            let end = use_tree(toks, i + 1, Vec::new(), &mut leaves);
            for (segments, binding) in leaves {
                facts.mentions.push(Mention {
                    scope: scope.clone(),
                    segments: segments.clone(),
                    line: toks[i].1,
                });
                if let Some(name) = binding {
                    if public && inline.is_empty() {
                        facts.re_exports.insert(name.clone(), segments.clone());
                    }
                    facts
                        .bindings
                        .entry(scope.clone())
                        .or_default()
                        .insert(name, segments);
                }
            }
            i = end;
            continue;
        } else if ident(i) == Some("include") && punct(i + 1, '!') {
            if let Some((Tok::Str(name), _)) = toks.get(i + 3) {
                facts.includes.push(name.clone());
            }
        } else if let Some(first) = ident(i) {
            // An inline path: `a::b::c`, not the tail of a longer one, not a macro's `$crate`
            // (kept: it means `crate`).
            if sep(i + 1) && !sep(i.wrapping_sub(1)) {
                let mut segments = vec![first.to_string()];
                let mut j = i + 1;
                while sep(j) {
                    match ident(j + 1) {
                        Some(s) => segments.push(s.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                facts.mentions.push(Mention {
                    scope,
                    segments,
                    line: toks[i].1,
                });
                i = j;
                continue;
            }
        }
        i += 1;
    }
    facts
}

/// Whether the item at `i` is declared `pub` (any visibility).
fn is_pub(toks: &[(Tok, usize)], i: usize) -> bool {
    let mut j = i;
    while j > 0 {
        j -= 1;
        match &toks[j].0 {
            Tok::Ident(s) if s == "pub" => return true,
            Tok::Ident(s) if s == "crate" || s == "super" || s == "in" || s == "self" => {}
            Tok::Punct('(') | Tok::Punct(')') => {}
            _ => return false,
        }
    }
    false
}

/// The `#[path = "…"]` on the `mod` at `i`, looking back over its attributes.
fn path_attr(toks: &[(Tok, usize)], i: usize) -> Option<String> {
    let mut j = i;
    while j > 0 {
        j -= 1;
        match &toks[j].0 {
            Tok::Ident(s) if s == "pub" || s == "crate" || s == "super" || s == "in" => {}
            Tok::Punct('(') | Tok::Punct(')') => {}
            Tok::Punct(']') => {
                let close = j;
                while j > 0 && toks[j].0 != Tok::Punct('[') {
                    j -= 1;
                }
                let inside = &toks[j + 1..close];
                if let [(Tok::Ident(p), _), (Tok::Punct('='), _), (Tok::Str(s), _)] = inside {
                    if p == "path" {
                        return Some(s.clone());
                    }
                }
                // Step over the `#` of this attribute.
                j = j.saturating_sub(1);
            }
            _ => return None,
        }
    }
    None
}

/// Parses a `use` tree from `i`; pushes (path, name it binds) per leaf; returns the index after
/// the tree (past the `;` at the top level).
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix;
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Sep) => i += 1,
            Some(Tok::Ident(s)) if s == "as" => {
                let alias = match toks.get(i + 1).map(|t| &t.0) {
                    Some(Tok::Ident(a)) if a != "_" => Some(a.clone()),
                    _ => None,
                };
                leaves.push((path.clone(), alias));
                path.clear();
                i += 2;
                return finish(toks, i);
            }
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                i += 1;
            }
            Some(Tok::Punct('*')) => {
                leaves.push((path.clone(), None));
                return finish(toks, i + 1);
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) => return finish(toks, i + 1),
                        Some(Tok::Punct(',')) => i += 1,
                        None => return i,
                        _ => i = use_tree(toks, i, path.clone(), leaves),
                    }
                }
            }
            _ => {
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                let name = path.last().cloned();
                if !path.is_empty() {
                    leaves.push((path, name));
                }
                return finish(toks, i);
            }
        }
    }
}

/// Past a leaf: stop before `,` or `}` (the caller's), or step past `;`.
fn finish(toks: &[(Tok, usize)], i: usize) -> usize {
    match toks.get(i).map(|t| &t.0) {
        Some(Tok::Punct(';')) => i + 1,
        _ => i,
    }
}

/// The strongly connected components of more than one file: each is a circle (or several).
fn circles(graph: &Graph) -> Vec<BTreeSet<PathBuf>> {
    // Tarjan's algorithm, iteratively.
    let nodes: Vec<&PathBuf> = graph.keys().collect();
    let index_of: BTreeMap<&PathBuf, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            graph[*n]
                .keys()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut out) = (Vec::new(), 0, Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut k)) = call.last_mut() {
            if let Some(&w) = succ[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    call.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = BTreeSet::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    members.insert(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if members.len() > 1 {
                    out.push(members);
                }
            }
        }
    }
    out.sort();
    out
}

/// Every step inside a circle, as "a.rs -> b.rs (line n: path)".
fn inside(graph: &Graph, members: &BTreeSet<PathBuf>) -> Vec<String> {
    let mut steps = Vec::new();
    for from in members {
        for (to, why) in &graph[from] {
            if members.contains(to) {
                steps.push(format!("{} -> {} ({why})", rel(from), rel(to)));
            }
        }
    }
    steps
}
