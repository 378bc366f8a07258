#!/usr/bin/env bash
# kernelgate's own tests, then every suite compiled with NVRTC. Needs no GPU.
#
# Installs NVRTC and CUDA's headers from PyPI (the nvidia-cuda-nvrtc, nvidia-cuda-runtime and
# nvidia-cuda-cccl wheels, 13.0.x) under target/nvrtc when they are not there yet, so a machine
# without CUDA compiles every kernel (f16/bf16 and CUB included) and a compile error fails.
# kernelgate finds the headers in nvidia/cu13/include beside the NVRTC on LD_LIBRARY_PATH.
# nvcc for sources with host code (nvidia-cuda-nvcc, its nvvm and crt, and the profiler API's
# header) goes into the same nvidia/cu13 folder: one pip call, since pip --target replaces
# the `nvidia` folder it installs into.
# Installs nvdisasm (the nvidia-cuda-nvdisasm wheel, 13.2.x) under target/cuda-tools for
# `kernelgate sass`, which finds it there.
set -euo pipefail
cd "$(dirname "$0")/.."

nvrtc_dir=target/nvrtc
lib="$nvrtc_dir/nvidia/cu13/lib"
include="$nvrtc_dir/nvidia/cu13/include"
if [ ! -e "$lib/libnvrtc.so.13" ] || [ ! -e "$include/cuda_fp16.h" ] || [ ! -e "$include/cccl/cub/cub.cuh" ] \
  || [ ! -x "$nvrtc_dir/nvidia/cu13/bin/nvcc" ] || [ ! -e "$include/cuda_profiler_api.h" ]; then
  echo "ci/test.sh: installing nvidia-cuda-nvrtc, -runtime, -cccl and -nvcc 13.0.x into $nvrtc_dir"
  rm -rf "$nvrtc_dir"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$nvrtc_dir" 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-cccl==13.0.*' \
    'nvidia-cuda-nvcc==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*' 'nvidia-cuda-profiler-api==13.0.*'
fi
export LD_LIBRARY_PATH="$PWD/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# nvdisasm reads a cubin alone (cuobjdump -sass would run it too); 13.2 is the oldest on PyPI
# and disassembles NVRTC 13.0's cubins.
tools=target/cuda-tools
if [ ! -x "$tools/nvidia/cu13/bin/nvdisasm" ]; then
  echo "ci/test.sh: installing nvidia-cuda-nvdisasm 13.2.x into $tools"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$tools" 'nvidia-cuda-nvdisasm==13.2.*'
fi
export KERNELGATE_REQUIRE_NVRTC=1

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The size of the code (every crate; tests and comments not counted), against the milestone's
# ceiling.
python3 ci/codelines.py --max 33000
# Every test, the ones that need NVRTC (and nvdisasm) too: they are `#[ignore]`d with that
# reason, so a run without NVRTC lists them as ignored instead of passing them by skipping.
# Only the tests that need a GPU (named `needs_gpu_*`) are left out, and counted: nothing else
# may be ignored or filtered out.
test_out=$(cargo test --workspace -- --include-ignored --skip needs_gpu_ 2>&1) || { echo "$test_out"; exit 1; }
echo "$test_out"
sum() { grep -Eo "[0-9]+ $1" <<<"$test_out" | awk '{ s += $1 } END { print s + 0 }'; }
gpu_tests=$(grep -rhoE 'fn needs_gpu_[a-z0-9_]+' tests harness | sort -u | wc -l)
if [ "$(sum ignored)" -ne 0 ] || [ "$(sum 'filtered out')" -ne "$gpu_tests" ]; then
  echo "ci/test.sh: $(sum ignored) test(s) ignored and $(sum 'filtered out') left out; only the $gpu_tests that need a GPU may be" >&2
  exit 1
