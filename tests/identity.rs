//! The trial identity, key by key of the suite schema, from the outside: every key a suite
//! file accepts — found by asking the loader (an unknown key's error lists the table's keys),
//! not by reading the identity's own serialization — is changed in a suite file, and the
//! identity of the trial it belongs to must change, or the key is exempt here with its reason.
//! A key added to the schema without a change or an exemption below fails this test. Keys
//! whose effect is only on the compiled code are checked against NVRTC's real code identities
//! (`#[ignore]`d: it needs NVRTC; CI runs it).

use kernelgate::code::{file_digest, trial_code, SuiteCode};
use kernelgate::dtype::{DType, HostData};
use kernelgate::sass::{CodeSource, KernelCode, KernelIdentity, Toolchain};
use kernelgate::suite::Suite;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const CU: &str = r#"#include "helper.h"
#ifdef EXTRA
#undef HELPER
#define HELPER 3.0f
#endif
extern "C" __global__ void k(float a, const float* x, const float* w, void* c, const float* i, const float* s, float* y, float* y2, void* tmp, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) { ((float*)tmp)[t] = x[t]; y[t] = a * ((float*)tmp)[t] + w[t % 4] * 0.0f + ((const float*)c)[t] * 0.0f + i[t] * 0.0f + s[t] * 0.0f + HELPER; y2[t] = 2.0f * y[t]; }
}
extern "C" __global__ void k2(float a, const float* x, const float* w, void* c, const float* i, const float* s, float* y, float* y2, void* tmp, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) { ((float*)tmp)[t] = x[t]; y[t] = a * ((float*)tmp)[t] + w[t % 4] * 0.0f + ((const float*)c)[t] * 0.0f + i[t] * 0.0f + s[t] * 0.0f + HELPER; y2[t] = 2.0f * y[t]; }
}
extern "C" __global__ void k3(float a, const float* x, const float* w, void* c, const float* i, const float* s, float* y, float* y2, void* tmp, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) { ((float*)tmp)[t] = x[t]; y[t] = a * ((float*)tmp)[t] - w[t % 4] * 0.0f + ((const float*)c)[t] * 0.0f + i[t] * 0.0f + s[t] * 0.0f + HELPER; y2[t] = 2.0f * y[t]; }
}
"#;

/// A suite using every key of the schema (`golden` in [`golden`]).
const BASE: &str = r#"[suite]
name = "t"
source = "k.cu"
include_dirs = ["inc"]
options = ["-DUNUSED=1"]
compiler = "nvrtc"
sizes = { n = [4096, 8192] }
sweep = "product"
memory_budget = "1 GiB"
max_registers = 128
spills = "allow"
fp64 = "allow"

[[buffer]]
name = "x"
type = "f32"
len = "n"
role = "input"
init = { random = "uniform", min = -1.0, max = 1.0, sorted = false }

[[buffer]]
name = "w"
type = "f32"
len = "4"
init = { random = "normal", mean = 0.0, std = 1.0, outliers = 0.01, scale = 100.0 }

[[buffer]]
name = "c"
type = "f32"
len = "n"
init = { constant = 2.0 }

[[buffer]]
name = "i"
type = "f32"
len = "n"
init = { iota = 0.0, step = 1.0 }

[[buffer]]
name = "s"
type = "f32"
len = "n"
init = { random = "special", nan = false }

[[buffer]]
name = "y"
type = "f32"
len = "n"
role = "output"

[[buffer]]
name = "y2"
type = "f32"
len = "n"
role = "output"

[[kernel]]
name = "naive"
entry = "k"
reference = true
grid = ["ceil(n / 256)"]
block = [256]
shared = 0
args = ["2.0f32", "x", "w", "c", "i", "s", "y", "y2", "tmp", "n as i32"]
scratch = [{ name = "tmp", type = "f32", len = "n" }]

[[kernel]]
name = "fast"
source = "k.cu"
memory_budget = "1 GiB"
max_registers = 128
spills = "allow"
fp64 = "allow"

[[kernel.launch]]
entry = "k2"
grid = ["ceil(n / 256)"]
block = [256]
shared = 0
args = ["2.0f32", "x", "w", "c", "i", "s", "y", "y2", "tmp", "n as i32"]

[[kernel.scratch]]
name = "tmp"
type = "f32"
len = "n"

[check]
trials = 2
seed = 7
rtol = 1e-6
atol = 1e-6
allow_nan = false
output = { y = { rtol = 1e-5, atol = 1e-5, allow_nan = false } }

