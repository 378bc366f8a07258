#!/usr/bin/env bash
# Builds kernelgate once (release) and packs it with suites/ and baselines/ into one archive,
# so a GPU runner without a Rust toolchain can run the suites from the unpacked folder:
#
#   ci/bundle.sh [OUT.tar.gz]          # default: target/kernelgate-bundle.tar.gz
#   mkdir run && tar -xzf kernelgate-bundle.tar.gz -C run && cd run && ./kernelgate run
#
# The bundle's `kernelgate run` is the perf binary (same code as `cargo test --test perf`); its
# GPU worker is the same file, and its compile cache goes to ./target/kernelgate-cache there.
#
# For a pull request, set KERNELGATE_BASE to the merge base (a git revision): the suites as of
# that revision go into the bundle as base/suites/, and ci/gate.sh then runs in paired mode
# against them (the GPU runner needs no git history).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/kernelgate-bundle.tar.gz}
cargo build --release --locked --bin kernelgate
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp target/release/kernelgate "$stage/"
# The suites, the baselines and, with a project file (docs/project.md), the file and every
# source folder it names: all a suite reads, at the same places.
folders=(suites baselines)
if [ -f kernelgate.toml ]; then
  mapfile -t folders < <(python3 -c '
import tomllib
p = tomllib.load(open("kernelgate.toml", "rb"))
print(p.get("suites", "suites")); print(p.get("baselines", "baselines"))
for s in p.get("sources", []): print(s)')
  cp kernelgate.toml "$stage/"
fi
for f in "${folders[@]}"; do
  [ -e "$f" ] && cp -r --parents "$f" "$stage/"
done
mkdir -p "$stage/ci" && cp ci/gate.sh "$stage/ci/"
git rev-parse HEAD > "$stage/COMMIT" 2>/dev/null || true
if [ -n "${KERNELGATE_BASE:-}" ]; then
  base=$(git rev-parse --verify "${KERNELGATE_BASE}^{commit}") || {
    echo "ci/bundle.sh: KERNELGATE_BASE=$KERNELGATE_BASE is not a commit here (in a shallow clone: git fetch --deepen=200)" >&2
    exit 2
  }
  mkdir -p "$stage/base"
  at_base=()
  for f in "${folders[@]:0:1}" "${folders[@]:2}" kernelgate.toml; do
    git cat-file -e "$base:$f" 2>/dev/null && at_base+=("$f")
  done
  git archive --format=tar "$base" -- "${at_base[@]}" | tar -x -C "$stage/base"
  echo "$base" > "$stage/base/COMMIT"
  echo "${folders[0]}" > "$stage/base/SUITES"
fi
mkdir -p "$(dirname "$out")"
tar -czf "$out" -C "$stage" .
echo "ci/bundle.sh: wrote $out ($(du -h "$out" | cut -f1)): kernelgate, ${folders[*]}, ci/gate.sh${KERNELGATE_BASE:+, the base revision $KERNELGATE_BASE under base/}"
