#!/usr/bin/env bash
# The three ways a team installs kernelgate (docs/project.md), each tried as a user would, in a
# folder with nothing of this repository but a copy of its example suites, with no
# LD_LIBRARY_PATH, no KERNELGATE_* variable and nothing on PATH but the install and the system:
#   1. the Python wheel (maturin, `bindings = "bin"`), installed into a clean virtual environment
#      with its CUDA wheels from PyPI: `kernelgate lint` compiles every example kernel;
#   2. `cargo install --locked --path .`: `kernelgate init` in a fresh git repository over a
#      source file with host code, then `kernelgate lint` on it (nvcc and NVRTC found through
#      the `nvidia` package of the python3 on PATH: step 1's environment);
#   3. the Rust snippet: a throwaway crate depending on kernelgate whose `cargo test --test perf`
#      runs its suite (GPU trials ignored, the compile trial run, NVRTC required).
# Called by ci/test.sh after the tests; `WHEEL_PROFILE=release` builds a wheel for a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/install-test
rm -rf "$work"
mkdir -p "$work"
clean_env() { env -i HOME="$HOME" PATH="$1:/usr/bin:/bin" "${@:2}"; }

# 1. The wheel, built with the same profile as the tests (the debug build is reused).
python3 -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install --quiet --disable-pip-version-check 'maturin==1.16.0'
"$work/build-venv/bin/maturin" build --quiet --profile "${WHEEL_PROFILE:-dev}" -o "$work/wheels"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$work"/wheels/kernelgate-*.whl
mkdir -p "$work/examples"
cp -r suites baselines "$work/examples/"
out=$(cd "$work/examples" && clean_env "$work/venv/bin" kernelgate lint)
echo "$out"
grep -Eq '; [0-9]+ source\(s\) compiled for sm_90$' <<<"$out" || {
  echo "ci/install.sh: the wheel's kernelgate did not compile the example suites" >&2
  exit 1
}

# 2. cargo install, then `init` in a repository of kernels with host code.
CARGO_TARGET_DIR=$root/target cargo install --quiet --locked --debug --path . --root "$work/cargo"
repo=$work/team
mkdir -p "$repo/src/cuda" "$repo/include"
cat > "$repo/src/cuda/add.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
#include "helpers.h"

__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + HELPER_ZERO;
}

int main() {
  float *d;
  cudaMalloc(&d, 4);
  add<<<1, 1>>>(d, d, d, 1);
  printf("done\n");
  return 0;
}
EOF
echo '#define HELPER_ZERO 0.0f' > "$repo/include/helpers.h"
git -C "$repo" init -q
# The wheels of step 1 stand for a machine's CUDA: nvcc and NVRTC found through python3's
# `nvidia` package would be the same; here the venv's python3 is on PATH.
(cd "$repo" && clean_env "$work/cargo/bin:$work/venv/bin" kernelgate init --kernel src/cuda/add.cu --entry add)
out=$(cd "$repo" && clean_env "$work/cargo/bin:$work/venv/bin" kernelgate lint)
echo "$out"
grep -q 'compiled with nvcc: it includes `<cstdio>`' <<<"$out" && grep -q '1 source(s) compiled' <<<"$out" || {
  echo "ci/install.sh: the installed kernelgate did not lint the suite init wrote" >&2
  exit 1
}

# 3. The Rust snippet, in a crate of its own (its lock file is this repository's).
crate=$work/rust-user
mkdir -p "$crate/tests" "$crate/src"
cat > "$crate/Cargo.toml" <<EOF
[package]
name = "rust-user"
version = "0.1.0"
edition = "2021"

[dev-dependencies]
kernelgate = { path = "$root" }

[[test]]
name = "perf"
path = "tests/perf.rs"
harness = false
EOF
echo '' > "$crate/src/lib.rs"
printf 'fn main() -> std::process::ExitCode {\n    kernelgate::main()\n}\n' > "$crate/tests/perf.rs"
cp Cargo.lock "$crate/"
mkdir -p "$crate/suites/saxpy"
cp suites/saxpy.toml "$crate/suites/"
cp suites/saxpy/saxpy.cu "$crate/suites/saxpy/"
# NVRTC as ci/test.sh installs it for this repository (a Rust user's machine has its own).
out=$(cd "$crate" && LD_LIBRARY_PATH=$root/target/nvrtc/nvidia/cu13/lib KERNELGATE_REQUIRE_NVRTC=1 \
  CARGO_TARGET_DIR=$root/target cargo test --quiet --test perf 2>&1) || {
  echo "$out"
  echo "ci/install.sh: the Rust snippet's cargo test --test perf failed" >&2
  exit 1
}
echo "$out"
grep -Eq '^test saxpy::compile +\.\.\. .*ok$' <<<"$out" || {
  echo "ci/install.sh: the Rust snippet's run did not compile the suite" >&2
  exit 1
}
echo "ci/install.sh: the wheel, cargo install and the Rust snippet each ran kernelgate"
