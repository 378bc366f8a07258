#!/usr/bin/env bash
# Builds a git history of 8 commits after a good one from the example suites, with one real
# regression in the middle, for `kernelgate bisect` (docs/paired.md#bisect):
#
#   good  saxpy and affine suites, as in suites/
#   c1    a comment in saxpy.cu                                   code-neutral
#   c2    a half-done edit: saxpy.cu does not compile             broken: skipped
#   c3    the edit finished: saxpy_vec4 with fmaf(a, x, y)        an equivalent expression
#   c4    saxpy::vec4 launched with 32-thread blocks              THE REGRESSION (occupancy halved;
#                                                                 +6.9% to +16.6% on H100/H200)
#   c5    a comment in affine.cu                                  another suite
#   c6    a new kernel in the saxpy suite                         an unrelated kernel
#   c7    a comment in saxpy.cu                                   code-neutral
#   c8    saxpy.toml reformatted                                  code-neutral (bad)
#
# usage: docs/examples/bisect-demo.sh [DIR]    (default target/bisect-demo; DIR is replaced)
# then, on a GPU machine:
#   cd DIR && KERNELGATE_SUITES=suites kernelgate bisect HEAD~8 HEAD saxpy::vec4::n=16777216
# Expected: first regressed at c4, "changed since its parent: launches"; c2 skipped (does not
# compile); the commits whose trial identity is good's (c1, c3 when fmaf gives the same SASS)
# or c4's (c5-c8) decided without timing.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
demo="${1:-$here/target/bisect-demo}"
rm -rf "$demo"
mkdir -p "$demo/suites/saxpy" "$demo/suites/affine"
cp "$here/suites/saxpy.toml" "$here/suites/affine.toml" "$demo/suites/"
cp "$here/suites/saxpy/saxpy.cu" "$demo/suites/saxpy/"
cp "$here/suites/affine/affine.cu" "$demo/suites/affine/"
printf '/target/\n' > "$demo/.gitignore"
cd "$demo"
commit() {
  git -c user.name=demo -c user.email=demo@localhost commit -q "$@"
}
edit() { # FILE PYTHON-EXPRESSION-OVER-s
  python3 - "$1" "$2" <<'PY'
import sys
path, expr = sys.argv[1], sys.argv[2]
s = open(path).read()
t = eval(expr)
assert t != s, f"{path}: the edit changed nothing"
open(path, "w").write(t)
PY
}
cu=suites/saxpy/saxpy.cu
toml=suites/saxpy.toml
git init -q
git add .
commit -m "saxpy and affine suites"
edit "$cu" 's.replace("// Reference: one element per thread.", "// Reference: one element per thread (the simplest kernel that is right).")'
commit -am "saxpy.cu: say why naive is the reference"
edit "$cu" 's.replace("yv.x = a * xv.x + yv.x;", "yv.x = fmaf(a, xv.x yv.x);")'
commit -am "vec4: start using fmaf (half-done)"
edit "$cu" 's.replace("fmaf(a, xv.x yv.x)", "fmaf(a, xv.x, yv.x)")'
commit -am "vec4: fmaf(a, x, y), the same FMA spelt out"
edit "$toml" 's.replace("name = \"vec4\"\nentry = \"saxpy_vec4\"\ngrid = [\"ceil(n / 1024)\"]\nblock = [256]", "name = \"vec4\"\nentry = \"saxpy_vec4\"\ngrid = [\"ceil(n / 128)\"]\nblock = [32]")'
commit -am "vec4: 32-thread blocks"
edit suites/affine/affine.cu '"// The affine suite: y = 2x + 3.\n" + s'
commit -am "affine.cu: a heading"
edit "$toml" 's.replace("[check]", "[[kernel]]\nname = \"vec4_wide\"\nentry = \"saxpy_vec4\"\ngrid = [\"ceil(n / 2048)\"]\nblock = [512]\nargs = [\"2.0f32\", \"x\", \"y\", \"n as i32\"]\n\n[check]")'
commit -am "saxpy: a vec4 kernel with 512-thread blocks"
edit "$cu" 's.replace("// y = a * x + y over n floats.", "// y = a * x + y over n floats (SAXPY, BLAS level 1).")'
commit -am "saxpy.cu: name the operation"
edit "$toml" 's.replace("trials = 3", "trials   = 3   # input sets per trial")'
commit -am "saxpy.toml: a comment"
git log --oneline --first-parent
echo "bisect-demo: $(git rev-list --count HEAD~8..HEAD) commits after good in $demo"