[bench]
bytes = "8 * n"
flops = "2 * n"
l2_flush = true
min_samples = 10
max_samples = 2000
min_time_ms = 5
max_time_ms = 1000
precision = "1%"
max_slowdown = "3%"
memory_growth = "0%"
max_instruction_growth = "1%"
max_dram_read_growth = "5%"
"#;

/// Each key (`table.key`) with an edit of [`BASE`] that changes it (the first `from` → `to`;
/// `@golden` edits apply to [`golden`]'s suite, `@all` ones replace every `from`).
const CHANGES: &[(&str, &str, &str)] = &[
    ("suite.source", "source = \"k.cu\"\ninclude", "source = \"k_other.cu\"\ninclude"),
    ("suite.sizes", "n = [4096, 8192]", "n = [4000, 8192]"),
    ("suite.memory_budget", "memory_budget = \"1 GiB\"\nmax_registers = 128\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[buffer]]", "memory_budget = \"2 GiB\"\nmax_registers = 128\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[buffer]]"),
    ("suite.max_registers", "max_registers = 128\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[buffer]]", "max_registers = 64\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[buffer]]"),
    ("suite.spills", "spills = \"allow\"\nfp64 = \"allow\"\n\n[[buffer]]", "spills = \"forbid\"\nfp64 = \"allow\"\n\n[[buffer]]"),
    ("suite.fp64", "fp64 = \"allow\"\n\n[[buffer]]", "fp64 = \"forbid\"\n\n[[buffer]]"),
    ("buffer.name", "@all \"c\"", "\"c2\""),
    ("buffer.type", "name = \"c\"\ntype = \"f32\"", "name = \"c\"\ntype = \"f64\""),
    ("buffer.len", "len = \"4\"", "len = \"8\""),
    ("buffer.role", "name = \"c\"\ntype = \"f32\"", "name = \"c\"\ntype = \"f32\"\nrole = \"inout\""),
    ("buffer.init.random", "random = \"uniform\", min = -1.0, max = 1.0", "random = \"normal\", mean = -1.0, std = 1.0"),
    ("buffer.init.min", "min = -1.0", "min = -2.0"),
    ("buffer.init.max", "max = 1.0", "max = 2.0"),
    ("buffer.init.sorted", "sorted = false", "sorted = true"),
    ("buffer.init.mean", "mean = 0.0", "mean = 0.5"),
    ("buffer.init.std", "std = 1.0, outliers", "std = 2.0, outliers"),
    ("buffer.init.outliers", "outliers = 0.01", "outliers = 0.02"),
    ("buffer.init.scale", "scale = 100.0", "scale = 1000.0"),
    ("buffer.init.constant", "constant = 2.0", "constant = 3.0"),
    ("buffer.init.iota", "iota = 0.0", "iota = 1.0"),
    ("buffer.init.step", "step = 1.0", "step = 2.0"),
    ("buffer.init.nan", "nan = false", "nan = true"),
    ("buffer.init.npy", "@golden x.npy", "x2.npy"),
    ("kernel.source", "name = \"fast\"\nsource = \"k.cu\"", "name = \"fast\"\nsource = \"k_other.cu\""),
    ("kernel.reference", "reference = true\ngrid = [\"ceil(n / 256)\"]\nblock = [256]\nshared = 0\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch = [{ name = \"tmp\", type = \"f32\", len = \"n\" }]\n\n[[kernel]]\nname = \"fast\"\n", "grid = [\"ceil(n / 256)\"]\nblock = [256]\nshared = 0\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch = [{ name = \"tmp\", type = \"f32\", len = \"n\" }]\n\n[[kernel]]\nname = \"fast\"\nreference = true\n"),
    ("kernel.entry", "entry = \"k\"\nreference", "entry = \"k3\"\nreference"),
    ("kernel.grid", "grid = [\"ceil(n / 256)\"]\nblock = [256]\nshared = 0\nargs", "grid = [\"ceil(n / 128)\"]\nblock = [256]\nshared = 0\nargs"),
    ("kernel.block", "block = [256]\nshared = 0\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch", "block = [128]\nshared = 0\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch"),
    ("kernel.shared", "shared = 0\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch", "shared = 1024\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch"),
    ("kernel.args", "args = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch", "args = [\"3.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\nscratch"),
    ("kernel.scratch", "scratch = [{ name = \"tmp\", type = \"f32\", len = \"n\" }]", "scratch = [{ name = \"tmp\", type = \"f32\", len = \"2 * n\" }]"),
    ("kernel.memory_budget", "memory_budget = \"1 GiB\"\nmax_registers = 128\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[kernel.launch]]", "memory_budget = \"3 GiB\"\nmax_registers = 128\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[kernel.launch]]"),
    ("kernel.max_registers", "max_registers = 128\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[kernel.launch]]", "max_registers = 32\nspills = \"allow\"\nfp64 = \"allow\"\n\n[[kernel.launch]]"),
    ("kernel.spills", "spills = \"allow\"\nfp64 = \"allow\"\n\n[[kernel.launch]]", "spills = \"forbid\"\nfp64 = \"allow\"\n\n[[kernel.launch]]"),
    ("kernel.fp64", "fp64 = \"allow\"\n\n[[kernel.launch]]", "fp64 = \"forbid\"\n\n[[kernel.launch]]"),
    ("kernel.launch.entry", "entry = \"k2\"", "entry = \"k3\""),
    ("kernel.launch.grid", "entry = \"k2\"\ngrid = [\"ceil(n / 256)\"]", "entry = \"k2\"\ngrid = [\"ceil(n / 64)\"]"),
    ("kernel.launch.block", "entry = \"k2\"\ngrid = [\"ceil(n / 256)\"]\nblock = [256]", "entry = \"k2\"\ngrid = [\"ceil(n / 256)\"]\nblock = [64]"),
    ("kernel.launch.shared", "block = [256]\nshared = 0\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\n\n[[kernel.scratch]]", "block = [256]\nshared = 64\nargs = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\n\n[[kernel.scratch]]"),
    ("kernel.launch.args", "args = [\"2.0f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\n\n[[kernel.scratch]]", "args = [\"2.5f32\", \"x\", \"w\", \"c\", \"i\", \"s\", \"y\", \"y2\", \"tmp\", \"n as i32\"]\n\n[[kernel.scratch]]"),
    ("kernel.scratch.name", "\"tmp\", \"n as i32\"]\n\n[[kernel.scratch]]\nname = \"tmp\"", "\"tmp2\", \"n as i32\"]\n\n[[kernel.scratch]]\nname = \"tmp2\""),
    ("kernel.scratch.type", "name = \"tmp\"\ntype = \"f32\"\nlen = \"n\"\n\n[check]", "name = \"tmp\"\ntype = \"f64\"\nlen = \"n\"\n\n[check]"),
    ("kernel.scratch.len", "len = \"n\"\n\n[check]", "len = \"3 * n\"\n\n[check]"),
    ("check.trials", "trials = 2", "trials = 3"),
    ("check.seed", "seed = 7", "seed = 8"),
    ("check.rtol", "rtol = 1e-6", "rtol = 1e-4"),
    ("check.atol", "atol = 1e-6", "atol = 1e-4"),
    ("check.allow_nan", "allow_nan = false\noutput", "allow_nan = true\noutput"),
    ("check.output.rtol", "y = { rtol = 1e-5", "y = { rtol = 1e-3"),
    ("check.output.atol", "atol = 1e-5", "atol = 1e-3"),
    ("check.output.allow_nan", "allow_nan = false }", "allow_nan = true }"),
    ("check.golden", "@golden golden.npy", "golden2.npy"),
    ("bench.bytes", "bytes = \"8 * n\"", "bytes = \"12 * n\""),
    ("bench.flops", "flops = \"2 * n\"", "flops = \"3 * n\""),
    ("bench.l2_flush", "l2_flush = true", "l2_flush = false"),
    ("bench.min_samples", "min_samples = 10", "min_samples = 20"),
    ("bench.max_samples", "max_samples = 2000", "max_samples = 3000"),
    ("bench.min_time_ms", "min_time_ms = 5", "min_time_ms = 10"),
    ("bench.max_time_ms", "max_time_ms = 1000", "max_time_ms = 2000"),
    ("bench.precision", "precision = \"1%\"", "precision = \"0.5%\""),
    ("bench.max_slowdown", "max_slowdown = \"3%\"", "max_slowdown = \"2%\""),
    ("bench.memory_growth", "memory_growth = \"0%\"", "memory_growth = \"1%\""),
    ("bench.max_instruction_growth", "max_instruction_growth = \"1%\"", "max_instruction_growth = \"2%\""),
    ("bench.max_dram_read_growth", "max_dram_read_growth = \"5%\"", "max_dram_read_growth = \"6%\""),
    ("bench.flops_type", "flops = \"2 * n\"", "flops = \"2 * n\"\nflops_type = \"fp64\""),
];

