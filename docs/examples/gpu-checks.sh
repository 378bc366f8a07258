#!/usr/bin/env bash
# The GPU checks of issue 17 (identical-code skipping, A/A noise, bisect, code identity across
# machines), each output kept under OUT (default target/gpu-checks). Run from the kernelgate
# checkout on a GPU machine with NVRTC (and nvdisasm for the SASS diffs):
#   docs/examples/gpu-checks.sh [OUT]
# What to read in OUT: paired-*.txt's last lines (skipping vs full: trials measured, wall time,
# correctness and sampling seconds, the skipped line); aa.txt's noise line; bisect.txt's first
# lines; sass-json-$(hostname).json to compare between machines.
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$here/target/gpu-checks}"
mkdir -p "$out"
# KG: a kernelgate binary to use instead of building the release one.
if [ -z "${KG:-}" ]; then
  cargo build --release --quiet --bin kernelgate --manifest-path "$here/Cargo.toml"
fi
kg="${KG:-$here/target/release/kernelgate}"
demo="$out/paired-demo"
bash "$here/docs/examples/paired-demo.sh" "$demo" > /dev/null
cd "$demo"
"$kg" sass --base HEAD~1 > "$out/sass-base.txt" 2>&1; echo "sass --base: exit $?"
# The skipping run, then the full one (every trial timed; identical ones as A/A pairs).
KERNELGATE_BASE=HEAD~1 KERNELGATE_RESULTS="$out/paired-skip.json" \
  "$kg" run > "$out/paired-skip.txt" 2>&1; echo "paired, skipping: exit $?"
KERNELGATE_BASE=HEAD~1 KERNELGATE_TIME_IDENTICAL=1 KERNELGATE_RESULTS="$out/paired-full.json" \
  "$kg" run > "$out/paired-full.txt" 2>&1; echo "paired, all timed: exit $?"
# A/A on an unchanged tree: every trial identical, every one timed.
KERNELGATE_BASE=HEAD KERNELGATE_TIME_IDENTICAL=1 KERNELGATE_RESULTS="$out/aa.json" \
  "$kg" run > "$out/aa.txt" 2>&1; echo "A/A: exit $?"
# Code identities for sm_90 (equal on every H100 and H200) and sm_100 (different).
KERNELGATE_ARCH=sm_90,sm_100 "$kg" sass --json > "$out/sass-json-$(hostname).json" 2> "$out/sass-json.err"
echo "sass --json: exit $?"
bisect="$out/bisect-demo"
bash "$here/docs/examples/bisect-demo.sh" "$bisect" > /dev/null
cd "$bisect"
"$kg" bisect HEAD~8 HEAD saxpy::vec4::n=16777216 > "$out/bisect.txt" 2> "$out/bisect.err"
echo "bisect: exit $?"
for f in paired-skip paired-full aa; do echo "== $f"; grep '^kernelgate:' "$out/$f.txt"; done
echo "== bisect"; head -4 "$out/bisect.txt"
