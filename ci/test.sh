#!/usr/bin/env bash
# kernelgate's own tests, then every suite compiled with NVRTC. Needs no GPU.
#
# Installs NVRTC and CUDA's headers from PyPI (the nvidia-cuda-nvrtc, nvidia-cuda-runtime and
# nvidia-cuda-cccl wheels, 13.0.x) under target/nvrtc when they are not there yet, so a machine
# without CUDA compiles every kernel (f16/bf16 and CUB included) and a compile error fails.
# kernelgate finds the headers in nvidia/cu13/include beside the NVRTC on LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

nvrtc_dir=target/nvrtc
lib="$nvrtc_dir/nvidia/cu13/lib"
include="$nvrtc_dir/nvidia/cu13/include"
if [ ! -e "$lib/libnvrtc.so.13" ] || [ ! -e "$include/cuda_fp16.h" ] || [ ! -e "$include/cccl/cub/cub.cuh" ]; then
  echo "ci/test.sh: installing nvidia-cuda-nvrtc, -runtime and -cccl 13.0.x into $nvrtc_dir"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target "$nvrtc_dir" 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-cccl==13.0.*'
fi
export LD_LIBRARY_PATH="$PWD/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KERNELGATE_REQUIRE_NVRTC=1

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test
# Every suite valid and every kernel compiled, errors at file:line.
cargo run --quiet --bin kernelgate -- lint
# The HTML report from the committed results file, checked: written, every trial in it, no
# script, nothing fetched from elsewhere (tests/html_report.rs checks the structure in depth).
# example.json is synthetic (every kind of trial); h200-run.json is a real run on an H200;
# h200-paired.json a paired run derived from it (tests/fixtures/results/README.md).
for results in tests/fixtures/results/example.json tests/fixtures/results/h200-run.json tests/fixtures/results/h200-paired.json; do
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
