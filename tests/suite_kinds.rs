//! Malformed suites, one kind at a time: each is one mutation of a valid suite (written into a
//! folder of its own with its kernel source, and loaded as `run` and `lint` load a folder), and
//! must be refused with a message that says what is wrong — at the place the mutation names
//! (the value, not its table; both definitions of a name written twice). The issue 20 rules
//! come first, then kinds written for this test. `tests/fixtures/bad/` keeps a fixture with its
//! exact message for the rules; this table covers the kinds, and is counted (`--nocapture`).

use kernelgate::error::{line_col, Diagnostic};
use kernelgate::suite::load_dir;
use std::path::{Path, PathBuf};

const SOURCE: &str = r#"
extern "C" __global__ void scale(float a, const float* src, const unsigned char* keys,
                                 float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = a * src[i] + keys[i];
}
extern "C" __global__ void scale_fast(float a, const float* src, const unsigned char* keys,
                                      float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = a * src[i] + keys[i];
}
"#;

const BASE: &str = r#"[suite]
name = "kinds"
source = "k.cu"
sizes = { n = [256, 1024], nbins = [16] }

[[buffer]]
name = "src"
type = "f32"
len = "n"
init = { random = "uniform", min = -1.0, max = 1.0 }

[[buffer]]
name = "keys"
type = "u8"
len = "n"
init = { random = "int", min = 0, max = "nbins - 1" }

[[buffer]]
name = "dst"
type = "f32"
len = "n"
role = "output"

[[kernel]]
name = "naive"
entry = "scale"
reference = true
grid = ["ceil(n / 256)"]
block = [256]
args = ["2.0f32", "src", "keys", "dst", "n as i32"]

[[kernel]]
name = "fast"
entry = "scale_fast"
grid = ["ceil(n / 256)"]
block = [256]
args = ["2.0f32", "src", "keys", "dst", "n as i32"]

[check]
trials = 2
rtol = 1e-5
atol = 1e-6

[bench]
max_slowdown = "3%"
min_samples = 10
max_samples = 200
"#;

/// One malformed kind: `from` (its first occurrence; empty: the end of the file) becomes `to`;
/// an error must say `says`, at the first `at` from where `to` went in.
struct Kind {
    name: &'static str,
    from: &'static str,
    to: &'static str,
    at: &'static str,
    says: &'static str,
}

const fn kind(
    name: &'static str,
    from: &'static str,
    to: &'static str,
    at: &'static str,
    says: &'static str,
) -> Kind {
    Kind {
        name,
        from,
        to,
        at,
        says,
    }
}

