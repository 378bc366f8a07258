#!/usr/bin/env bash
# kernelgate's own tests, then every suite compiled with NVRTC. Needs no GPU.
#
# Installs NVRTC from PyPI (the nvidia-cuda-nvrtc wheel, 13.0.x) under target/nvrtc when it is
# not there yet, so a machine without CUDA compiles every kernel and a compile error fails.
set -euo pipefail
cd "$(dirname "$0")/.."

nvrtc_dir=target/nvrtc
lib="$nvrtc_dir/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
  echo "ci/test.sh: installing nvidia-cuda-nvrtc 13.0.x into $nvrtc_dir"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$nvrtc_dir" 'nvidia-cuda-nvrtc==13.0.*'
fi
export LD_LIBRARY_PATH="$PWD/$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KERNELGATE_REQUIRE_NVRTC=1

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test
# Every suite valid and every kernel compiled, errors at file:line.
cargo run --quiet --bin kernelgate -- lint
# The suites: without a GPU every GPU trial is ignored and every `<suite>::compile` trial runs.
cargo test --test perf
# The same under nextest, when it is installed: one process per trial, the GPU trials listed
# ignored and so skipped, every compile trial run (docs/nextest.md).
if cargo nextest --version >/dev/null 2>&1; then
  gpu_trials=$(cargo test --quiet --test perf -- --list --format terse --ignored | grep -c ': test$' || true)
  summary=$(cargo nextest run --test perf --no-tests=pass 2>&1 | tee /dev/stderr | grep 'Summary')
  if [ "$gpu_trials" -gt 0 ] && ! grep -q ", ${gpu_trials} skipped" <<<"$summary"; then
    echo "ci/test.sh: nextest should skip the ${gpu_trials} GPU trials: ${summary}" >&2
    exit 1
  fi
fi
