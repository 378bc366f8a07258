//! A team's repository, as `kernelgate init` and the project file meet it: kernels where the
//! repository keeps them (device-only and mixed host/device files), the project file found from
//! a subfolder, sources outside the project's folders refused at their place, other tools'
//! `.toml` files not read as suites, `init` writing a suite that lints and never overwriting.

#[path = "common/repo.rs"]
mod repo;

use repo::{kernelgate, text};
use std::process::Command;

const DEVICE: &str = "__global__ void scale(float *x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= 2.0f;\n}\n";

const MIXED: &str = "#include <cstdio>\n#include <cuda_runtime.h>\n#include \"helpers.h\"\n\ntemplate <typename T>\n__global__ void add(const T *a, const T *b, T *c, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) c[i] = a[i] + b[i] + HELPER_ZERO;\n}\n\nint main() {\n  float *d;\n  cudaMalloc(&d, 4);\n  add<float><<<1, 1>>>(d, d, d, 1);\n  printf(\"done\\n\");\n  return 0;\n}\n";

/// A repository with kernels in `src/cuda` (one device-only, one with host code and a header in
/// `include/`), a `Cargo.toml` and a project file naming `perf/suites`.
fn repository(name: &str) -> std::path::PathBuf {
    let dir = repo::scratch("project", name);
    for (path, text) in [
        ("src/cuda/scale.cu", DEVICE),
        ("src/cuda/add.cu", MIXED),
        ("include/helpers.h", "#define HELPER_ZERO 0\n"),
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        (
            "kernelgate.toml",
            "suites = \"perf/suites\"\nbaselines = \"perf/baselines\"\nsources = [\"src/cuda\", \"include\"]\n[defaults]\ntimeout = 30\n",
        ),
    ] {
        std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
        std::fs::write(dir.join(path), text).unwrap();
    }
    std::fs::create_dir_all(dir.join("perf/suites")).unwrap();
    dir
}

const SUITE: &str = "[suite]\nname = \"add\"\nsource = \"../../src/cuda/add.cu\"\ninclude_dirs = [\"../../include\"]\nsizes = { n = [4096] }\n\n[[buffer]]\nname = \"a\"\ntype = \"f32\"\nlen = \"n\"\ninit = { random = \"uniform\", min = -1.0, max = 1.0 }\n\n[[buffer]]\nname = \"b\"\ntype = \"f32\"\nlen = \"n\"\ninit = { random = \"uniform\", min = -1.0, max = 1.0 }\n\n[[buffer]]\nname = \"c\"\ntype = \"f32\"\nlen = \"n\"\nrole = \"output\"\n\n[[kernel]]\nname = \"add\"\nentry = \"add<float>\"\nreference = true\ngrid = [\"ceil(n / 256)\"]\nblock = [256]\nargs = [\"a\", \"b\", \"c\", \"n as i32\"]\n";