/// The rules issue 20 added.
const RULES: &[Kind] = &[
    kind("memory budget below the buffers", "sizes = {", "memory_budget = \"2 KiB\"\nsizes = {", "\"2 KiB\"", "over memory_budget (2048 bytes)"),
    kind("min_samples above max_samples", "min_samples = 10", "min_samples = 500", "200", "`max_samples` must be at least `min_samples` (500)"),
    kind("a source outside the suites folder", "source = \"k.cu\"", "source = \"../outside.cu\"", "\"../outside.cu\"", "is outside the suites folder"),
    kind("an include folder outside the suites folder", "source = \"k.cu\"", "source = \"k.cu\"\ninclude_dirs = [\"..\"]", "\"..\"", "include dir `..` is outside the suites folder"),
    kind("a table written twice", "", "\n[check]\ntrials = 3\n", "check]", "table `[check]` is written again here, first at line 39"),
    kind("a key written twice", "trials = 2\n", "trials = 2\ntrials = 3\n", "trials = 3", "key `trials` is written again here, first at line 40"),
    kind("a buffer declared twice", "name = \"dst\"", "name = \"src\"", "\"src\"", "buffer `src` is declared again here, first at line 7"),
    kind("a kernel declared twice", "name = \"fast\"", "name = \"naive\"", "\"naive\"", "kernel `naive` is declared again here, first at line 25"),
    kind("a bad size at its value", "n = [256, 1024]", "n = \"big\"", "\"big\"", "size `n` must be a non-negative integer"),
    kind("a role misspelt with a dash", "role = \"output\"", "role = \"in-out\"", "\"in-out\"", "unknown role `in-out` (did you mean `inout`?)"),
    kind("an init bound over an unknown size", "max = \"nbins - 1\"", "max = \"nbin - 1\"", "nbin -", "unknown size `nbin` (did you mean `nbins`?)"),
    kind("an init bound over the sizes outside the type", "max = \"nbins - 1\"", "max = \"n\"", "{ random = \"int\"", "random = \"int\" needs min <= max within `u8` (got 0 and 256 for n=256,nbins=16)"),
    kind("an init bound over the sizes below the other", "min = 0, max = \"nbins - 1\"", "min = 20, max = \"nbins - 1\"", "{ random = \"int\"", "needs min <= max within `u8` (got 20 and 15"),
    kind("a misspelt key", "source = \"k.cu\"", "soruce = \"k.cu\"", "soruce", "(did you mean `source`?)"),
    kind("a misspelt table", "[bench]", "[bnech]", "bnech", "(did you mean `bench`?)"),
    kind("a misspelt init key", "min = -1.0, max = 1.0", "min = -1.0, maxx = 1.0", "maxx", "(did you mean `max`?)"),
    kind("a misspelt random kind", "random = \"uniform\"", "random = \"unifrom\"", "\"unifrom\"", "(did you mean `uniform`?)"),
    kind("a misspelt entry", "entry = \"scale_fast\"", "entry = \"scale_fats\"", "\"scale_fats\"", "(did you mean `scale_fast`?)"),
    kind("a misspelt buffer in args", "\"keys\", \"dst\", \"n as i32\"]\n\n[[kernel]]\nname = \"fast\"", "\"kyes\", \"dst\", \"n as i32\"]\n\n[[kernel]]\nname = \"fast\"", "kyes", "(did you mean `keys`?)"),
    kind("a misspelt size", "grid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "grid = [\"ceil(nbin / 256)\"]\nblock = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "nbin /", "(did you mean `nbins`?)"),
    kind("a misspelt type", "type = \"f32\"\nlen = \"n\"\nrole", "type = \"f23\"\nlen = \"n\"\nrole", "\"f23\"", "(did you mean `f32`?)"),
    kind("a C type name", "type = \"f32\"\nlen = \"n\"\nrole", "type = \"float\"\nlen = \"n\"\nrole", "\"float\"", "(did you mean `f32`?)"),
    kind("a misspelt sweep", "sizes = { n = [256, 1024], nbins = [16] }", "sizes = { n = [256, 1024], nbins = [16] }\nsweep = \"zipp\"", "\"zipp\"", "(did you mean `zip`?)"),
    kind("a misspelt spills", "name = \"naive\"", "name = \"naive\"\nspills = \"forbidd\"", "\"forbidd\"", "(did you mean `forbid`?)"),
    kind("a boolean in quotes", "reference = true", "reference = \"yes\"", "\"yes\"", "(write true or false, without quotes)"),
    kind("a number in quotes", "trials = 2", "trials = \"2\"", "\"2\"", "(write a whole number, without quotes)"),
];

/// Kinds written for this test (every one refused at its place).
const MORE: &[Kind] = &[
    kind("unknown key in a buffer", "name = \"dst\"", "nmae = \"dst\"", "nmae", "(did you mean `name`?)"),
    kind("unknown key in a kernel", "reference = true", "refrence = true", "refrence", "(did you mean `reference`?)"),
    kind("unknown key in check", "rtol = 1e-5", "rtoll = 1e-5", "rtoll", "(did you mean `rtol`?)"),
    kind("unknown key in bench", "max_slowdown = \"3%\"", "max_slowdwn = \"3%\"", "max_slowdwn", "(did you mean `max_slowdown`?)"),
    kind("a misspelt role", "role = \"output\"", "role = \"outptu\"", "\"outptu\"", "(did you mean `output`?)"),
    kind("a misspelt fp64", "name = \"naive\"", "name = \"naive\"\nfp64 = \"forbi\"", "\"forbi\"", "unknown fp64 `forbi` (did you mean `forbid`?)"),
    kind("max_slowdown in words", "max_slowdown = \"3%\"", "max_slowdown = \"three\"", "\"three\"", "bad max_slowdown `three`"),
    kind("a negative max_slowdown", "max_slowdown = \"3%\"", "max_slowdown = \"-3%\"", "\"-3%\"", "bad max_slowdown `-3%`"),
    kind("a negative tolerance", "rtol = 1e-5", "rtol = -1e-5", "-1e-5", "tolerances are finite numbers >= 0"),
    kind("a NaN tolerance", "atol = 1e-6", "atol = nan", "nan", "tolerances are finite numbers >= 0"),
    kind("no trials", "trials = 2", "trials = 0", "0", "`trials` must be at least 1"),
    kind("an empty size list", "n = [256, 1024]", "n = []", "[]", "size `n` must be a non-negative integer"),
    kind("a negative size", "n = [256, 1024]", "n = [-256, 1024]", "[-256", "size `n` must be a non-negative integer"),
    kind("a buffer named as a size", "name = \"keys\"", "name = \"nbins\"", "\"nbins\"", "has the name of a size"),
    kind("an empty block", "block = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "block = []\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "[]", "`block` takes 1 to 3 dimensions"),
    kind("a grid of four dimensions", "grid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "grid = [1, 1, 1, 1]\nblock = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "[1, 1", "`grid` takes 1 to 3 dimensions"),
    kind("a block of 2048 threads", "block = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "block = [2048]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "2048", "block[0] is 2048"),
    kind("a zero block dimension", "block = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "block = [256, 0]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]", "0]", "block[1] is 0"),
    kind("a zero length", "len = \"n\"\ninit = { random = \"uniform\"", "len = 0\ninit = { random = \"uniform\"", "0\ninit", "buffer length is 0"),
    kind("a negative length", "len = \"n\"\ninit = { random = \"uniform\"", "len = \"n - 5000\"\ninit = { random = \"uniform\"", "n - 5000", "buffer length is -4744"),
    kind("fractional int bounds", "min = 0, max = \"nbins - 1\"", "min = 0.5, max = 9", "{ random = \"int\"", "random = \"int\" needs whole numbers"),
    kind("a seed in quotes", "trials = 2", "trials = 2\nseed = \"abc\"", "\"abc\"", "expected u64"),
    kind("a suite name with a space", "name = \"kinds\"", "name = \"my kinds\"", "\"my kinds\"", "suite name `my kinds` must be"),
    kind("an empty suite name", "name = \"kinds\"", "name = \"\"", "\"\"", "suite name `` must be"),
    kind("bytes over an unknown size", "max_slowdown = \"3%\"", "max_slowdown = \"3%\"\nbytes = \"3 * 4 * m\"", "m\"", "unknown size `m`"),
    kind("no registers", "name = \"naive\"", "name = \"naive\"\nmax_registers = 0", "0", "max_registers is between 1 and 255"),
    kind("a type as a number", "type = \"f32\"\nlen = \"n\"\nrole", "type = 5\nlen = \"n\"\nrole", "5", "invalid type: integer `5`, expected a string"),
    kind("an include folder that is not there", "source = \"k.cu\"", "source = \"k.cu\"\ninclude_dirs = [\"no_such_dir\"]", "\"no_such_dir\"", "include dir `no_such_dir` not found"),
    kind("a golden file for no buffer", "", "\n[check.golden]\nzz = \"g.npy\"\n", "zz", "no buffer `zz`"),
    kind("a kernel without args", "args = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[[kernel]]", "\n[[kernel]]", "[[kernel]]\nname = \"naive\"", "kernel `naive` needs `args`"),
    kind("a zero precision", "max_slowdown = \"3%\"", "max_slowdown = \"3%\"\nprecision = \"0%\"", "\"0%\"", "bad precision `0%`"),
    kind("too few samples", "min_samples = 10", "min_samples = 0", "0", "`min_samples` must be at least 3"),
    kind("an unknown l2_flush", "max_slowdown = \"3%\"", "max_slowdown = \"3%\"\nl2_flush = \"no\"", "\"no\"", "unknown l2_flush `no` (write \"write\", \"clean\" or false)"),
    kind("a buffer name with a dash", "name = \"dst\"", "name = \"d-st\"", "\"d-st\"", "buffer name `d-st` must be letters"),
    kind("a memory_growth in words", "max_slowdown = \"3%\"", "max_slowdown = \"3%\"\nmemory_growth = \"lots\"", "\"lots\"", "bad memory_growth `lots`"),
    kind("min_time_ms above max_time_ms", "", "min_time_ms = 500\nmax_time_ms = 100\n", "100", "`max_time_ms` must be positive and at least `min_time_ms` (500)"),
    kind("a size passed untyped", "\"dst\", \"n as i32\"]\n\n[[kernel]]\nname = \"fast\"", "\"dst\", \"n\"]\n\n[[kernel]]\nname = \"fast\"", "n\"]\n\n[[kernel]]\nname = \"fast\"", "`n` is a size: give it a type"),
    kind("an output with an init", "role = \"output\"", "role = \"output\"\ninit = { constant = 0.0 }", "{ constant", "takes no `init`"),
    kind("an input without an init", "init = { random = \"uniform\", min = -1.0, max = 1.0 }\n", "", "\"src\"\ntype", "needs an `init`"),
    kind("an unknown kernel source", "name = \"naive\"", "name = \"naive\"\nsource = \"nowhere.cu\"", "\"nowhere.cu\"", "source `nowhere.cu` not found"),
    kind("a memory budget in words", "sizes = {", "memory_budget = \"lots\"\nsizes = {", "\"lots\"", "bad memory_budget `lots`"),
    kind("two references", "name = \"fast\"", "name = \"fast\"\nreference = true", "true\nentry = \"scale_fast\"", "both say `reference = true`"),
    kind("a block over the limit in one case", "block = [256]", "block = [\"n\", 2]", "n\", 2", "a block of 2048 threads for n=1024,nbins=16 is over the limit of 1024"),
    kind("an optimization level in the options", "source = \"k.cu\"", "source = \"k.cu\"\noptions = [\"-O3\"]", "\"-O3\"", "option `-O3`: an optimization level is a host compiler's flag, which NVRTC rejects"),
    kind("a PTX file cut off", "name = \"naive\"", "name = \"naive\"\nsource = \"cut.ptx\"", "\"scale\"", "cut.ptx` is cut off: it opens 1 `{` and closes 0"),
    kind("PTX text named .cubin", "name = \"naive\"", "name = \"naive\"\nsource = \"ptx_as.cubin\"", "\"ptx_as.cubin\"", "source `ptx_as.cubin`: holds PTX text, not a CUBIN: name it `.ptx`"),
    kind("a host ELF named .cubin", "name = \"naive\"", "name = \"naive\"\nsource = \"host.cubin\"", "\"host.cubin\"", "an ELF for the host, not a CUDA ELF"),
    kind("a file that is no ELF named .cubin", "name = \"naive\"", "name = \"naive\"\nsource = \"text.cubin\"", "\"text.cubin\"", "not a CUBIN (no ELF header)"),
    kind("an empty fatbin", "name = \"naive\"", "name = \"naive\"\nsource = \"empty.fatbin\"", "\"empty.fatbin\"", "an empty fatbin: it holds no CUBIN and no PTX"),
    kind("a CUBIN without the entry", "name = \"naive\"", "name = \"naive\"\nsource = \"other.cubin\"", "\"scale\"", "no kernel `scale` in `"),
    kind("buffers no GPU holds", "len = \"n\"\ninit = { random = \"uniform\"", "len = \"n * 1_000_000_000\"\ninit = { random = \"uniform\"", "n * 1_000_000_000\"", "the buffers of a case take 1024000001280 bytes for n=256,nbins=16, more than any GPU holds (288000000000 bytes, a B300's 288 GB): shrink the sizes"),
    kind("a key of a table further down", "role = \"output\"", "output = true", "output", "unknown field `output`, expected one of"),
    kind("a table header written too early", "grid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]\ntrials = 2\nrtol = 1e-5\natol = 1e-6\n\n[bench]\n", "[bench]\ngrid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [\"2.0f32\", \"src\", \"keys\", \"dst\", \"n as i32\"]\n\n[check]\ntrials = 2\nrtol = 1e-5\natol = 1e-6\n\n", "[bench]", "`[bench]` is written before `grid` (line 36), a key of `[[kernel]]`, not of `[bench]`: a key belongs to the nearest header above it, so this header is in the wrong place (move it below that table's keys)"),
    kind("a size value written twice", "n = [256, 1024]", "n = [256, 1024, 256]", "256]", "size `n` has the value 256 twice: its cases would be made twice (remove one)"),
];

/// A fresh suites folder under the target's temporary space holding `text` and the source.
fn folder(name: &str, text: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kinds-{name}"));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("suites");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.cu"), SOURCE).unwrap();
    std::fs::write(root.join("outside.cu"), SOURCE).unwrap();
    // Built kernels that are not what their names say, and a CUBIN of another kernel: a CUDA
    // ELF header as NVRTC 13.0 writes it for sm_90 (ABI 8, flags 0x6005a04), no real code.
    let elf = |osabi: u8, class: u8| {
        let mut h = vec![0u8; 0x40];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = class;
        h[7] = osabi;
        h[8] = 8;
        h[0x30..0x34].copy_from_slice(&0x6005a04u32.to_le_bytes());
        h.extend_from_slice(b".text.other\0");
        h
    };
    std::fs::write(
        dir.join("cut.ptx"),
        ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry scale(\n.param .f32 scale_param_0\n)\n{\nld.param.f32 %f1,",
    )
    .unwrap();
    std::fs::write(
        dir.join("ptx_as.cubin"),
        ".version 9.0\n.target sm_90\n.address_size 64\n",
    )
    .unwrap();
    std::fs::write(dir.join("host.cubin"), elf(0, 2)).unwrap();
    std::fs::write(dir.join("text.cubin"), [b'x'; 100]).unwrap();
    std::fs::write(dir.join("other.cubin"), elf(0x41, 2)).unwrap();
    let mut fatbin = 0xBA55_ED50u32.to_le_bytes().to_vec();
    fatbin.extend_from_slice(&[1, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    std::fs::write(dir.join("empty.fatbin"), fatbin).unwrap();
    std::fs::write(dir.join("kinds.toml"), text).unwrap();
    if text.contains("k80.fatbin") {
        let fatbin = std::fs::read("tests/fixtures/binaries/sm80_only.fatbin").unwrap();
        std::fs::write(dir.join("k80.fatbin"), fatbin).unwrap();
    }
    dir
}

/// The mutated text and where `at` is in it.
fn mutate(k: &Kind) -> (String, usize) {
    let (text, from) = if k.from.is_empty() {
        (format!("{BASE}{}", k.to), BASE.len())
    } else {
        let i = BASE
            .find(k.from)
            .unwrap_or_else(|| panic!("{}: `{}` is not in the base suite", k.name, k.from));
        (BASE.replacen(k.from, k.to, 1), i)
    };
    // From the start of the line the mutation is on: the error may be at its table's start.
    let from = text[..from].rfind('\n').map_or(0, |i| i + 1);
    // Or, for an error at the table the mutation left (a key taken out), its first place.
    let at = text[from..]
        .find(k.at)
        .map(|o| from + o)
        .or_else(|| text.find(k.at))
        .unwrap_or_else(|| panic!("{}: `{}` is not where the mutation went", k.name, k.at));
    (text, at)
}

/// Loads the mutated suite; the problem, or what is wrong with the test.
fn check(k: &Kind) -> Result<(), String> {
    let (text, at) = mutate(k);
    let slug: String = k
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let dir = folder(&slug, &text);
    let found: Vec<Diagnostic> = match load_dir(&dir) {
        Ok(_) => return Err(format!("{}: loaded, but must fail", k.name)),
        Err(e) => e.diagnostics,
    };
    let (line, col) = line_col(&text, at);
    let hit = found
        .iter()
        .any(|d| d.line == line && d.col == col && d.message.contains(k.says));
    if hit {
        Ok(())
    } else {
        Err(format!(
            "{}: wanted `{}` at {line}:{col}; got:\n{}",
            k.name,
            k.says,
            found
                .iter()
                .map(|d| format!("  {}:{}: {}", d.line, d.col, d.message))
                .collect::<Vec<_>>()
                .join("\n")
        ))
    }
}

#[test]
fn the_base_suite_loads() {
    let dir = folder("base", BASE);
    load_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_malformed_kind_is_refused_at_its_place() {
    let mut wrong = Vec::new();
    for k in RULES.iter().chain(MORE) {
        if let Err(e) = check(k) {
            wrong.push(e);
        }
    }
    println!(
        "malformed kinds: {} for issue 20's rules, {} more, {} refused at their place",
        RULES.len(),
        MORE.len(),
        RULES.len() + MORE.len() - wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "{} kind(s) wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(MORE.len() >= 30);
}

#[test]
fn a_name_written_twice_is_named_at_both_places() {
    for (from, to, first, second) in [
        ("", "\n[check]\ntrials = 3\n", (39, 2), (49, 2)),
        ("trials = 2\n", "trials = 2\ntrials = 3\n", (40, 1), (41, 1)),
        ("name = \"dst\"", "name = \"src\"", (7, 8), (19, 8)),
    ] {
        let k = kind("twice", from, to, "", "");
        let (text, _) = mutate(&k);
        let e = load_dir(&folder("twice", &text)).unwrap_err();
        let places: Vec<(usize, usize)> = e.diagnostics.iter().map(|d| (d.line, d.col)).collect();
        assert!(places.contains(&first) && places.contains(&second), "{e}");
    }
}

#[cfg(unix)]
#[test]
fn a_suite_file_link_that_loops_is_an_error() {
    use std::os::unix::fs::symlink;
    let dir = folder("link-loop", BASE);
    symlink(dir.join("b.toml"), dir.join("a.toml")).unwrap();
    symlink(dir.join("a.toml"), dir.join("b.toml")).unwrap();
    let e = load_dir(&dir).unwrap_err();
    assert!(
        e.diagnostics
            .iter()
            .any(|d| d.message.contains("loop of links")),
        "{e}"
    );
    assert!(Path::new(&dir).join("kinds.toml").exists());
}

/// A quoted `#include` that no searched folder holds: an error at its line in the source, as
/// the compiler would give it, without one; one inside `#if` is left to the compiler.
#[test]
fn a_missing_include_is_named_at_its_line() {
    let dir = folder("missing_include", BASE);
    let source = format!("#include \"here.h\"\n#ifdef OTHER\n#include \"other.h\"\n#endif\n#include \"nothere.h\"\n{SOURCE}");
    std::fs::write(dir.join("k.cu"), source).unwrap();
    std::fs::write(dir.join("here.h"), "").unwrap();
    let e = load_dir(&dir).unwrap_err();
    let found: Vec<String> = e.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &e.diagnostics[0];
    assert!(
        d.file.ends_with("k.cu") && (d.line, d.col) == (5, 10),
        "{d}"
    );
    assert!(d.message.starts_with("`nothere.h` is not in `"), "{d}");
}

/// A standard header written in quotes (llm.c's `#include "assert.h"`): host code, so nvcc
/// compiles the source, and nvcc goes on to the host compiler's folders and finds it, as it
/// would `<assert.h>` — not a missing include.
#[test]
fn a_standard_header_in_quotes_is_found_where_nvcc_compiles() {
    let dir = folder("quoted_standard", BASE);
    std::fs::write(dir.join("k.cu"), format!("#include \"assert.h\"\n{SOURCE}")).unwrap();
    let suites = load_dir(&dir).unwrap();
    let nvcc = suites[0].sources[0].nvcc.as_deref().unwrap_or_default();
    assert!(nvcc.contains("assert.h"), "{nvcc}");
}

/// `kernelgate lint` in a folder holding `kinds.toml` as `text` (target sm_90): its exit code
/// and standard error.
fn lint(name: &str, text: &str) -> (Option<i32>, String) {
    let dir = folder(name, text);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .arg("lint")
        .current_dir(dir.parent().unwrap())
        .env("KERNELGATE_SUITES", &dir)
        .env("KERNELGATE_ARCH", "sm_90")
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn binaries_another_architecture_cannot_load_are_refused_at_their_source_by_lint() {
    // A CUBIN's architecture is in its ELF header: sm_80's (ABI 8: flags 0x6005004).
    let mut cubin = vec![0u8; 0x40];
    cubin[..4].copy_from_slice(b"\x7fELF");
    (cubin[4], cubin[7], cubin[8]) = (2, 0x41, 8);
    cubin[0x30..0x34].copy_from_slice(&0x600_5004u32.to_le_bytes());
    cubin.extend_from_slice(b".text.scale\0");
    let text = BASE.replacen(
        "name = \"naive\"",
        "name = \"naive\"\nsource = \"k80.cubin\"",
        1,
    );
    let dir = folder("arch_cubin", &text);
    std::fs::write(dir.join("k80.cubin"), &cubin).unwrap();
    // Loaded for a run, the GPU decides (its architecture is not known yet); lint knows it.
    assert!(load_dir(&dir).is_ok());
    let e = kernelgate::suite::load_dir_for(&dir, "sm_90").unwrap_err();
    let d = &e.diagnostics[0];
    assert_eq!((d.line, d.col), (26, 10), "{d}");
    assert_eq!(d.message, "source `k80.cubin`: the CUBIN is built for sm_80, which the target sm_90 (KERNELGATE_ARCH) cannot run: a CUBIN runs only on its own major architecture at the same or a later minor (rebuild with -arch=sm_90, or ship PTX or a fatbin)");
    assert!(
        kernelgate::suite::load_dir_for(&dir, "sm_86").is_ok(),
        "sm_86 runs sm_80 code"
    );

    // A fatbin of an sm_80 cubin and no PTX (built by nvcc: tests/fixtures/binaries).
    let fatbin = std::fs::read("tests/fixtures/binaries/sm80_only.fatbin").unwrap();
    let text = BASE.replacen(
        "name = \"naive\"",
        "name = \"naive\"\nsource = \"k80.fatbin\"",
        1,
    );
    assert!(!fatbin.is_empty());
    let (code, err) = lint("arch_fatbin", &text);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("kinds.toml:26:10: source `k80.fatbin`: the fatbin holds no cubin or PTX that sm_90 can load (it holds sm_80 cubin)"), "{err}");
    // For sm_86 it loads; a kernel it does not hold is named at its `entry` value.
    let missing = text.replacen("entry = \"scale\"", "entry = \"scales\"", 1);
    let dir = folder("arch_fatbin_entry", &missing);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .arg("lint")
        .current_dir(dir.parent().unwrap())
        .env("KERNELGATE_SUITES", &dir)
        .env("KERNELGATE_ARCH", "sm_86")
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("kinds.toml:27:9: no kernel `scales` in `k80.fatbin` for sm_86 (its kernels there: scale, scale_fast)"), "{err}");
}

/// A launch the compiled code cannot run on the target is refused by lint at the value that
/// breaks the limit, with the case that breaks it: a block over the kernel's `__launch_bounds__`
/// (at `block`), and static plus dynamic shared memory over what a block of the target may opt
/// into (at `shared`: 163 KB on sm_80, where sm_90 takes 227 KB). `#[ignore]`d: it needs NVRTC;
/// CI runs it.
#[test]
#[ignore = "needs NVRTC: the compiled code's resources"]
fn launches_the_compiled_code_cannot_run_are_refused_by_lint() {
    let source = r#"
extern "C" __global__ void __launch_bounds__(256) scale(float a, const float* src,
        const unsigned char* keys, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = a * src[i] + keys[i];
}
extern "C" __global__ void scale_fast(float a, const float* src, const unsigned char* keys,
                                      float* dst, int n) {
    extern __shared__ float staged[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    staged[threadIdx.x] = i < n ? src[i] : 0.0f;
    __syncthreads();
    if (i < n) dst[i] = a * staged[threadIdx.x] + keys[i];
}
"#;
    let text = BASE.replacen("block = [256]", "block = [512]", 1).replacen(
        "block = [256]\n",
        "block = [256]\nshared = \"200_000\"\n",
        1,
    );
    let run = |arch: &str| {
        let dir = folder(&format!("limits_{arch}"), &text);
        std::fs::write(dir.join("k.cu"), source).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_kernelgate"))
            .arg("lint")
            .current_dir(dir.parent().unwrap())
            .env("KERNELGATE_SUITES", &dir)
            .env("KERNELGATE_ARCH", arch)
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = run("sm_80");
    assert_eq!(code, Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].ends_with("kinds.toml:29:10: kernel `naive` launches `scale` with a block of 512 threads, over its __launch_bounds__ of 256, for n=256,nbins=16 and 1 more case(s): the launch would fail on sm_80"), "{err}");
    assert!(lines[1].contains("kinds.toml:37:11: kernel `fast` launches `scale_fast` with 0 B static + 200000 B dynamic shared memory = 200000 B, over the 166912 B a block of sm_80 may opt into, for n=256,nbins=16 and 1 more case(s)"), "{err}");
    // On sm_90 the shared memory fits (227 KB); the launch bounds do not.
    let (code, err) = run("sm_90");
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error: ")).count(),
        1,
        "{err}"
    );
}