/// Keys whose change need not change the identity, with why.
const EXEMPT: &[(&str, &str)] = &[
    ("suite", "a table: its keys are checked one by one"),
    ("buffer", "a table: its keys are checked one by one"),
    ("kernel", "a table: its keys are checked one by one"),
    ("check", "a table: its keys are checked one by one"),
    ("bench", "a table: its keys are checked one by one"),
    ("buffer.init", "a table: its keys are checked one by one"),
    ("kernel.launch", "a table: its keys are checked one by one"),
    ("check.output", "a table: its keys are checked one by one"),
    ("suite.name", "a name: renaming a suite runs nothing else"),
    ("kernel.name", "a name: renaming a kernel runs nothing else"),
    ("suite.sweep", "which size combinations exist: each trial's own sizes enter"),
    ("suite.compiler", "what runs is the compiled code, whose identity enters: two compilers making the same code run the same trial"),
    ("suite.include_dirs", "compiled: checked against NVRTC's code (needs_nvrtc test below)"),
    ("suite.options", "compiled: checked against NVRTC's code (needs_nvrtc test below)"),
    ("kernel.axes", "makes variants, each a trial of its own named by its values: what a value changes enters through the variant's launches (expressions) and code identity (template arguments, defines)"),
    ("kernel.defines", "compiled: a variant's -D options, in its code identity as `suite.options` are"),
    ("kernel.skip", "which variants exist: each variant's own values enter"),
    ("kernel.gemm", "a library call's options: in its code identity (the test of library calls below)"),
];

