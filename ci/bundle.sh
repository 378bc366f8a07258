#!/usr/bin/env bash
# Builds kernelgate once (release) and packs it with suites/ and baselines/ into one archive,
# so a GPU runner without a Rust toolchain can run the suites from the unpacked folder:
#
#   ci/bundle.sh [OUT.tar.gz]          # default: target/kernelgate-bundle.tar.gz
#   mkdir run && tar -xzf kernelgate-bundle.tar.gz -C run && cd run && ./kernelgate run
#
# The bundle's `kernelgate run` is the perf binary (same code as `cargo test --test perf`); its
# GPU worker is the same file, and its compile cache goes to ./target/kernelgate-cache there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/kernelgate-bundle.tar.gz}
cargo build --release --locked --bin kernelgate
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp target/release/kernelgate "$stage/"
cp -r suites baselines "$stage/"
mkdir -p "$stage/ci" && cp ci/gate.sh "$stage/ci/"
git rev-parse HEAD > "$stage/COMMIT" 2>/dev/null || true
mkdir -p "$(dirname "$out")"
tar -czf "$out" -C "$stage" .
echo "ci/bundle.sh: wrote $out ($(du -h "$out" | cut -f1)): kernelgate, suites/, baselines/, ci/gate.sh"
