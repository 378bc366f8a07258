#!/usr/bin/env bash
# Builds a two-commit repository of every example suite in which one kernel's code changes and
# stays correct: saxpy_vec4 loads x with __ldcs (a streaming load: LDG.E.128.CONSTANT becomes
# LDG.E.EF.128, and the tail's LDG.E.CONSTANT an LDG.E; a 2-line SASS diff). Every other trial
# is identical at the base, so paired mode times only saxpy::vec4's four trials
# (docs/paired.md#identical-trials-are-not-run).
#
# usage: docs/examples/paired-demo.sh [DIR]    (default target/paired-demo; DIR is replaced)
# then:
#   cd DIR && kernelgate sass --base HEAD~1                                   # no GPU: saxpy::vec4 only
#   cd DIR && KERNELGATE_BASE=HEAD~1 kernelgate run                           # times saxpy::vec4 only
#   cd DIR && KERNELGATE_BASE=HEAD~1 KERNELGATE_TIME_IDENTICAL=1 kernelgate run   # times them all
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
demo="${1:-$here/target/paired-demo}"
rm -rf "$demo"
mkdir -p "$demo"
cp -r "$here/suites" "$demo/"
printf '/target/\n' > "$demo/.gitignore"
cd "$demo"
commit() { git -c user.name=demo -c user.email=demo@localhost commit -q "$@"; }
git init -q
git add .
commit -m "every example suite"
python3 - suites/saxpy/saxpy.cu <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
t = s.replace(
    "float4 xv = reinterpret_cast<const float4*>(x)[i];",
    "float4 xv = __ldcs(reinterpret_cast<const float4*>(x) + i);",
)
assert t != s
open(p, "w").write(t)
PY
commit -am "vec4: stream x through __ldcs"
git log --oneline
