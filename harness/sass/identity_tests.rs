//! The identity against real NVRTC cubins: what must leave a kernel's hash alone and what must
//! change it. Skipped (with the reason printed) where NVRTC is absent, unless
//! `KERNELGATE_REQUIRE_NVRTC` is set.

use super::*;
use crate::device::compile::{compile, CompileRequest};
use crate::sass::require_nvrtc;

/// A kernel `k` that reads a `__constant__` table directly and through a `__noinline__` callee,
/// with static shared memory and launch bounds.
const SOURCE: &str = r#"
__constant__ float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};

__device__ __noinline__ float helper(float x) { return x * table[1] + 1.0f; }

extern "C" __global__ void __launch_bounds__(256) k(const float* x, float* y, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x % 128] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = helper(s[(threadIdx.x + 1) % 128]) + table[i & 3];
}
"#;

/// An unrelated kernel, with a double literal and a `__device__` global of its own.
const OTHER: &str = r#"
extern "C" __global__ void other(double* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = z[i] * 0.5 + 3.25;
}
"#;

fn cubin(source: &str, entry: &str, arch: &str, options: &[&str]) -> Vec<u8> {
    let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    let entries = [entry.to_string()];
    let req = CompileRequest {
        path: std::path::Path::new("identity.cu"),
        text: source,
        include_dirs: &[],
        options: &options,
        entries: &entries,
        arch,
    };
    compile(&req, None).expect("the test kernels compile").cubin
}

fn identity(source: &str, entry: &str, arch: &str, options: &[&str]) -> KernelIdentity {
    identify_cubin(&cubin(source, entry, arch, options), entry, arch).unwrap()
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn comments_lineinfo_renames_and_other_kernels_leave_the_hash_alone() {
    require_nvrtc();
    for options in [&[][..], &["-rdc=true"][..]] {
        let base = identity(SOURCE, "k", "sm_90", options);
        let commented = SOURCE.replace(
            "    __syncthreads();",
            "    // every thread has written its element\n\n    __syncthreads();",
        );
        let commented = format!("// a comment that moves every line down\n\n{commented}");
        assert_eq!(
            identity(&commented, "k", "sm_90", options),
            base,
            "comment {options:?}"
        );
        let lineinfo = [options, &["-lineinfo"]].concat();
        let with_lines = cubin(SOURCE, "k", "sm_90", &lineinfo);
        assert_ne!(
            with_lines,
            cubin(SOURCE, "k", "sm_90", options),
            "line tables are there"
        );
        assert_eq!(
            identify_cubin(&with_lines, "k", "sm_90").unwrap(),
            base,
            "-lineinfo {options:?}"
        );
        let module = format!("{OTHER}{SOURCE}{}", OTHER.replace("other", "another"));
        assert_eq!(
            identity(&module, "k", "sm_90", options),
            base,
            "other kernels {options:?}"
        );
        let renamed = SOURCE.replace(" k(", " renamed(");
        let r = identity(&renamed, "renamed", "sm_90", options);
        assert_eq!(
            (r.hash, r.parts),
            (base.hash.clone(), base.parts.clone()),
            "renamed {options:?}"
        );
    }
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn a_constant_table_a_callee_or_the_arch_change_the_hash() {
    require_nvrtc();
    for options in [&[][..], &["-rdc=true"][..]] {
        let base = identity(SOURCE, "k", "sm_90", options);
        let parts = base.parts.clone().unwrap();
        let table = identity(
            &SOURCE.replace("3.0f, 4.0f}", "3.0f, 5.0f}"),
            "k",
            "sm_90",
            options,
        );
        assert_ne!(table.hash, base.hash, "constant table {options:?}");
        let t = table.parts.unwrap();
        assert_eq!(
            (&t.code, &t.attributes),
            (&parts.code, &parts.attributes),
            "only the data moved"
        );
        assert_ne!(t.data, parts.data);
        let callee = identity(
            &SOURCE.replace("+ 1.0f; }", "+ 2.0f; }"),
            "k",
            "sm_90",
            options,
        );
        assert_ne!(callee.hash, base.hash, "callee {options:?}");
        assert_ne!(callee.parts.unwrap().code, parts.code);
        let older = identity(SOURCE, "k", "sm_80", options);
        assert_ne!(older.hash, base.hash, "sm_80 against sm_90 {options:?}");
        assert_eq!(older.arch, "sm_80");
    }
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn resources_come_from_the_attributes_and_sections() {
    require_nvrtc();
    let id = identity(SOURCE, "k", "sm_90", &[]);
    assert_eq!(id.from, CodeSource::Cubin);
    assert_eq!(id.hash.len(), 64);
    let r = id.resources.unwrap();
    assert!(r.registers.is_some_and(|n| (8..=64).contains(&n)), "{r:?}");
    // `s[128]`'s 512 B after the 1 KiB sm_90 reserves at the start of `.nv.shared.k` (NVRTC
    // 13.0; `cuobjdump -elf` says smem=1536 too).
    assert_eq!(r.shared_bytes, 1024 + 512, "{r:?}");
    assert_eq!(r.max_threads, Some([256, 1, 1]), "{r:?}");
    assert_eq!(r.param_bytes, Some(20), "{r:?}");
    assert_eq!(r.barriers, 1, "{r:?}");
    assert_eq!((r.local_bytes, r.cluster), (0, None), "{r:?}");
    assert!(
        r.code_bytes > 0 && r.code_bytes.is_multiple_of(128),
        "{r:?}"
    );
    let json = serde_json::to_value(identity(OTHER, "other", "sm_90", &[])).unwrap();
    assert_eq!(json["from"], "cubin");
    assert_eq!(json["resources"]["shared_bytes"], 0);
    assert!(json["resources"].get("max_threads").is_none(), "{json}");
}

#[test]
#[ignore = "needs NVRTC: ci/test.sh installs it and runs these (--include-ignored)"]
fn bad_bytes_and_missing_kernels_are_errors_never_panics() {
    require_nvrtc();
    let bytes = cubin(SOURCE, "k", "sm_90", &[]);
    let e = identify_cubin(&bytes, "missing", "sm_90").unwrap_err();
    assert_eq!(
        e.to_string(),
        "the module has no kernel `missing` (no `.text.missing` section): name the entry as the module exports it"
    );
    for cut in (0..bytes.len()).step_by(97) {
        let _ = identify_cubin(&bytes[..cut], "k", "sm_90");
    }
    // Every byte flipped in turn: any outcome but a panic.
    for at in (0..bytes.len()).step_by(13) {
        let mut bad = bytes.clone();
        bad[at] ^= 0xff;
        let _ = identify_cubin(&bad, "k", "sm_90");
    }
}