fi
# Every suite valid and every kernel compiled, errors at file:line.
cargo run --quiet --bin kernelgate -- lint
# `kernelgate sass --base` on two real revisions: in a throwaway repository, one kernel's code
# changes (saxpy_vec4: one addend negated) and another source only in a comment (affine.cu);
# exactly the first is listed, with a short diff. Then paired mode on them (below).
demo=target/sass-demo
rm -rf "$demo"
mkdir -p "$demo/suites/saxpy" "$demo/suites/affine"
cp suites/saxpy.toml suites/affine.toml "$demo/suites/"
cp suites/saxpy/saxpy.cu "$demo/suites/saxpy/"
cp suites/affine/affine.cu "$demo/suites/affine/"
commit() { git -C "$demo" -c user.name=ci -c user.email=ci@localhost commit -q "$@"; }
git -C "$demo" init -q
git -C "$demo" add .
commit -m base
sed -i 's/yv.w = a \* xv.w + yv.w;/yv.w = a * xv.w - yv.w;/' "$demo/suites/saxpy/saxpy.cu"
sed -i '1i // A comment only: the code is the same.' "$demo/suites/affine/affine.cu"
commit -am candidate
sass_out=$(KERNELGATE_SUITES="$demo/suites" cargo run --quiet --bin kernelgate -- sass --base HEAD~1)
echo "$sass_out"
changed=$(grep '^changed' <<<"$sass_out" || true)
diff_lines=$(grep -cE '^    [-+][^-+]' <<<"$sass_out" || true)
if [ "$changed" != "changed  saxpy::vec4 (sm_90)" ] || ! grep -q '1 changed, 3 unchanged, 0 new, 0 gone' <<<"$sass_out" \
  || [ "$diff_lines" -lt 1 ] || [ "$diff_lines" -gt 4 ]; then
  echo "ci/test.sh: kernelgate sass --base should list exactly saxpy::vec4, with a diff of 1 to 4 lines" >&2
  exit 1
fi
# Paired mode on the same two revisions, without a GPU: every trial whose whole resolved trial
# (code, launches, inputs, settings) is the base's is `identical code` and not run (saxpy's
# naive and affine's, 8), and only saxpy::vec4's four trials are left to time (ignored here).
paired_out=$(KERNELGATE_SUITES="$demo/suites" KERNELGATE_BASE=HEAD~1 cargo run --quiet --bin kernelgate -- run)
echo "$paired_out"
if ! grep -q ': 0 trial(s) compared, 8 identical code' <<<"$paired_out" \
  || [ "$(grep -c 'identical code to base' <<<"$paired_out")" -ne 8 ] \
  || [ "$(grep -E '^test saxpy::vec4::' <<<"$paired_out" | grep -c 'identical code')" -ne 0 ]; then
  echo "ci/test.sh: paired mode should skip the 8 identical trials and leave saxpy::vec4's" >&2
  exit 1
fi
# The HTML report from the committed results file, checked: written, every trial in it, no
# script, nothing fetched from elsewhere (tests/html_report.rs checks the structure in depth).
# example.json is synthetic (every kind of trial); h200-run.json is a real run on an H200;
# h200-paired.json a paired run derived from it; h200-paired-block.json and
# h200-stored-instructions.json real format-3 runs with counters (tests/fixtures/results/README.md).
for results in tests/fixtures/results/example.json tests/fixtures/results/h200-run.json tests/fixtures/results/h200-paired.json tests/fixtures/results/h200-paired-block.json tests/fixtures/results/h200-stored-instructions.json; do
  report=target/kernelgate-report.html
  cargo run --quiet --bin kernelgate -- report "$results" --html "$report"
  trials=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["trials"]))' "$results")
  found=$(grep -o 'id="t-[^"]*"' "$report" | sort -u | wc -l)
  [ "$found" -eq "$trials" ] || { echo "ci/test.sh: $report shows $found of $trials trials"; exit 1; }
  grep -q '<svg' "$report" || { echo "ci/test.sh: $report has no plots"; exit 1; }
  if grep -Eq '<script|<link|src="http|href="http|url\(' "$report"; then
    echo "ci/test.sh: $report is not self-contained"; exit 1
  fi
done
# The suites: without a GPU every GPU trial is ignored and every `<suite>::compile` trial runs.
cargo test --test perf
# The same under nextest, when it is installed: one process per trial, the GPU trials listed
# ignored and so skipped, every compile trial run (docs/nextest.md).
if cargo nextest --version >/dev/null 2>&1; then
  gpu_trials=$(cargo test --quiet --test perf -- --list --format terse --ignored | grep -c ': test$' || true)
  # Captured, then printed: `tee /dev/stderr` would truncate a log file that stderr points to.
  nextest_out=$(cargo nextest run --test perf --no-tests=pass 2>&1)
  echo "$nextest_out"
  summary=$(grep 'Summary' <<<"$nextest_out")
  if [ "$gpu_trials" -gt 0 ] && ! grep -q ", ${gpu_trials} skipped" <<<"$summary"; then
    echo "ci/test.sh: nextest should skip the ${gpu_trials} GPU trials: ${summary}" >&2
    exit 1
  fi
fi
# The workflows kernelgate ships (the one `kernelgate init` writes among them): actionlint and
# shellcheck, pinned.
ci/workflows.sh
# Installed as a team installs it: the wheel, cargo install (then `init` in a repository of
# kernels with host code), the Rust snippet (docs/project.md).
ci/install.sh