/// The code-only keys, checked with NVRTC's real code identities.
const CODE: &[(&str, &str, &str)] = &[
    (
        "suite.include_dirs",
        "include_dirs = [\"inc\"]",
        "include_dirs = [\"inc2\"]",
    ),
    (
        "suite.options",
        "options = [\"-DUNUSED=1\"]",
        "options = [\"-DEXTRA=1\"]",
    ),
    (
        "suite.source",
        "source = \"k.cu\"\ninclude",
        "source = \"k_other.cu\"\ninclude",
    ),
    ("kernel.launch.entry", "entry = \"k2\"", "entry = \"k3\""),
];

/// The tables of [`BASE`] with where a key can be put in each.
const TABLES: &[(&str, &str, &str)] = &[
    ("", "[suite]\n", "zz = 1\n[suite]\n"),
    ("suite", "[suite]\n", "[suite]\nzz = 1\n"),
    (
        "buffer",
        "[[buffer]]\nname = \"x\"",
        "[[buffer]]\nzz = 1\nname = \"x\"",
    ),
    (
        "buffer.init",
        "init = { random = \"uniform\"",
        "init = { zz = 1, random = \"uniform\"",
    ),
    (
        "kernel",
        "[[kernel]]\nname = \"naive\"",
        "[[kernel]]\nzz = 1\nname = \"naive\"",
    ),
    (
        "kernel.launch",
        "[[kernel.launch]]\n",
        "[[kernel.launch]]\nzz = 1\n",
    ),
    (
        "kernel.scratch",
        "[[kernel.scratch]]\n",
        "[[kernel.scratch]]\nzz = 1\n",
    ),
    ("check", "[check]\n", "[check]\nzz = 1\n"),
    ("check.output", "y = { rtol", "y = { zz = 1, rtol"),
    ("bench", "[bench]\n", "[bench]\nzz = 1\n"),
];

fn npy(path: &Path, value: f64, n: usize) {
    let data = HostData::from_f64(DType::F32, std::iter::repeat_n(value, n));
    std::fs::write(path, kernelgate::npy::to_bytes(&data, &[n]).unwrap()).unwrap();
}