#[test]
fn a_project_reads_kernels_where_the_repository_keeps_them() {
    let dir = repository("where");
    std::fs::write(dir.join("perf/suites/add.toml"), SUITE).unwrap();
    // From a subfolder, as cargo is run: the project file is found above, paths are the root's.
    let o = kernelgate(&dir.join("perf/suites"), &["lint"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("1 suite(s), 1 kernel(s)"), "{}", text(&o));
    // A source outside the project's source folders: refused at its `source` value, naming them.
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::fs::write(dir.join("elsewhere/k.cu"), DEVICE).unwrap();
    let outside = SUITE.replace("src/cuda/add.cu", "elsewhere/k.cu");
    std::fs::write(dir.join("perf/suites/add.toml"), outside).unwrap();
    let o = kernelgate(&dir, &["lint"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("perf/suites/add.toml:3:10: source `../../elsewhere/k.cu` is outside the project's source folders"),
        "{t}"
    );
    assert!(
        t.contains("add its folder to `sources` in `kernelgate.toml`"),
        "{t}"
    );
}

#[test]
fn a_bad_project_file_is_named_at_its_place() {
    let dir = repository("bad");
    std::fs::write(
        dir.join("kernelgate.toml"),
        "suites = \"perf/suites\"\n[defaults]\nshard = \"1/2\"\n",
    )
    .unwrap();
    let o = kernelgate(&dir, &["lint"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("kernelgate.toml:3:1: `shard` cannot have a project default: it is chosen per run: set KERNELGATE_SHARD for the run"),
        "{}",
        text(&o)
    );
    // A default the variable overrides: the variable wins.
    std::fs::write(
        dir.join("kernelgate.toml"),
        "suites = \"perf/suites\"\n[defaults]\ntimeout = \"soon\"\nallow_empty = true\n",
    )
    .unwrap();
    let o = kernelgate(&dir, &["lint"], &[]);
    assert!(
        text(&o).contains("`KERNELGATE_TIMEOUT=soon`"),
        "{}",
        text(&o)
    );
}

#[test]
fn init_writes_a_suite_in_place_and_never_overwrites() {
    let dir = repository("init");
    std::fs::remove_file(dir.join("kernelgate.toml")).unwrap();
    repo::git(&dir, &["init", "-q"]);
    let args = [
        "init",
        "--kernel",
        "src/cuda/add.cu",
        "--entry",
        "add<float>",
    ];
    let o = kernelgate(&dir, &args, &[]);
    assert!(o.status.success(), "{}", text(&o));
    for written in [
        "kernelgate.toml",
        "perf/baselines/README.md",
        ".github/workflows/kernelgate.yml",
        ".github/workflows/kernelgate-comment.yml",
        "perf/suites/add.toml",
    ] {
        assert!(
            text(&o).contains(&format!("wrote    {written}")),
            "{}",
            text(&o)
        );
    }
    assert!(
        text(&o).contains("next:\n  kernelgate lint"),
        "{}",
        text(&o)
    );
    let suite = std::fs::read_to_string(dir.join("perf/suites/add.toml")).unwrap();
    assert!(
        suite.contains("source = \"../../src/cuda/add.cu\""),
        "{suite}"
    );
    assert!(
        suite.contains("include_dirs = [\"../../include\"]"),
        "the header's folder: {suite}"
    );
    assert!(
        suite.contains("args = [\"a\", \"b\", \"c\", \"n as i32\"]"),
        "{suite}"
    );
    let o = kernelgate(&dir, &["lint"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    // Again: every file kept as it is.
    std::fs::write(dir.join("perf/suites/add.toml"), format!("# mine\n{suite}")).unwrap();
    let o = kernelgate(&dir, &args, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("kept     perf/suites/add.toml"),
        "{}",
        text(&o)
    );
    let kept = std::fs::read_to_string(dir.join("perf/suites/add.toml")).unwrap();
    assert!(kept.starts_with("# mine\n"));
    // A wrong entry: exit 2, nothing written.
    let fresh = repository("init-wrong");
    std::fs::remove_file(fresh.join("kernelgate.toml")).unwrap();
    let o = kernelgate(
        &fresh,
        &["init", "--kernel", "src/cuda/add.cu", "--entry", "sub"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`sub` is not a `__global__` function kernelgate can read in `src/cuda/add.cu`: not in the file (its kernels: add)"), "{}", text(&o));
    assert!(!fresh.join("kernelgate.toml").exists());
}

/// nvcc and NVRTC: the mixed file compiles where it is, and `lint` says which compiler took it.
#[test]
#[ignore = "needs NVRTC and nvcc: ci/test.sh installs them and runs these (--include-ignored)"]
fn a_source_with_host_code_compiles_with_nvcc() {
    repo::require_nvrtc();
    let dir = repository("nvcc");
    std::fs::write(dir.join("perf/suites/add.toml"), SUITE).unwrap();
    let scale = SUITE
        .replace("name = \"add\"", "name = \"scale\"")
        .replace("src/cuda/add.cu", "src/cuda/scale.cu")
        .replace("entry = \"add<float>\"", "entry = \"scale\"")
        .replace(
            "args = [\"a\", \"b\", \"c\", \"n as i32\"]",
            "args = [\"c\", \"n as i32\"]",
        )
        .replace(
            "role = \"output\"",
            "role = \"inout\"\ninit = { constant = 1.0 }",
        );
    std::fs::write(dir.join("perf/suites/scale.toml"), scale).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernelgate"));
    let o = cmd
        .current_dir(&dir)
        .arg("lint")
        .env("KERNELGATE_REQUIRE_NVRTC", "1")
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("`src/cuda/add.cu` compiled with nvcc: it includes `<cstdio>`"),
        "{t}"
    );
    assert!(
        !t.contains("scale.cu` compiled with nvcc"),
        "device code stays with NVRTC: {t}"
    );
    assert!(t.contains("2 source(s) compiled"), "{t}");
    // A kernel name nvcc does not know: named as the entry, not as nvcc's error in a file of
    // kernelgate's.
    let wrong = SUITE.replace("entry = \"add<float>\"", "entry = \"add<floot>\"");
    std::fs::write(dir.join("perf/suites/add.toml"), wrong).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kernelgate"))
        .current_dir(&dir)
        .arg("lint")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("`add<floot>` is not a `__global__` function in"),
        "{}",
        text(&o)
    );
    // A host function of the kernel's name (llm.c's launchers are named after their kernels):
    // the kernel's address cannot be taken by name, and the error says why.
    let launcher =
        "template <typename T>\nvoid add(T *c, int n) { add<T><<<1, 1>>>(c, c, c, n); }\n";
    std::fs::write(dir.join("src/cuda/add.cu"), format!("{MIXED}{launcher}")).unwrap();
    std::fs::write(dir.join("perf/suites/add.toml"), SUITE).unwrap();
    let o = kernelgate(&dir, &["lint"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(
            "hint: `add<float>` names more than one function (a host function of the same name?)"
        ),
        "{}",
        text(&o)
    );
}

/// PTX that a missing comma breaks in a body: the loader reads its entries, ptxas (here with
/// nvcc's wheel) refuses it, and `lint` says so at exit 2, with or without NVRTC.
#[test]
#[ignore = "needs ptxas: ci/test.sh installs it with nvcc's wheel and runs these (--include-ignored)"]
fn ptx_that_does_not_assemble_is_refused_by_lint() {
    let dir = repo::scratch("project", "ptx");
    std::fs::create_dir_all(dir.join("suites/ptx")).unwrap();
    let suite = std::fs::read_to_string("suites/ptx.toml").unwrap();
    std::fs::write(dir.join("suites/ptx.toml"), suite).unwrap();
    for f in ["relu.cu", "relu_vec4.ptx"] {
        std::fs::copy(format!("suites/ptx/{f}"), dir.join("suites/ptx").join(f)).unwrap();
    }
    let o = kernelgate(&dir, &["lint"], &[]);
    assert!(
        !text(&o).contains("not assembled: no ptxas"),
        "this test needs ptxas: {}",
        text(&o)
    );
    assert!(
        o.status.success(),
        "the PTX as nvcc wrote it assembles: {}",
        text(&o)
    );
    let ptx = dir.join("suites/ptx/relu_vec4.ptx");
    let broken = std::fs::read_to_string(&ptx).unwrap().replacen(
        "ld.param.u64 \t%rd15, [relu_scale_vec4_param_0];",
        "ld.param.u64 \t%rd15 [relu_scale_vec4_param_0];",
        1,
    );
    std::fs::write(&ptx, broken).unwrap();
    let o = kernelgate(&dir, &["lint"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("suites/ptx.toml:32:10: source `suites/ptx/relu_vec4.ptx` does not assemble for sm_90 (ptxas"),
        "{}",
        text(&o)
    );
}

/// Stored entries of trials the suite no longer has: named by `lint` as stale, not kept unseen.
#[test]
fn stale_baseline_entries_are_named() {
    let dir = repo::scratch("project", "stale");
    std::fs::create_dir_all(dir.join("suites/saxpy")).unwrap();
    std::fs::copy("suites/saxpy.toml", dir.join("suites/saxpy.toml")).unwrap();
    std::fs::copy("suites/saxpy/saxpy.cu", dir.join("suites/saxpy/saxpy.cu")).unwrap();
    let slug = "nvidia-h200-sm90-132sm-140gib-drv580.159.04-cuda13.0";
    let stored = std::fs::read_to_string(format!("baselines/{slug}/saxpy.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&stored).unwrap();
    let trials = json["trials"].as_object_mut().unwrap();
    let entry = trials["saxpy::vec4::n=4096"].clone();
    trials.insert("saxpy::vec2::n=4096".into(), entry);
    std::fs::create_dir_all(dir.join("baselines").join(slug)).unwrap();
    let out = serde_json::to_string_pretty(&json).unwrap();
    std::fs::write(dir.join("baselines").join(slug).join("saxpy.json"), out).unwrap();
    let o = kernelgate(&dir, &["lint"], &[]);
    assert!(o.status.success(), "a warning, not an error: {}", text(&o));
    assert!(
        text(&o).contains("saxpy.json`: 1 stale entry of trials the suite no longer has (left by an older revision of it): saxpy::vec2::n=4096"),
        "{}",
        text(&o)
    );
}