/// A scratch folder with the sources, the include folders and the `.npy` files.
fn folder(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("identity")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["inc", "inc2"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    std::fs::write(dir.join("k.cu"), CU).unwrap();
    std::fs::write(
        dir.join("k_other.cu"),
        CU.replace("a * ((float*)tmp)[t]", "a * ((float*)tmp)[t] + 1.0f"),
    )
    .unwrap();
    std::fs::write(dir.join("inc/helper.h"), "#define HELPER 0.0f\n").unwrap();
    std::fs::write(dir.join("inc2/helper.h"), "#define HELPER 1.0f\n").unwrap();
    for (file, value, n) in [
        ("x.npy", 0.25, 4096),
        ("x2.npy", 0.5, 4096),
        ("golden.npy", 0.5, 4096),
        ("golden2.npy", 0.75, 4096),
    ] {
        npy(&dir.join(file), value, n);
    }
    dir
}

/// [`BASE`] with fixed inputs (`x` from `x.npy`, one size) and a golden output for `y`.
fn golden() -> String {
    BASE.replace("n = [4096, 8192]", "n = [4096]")
        .replace(
            "random = \"uniform\", min = -1.0, max = 1.0, sorted = false",
            "npy = \"x.npy\"",
        )
        .replace(
            "random = \"normal\", mean = 0.0, std = 1.0, outliers = 0.01, scale = 100.0",
            "constant = 1.0",
        )
        .replace("random = \"special\", nan = false", "constant = 4.0")
        .replace("output = {", "golden = { y = \"golden.npy\" }\noutput = {")
}

fn load(dir: &Path, text: &str) -> Suite {
    kernelgate::suite::load_text(&dir.join("t.toml"), text).unwrap_or_else(|d| {
        panic!(
            "{:?}\n{text}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        )
    })
}

/// The suite's code with identities made up from each entry's name and its source's text.
fn made_up(suite: &Suite) -> SuiteCode {
    let kernels = suite
        .kernels
        .iter()
        .map(|k| KernelCode {
            kernel: k.name.clone(),
            entries: k
                .entries
                .iter()
                .map(|e| {
                    let text = &suite.sources[k.source].text;
                    let hash = Sha256::digest(format!("{e}\n{text}").as_bytes());
                    KernelIdentity {
                        hash: hash.iter().map(|b| format!("{b:02x}")).collect(),
                        arch: "sm_90".into(),
                        name: e.clone(),
                        from: CodeSource::Cubin,
                        parts: None,
                        resources: None,
                    }
                })
                .collect(),
        })
        .collect();
    let dir = suite.path.parent().unwrap().to_path_buf();
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| Some((p.clone(), file_digest(&p)?)))
        .collect();
    SuiteCode {
        arch: "sm_90".into(),
        toolchain: toolchain(),
        kernels,
        files,
        compiled: Vec::new(),
        identify_seconds: 0.0,
    }
}

fn toolchain() -> Toolchain {
    Toolchain {
        nvrtc: Some("13.0".into()),
        driver: None,
        kernelgate: "test".into(),
    }
}

/// The identity of `fast` on the first case of `text`'s suite.
fn identity(
    dir: &Path,
    text: &str,
    seed: Option<u64>,
    code: &dyn Fn(&Suite) -> SuiteCode,
) -> String {
    let s = load(dir, text);
    let k = s.kernels.iter().position(|k| k.name == "fast").unwrap();
    trial_code(&s, 0, k, seed, &code(&s)).identity
}

/// Every key of the schema, as `table.key`, from the loader's own errors.
fn schema_keys() -> BTreeSet<String> {
    let dir = folder("schema");
    let mut keys = BTreeSet::new();
    for (table, from, to) in TABLES {
        assert!(
            BASE.contains(from),
            "{table}: `{from}` is not in the base suite"
        );
        let text = BASE.replacen(from, to, 1);
        let errors = kernelgate::suite::load_text(&dir.join("t.toml"), &text).unwrap_err();
        let message = errors
            .iter()
            .map(|d| d.message.as_str())
            .find(|m| m.contains("unknown field `zz`"))
            .unwrap_or_else(|| panic!("{table}: no unknown-key error: {errors:?}"));
        let listed = message.split("expected").nth(1).unwrap_or("");
        for key in listed.split('`').skip(1).step_by(2) {
            keys.insert(if table.is_empty() {
                key.to_string()
            } else {
                format!("{table}.{key}")
            });
        }
    }
    keys
}

#[test]
fn every_key_of_the_schema_changes_the_identity_or_is_exempt_with_a_reason() {
    let keys = schema_keys();
    assert!(keys.len() > 60, "{keys:?}");
    let covered: BTreeSet<String> = CHANGES
        .iter()
        .map(|c| c.0)
        .chain(EXEMPT.iter().map(|e| e.0))
        .map(String::from)
        .collect();
    let missing: Vec<&String> = keys.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "suite keys with neither a change below nor an exemption with its reason: {missing:?}"
    );
    let dir = folder("changes");
    let gold = golden();
    let (base, base_gold) = (
        identity(&dir, BASE, None, &made_up),
        identity(&dir, &gold, None, &made_up),
    );
    let mut same = Vec::new();
    for (key, from, to) in CHANGES {
        let plain = BASE.to_string();
        let (text, was, from) = match from.strip_prefix("@golden ") {
            Some(from) => (&gold, &base_gold, from),
            None => (&plain, &base, *from),
        };
        let (from, all) = match from.strip_prefix("@all ") {
            Some(from) => (from, true),
            None => (from, false),
        };
        assert!(text.contains(from), "{key}: `{from}` is not in its suite");
        let changed = match all {
            true => text.replace(from, to),
            false => text.replacen(from, to, 1),
        };
        if identity(&dir, &changed, None, &made_up) == *was {
            same.push(*key);
        }
    }
    assert!(
        same.is_empty(),
        "changed without changing the trial identity: {same:?}"
    );
    // The run variable that changes a trial: KERNELGATE_SEED.
    assert_ne!(
        identity(&dir, BASE, Some(99), &made_up),
        base,
        "KERNELGATE_SEED"
    );
    assert_eq!(
        identity(&dir, BASE, Some(7), &made_up),
        base,
        "the suite's own seed, set again"
    );
    // A name is only a name.
    assert_eq!(
        identity(
            &dir,
            &BASE.replace("name = \"t\"", "name = \"renamed\""),
            None,
            &made_up
        ),
        base
    );
}

#[test]
#[ignore = "needs NVRTC: the compiled code's real identities"]
fn code_only_keys_change_the_identity_through_nvrtcs_code() {
    let dir = folder("code");
    let real = |s: &Suite| {
        SuiteCode::build(s, "sm_90", None, &toolchain()).unwrap_or_else(|e| panic!("{e}"))
    };
    let base = identity(&dir, BASE, None, &real);
    for (key, from, to) in CODE {
        assert!(BASE.contains(from), "{key}");
        let changed = identity(&dir, &BASE.replacen(from, to, 1), None, &real);
        assert_ne!(
            changed, base,
            "{key}: changed without changing the trial identity"
        );
    }
    // An option that does not change the code leaves the identity alone: what runs is the same.
    let same = identity(&dir, &BASE.replace("-DUNUSED=1", "-DUNUSED=2"), None, &real);
    assert_eq!(same, base, "an option the code does not read");
}

/// A suite of two cuBLASLt calls: `fast`'s options are varied below.
const LIBRARY: &str = r#"[suite]
name = "t"
sizes = { n = [64] }

[[buffer]]
name = "a"
type = "f32"
len = "n * n"
init = { random = "uniform", min = -1.0, max = 1.0 }

[[buffer]]
name = "c"
type = "f32"
len = "n * n"
role = "inout"
init = { constant = 0.0 }

[[kernel]]
name = "cublas"
entry = "cublasLt::gemm"
reference = true
args = ["a", "a", "c", "n as i32", "n as i32", "n as i32"]

[[kernel]]
name = "fast"
entry = "cublasLt::gemm"
args = ["a", "a", "c", "n as i32", "n as i32", "n as i32"]
gemm = { layout = "row", math = "default", alpha = 1.0, beta = 0.0, workspace = "32 MiB" }
"#;

#[test]
fn each_option_of_a_library_call_changes_its_identity() {
    let dir = folder("library");
    // The real code identity: a library call's needs no compiler (nor the library: without
    // it, its version reads "none" on both sides).
    let real = |s: &Suite| {
        SuiteCode::build(s, "sm_90", None, &toolchain()).unwrap_or_else(|e| panic!("{e}"))
    };
    let base = identity(&dir, LIBRARY, None, &real);
    for (from, to) in [
        ("layout = \"row\"", "layout = \"col\""),
        ("layout = \"row\"", "layout = [\"row\", \"col\", \"row\"]"),
        ("math = \"default\"", "math = \"tf32\""),
        ("alpha = 1.0", "alpha = 2.0"),
        ("beta = 0.0", "beta = 1.0"),
        ("workspace = \"32 MiB\"", "workspace = \"1 MiB\""),
    ] {
        let text = LIBRARY.replacen(from, to, 1);
        assert_ne!(text, LIBRARY, "{from}");
        let changed = identity(&dir, &text, None, &real);
        assert_ne!(changed, base, "{from} -> {to}: the identity did not change");
    }
    // Options written as their defaults are the same call.
    let defaults = LIBRARY.replace(
        "\ngemm = { layout = \"row\", math = \"default\", alpha = 1.0, beta = 0.0, workspace = \"32 MiB\" }",
        "",
    );
    assert_ne!(defaults, LIBRARY);
    assert_eq!(identity(&dir, &defaults, None, &real), base);
}
