#!/usr/bin/env python3
"""kernelgate's size: code lines of every Rust source of the repository (every crate, its
binaries, examples and any xtask or lab crate), not blank, not a comment (`//`, `///`, `//!`),
before a file's first `#[cfg(test)]`, outside `*tests*.rs` files, `tests/` folders, `target/`
and fixture folders. Moving code from one crate to another does not change it.

Usage: ci/codelines.py [--max N] [ROOT]   (ROOT: the repository, by default this script's)
Prints the total and each top folder's share; with --max, exits 1 when the total is above N.
Beside it, not in it: the lines of the product's own CUDA kernels (`.cu` files under harness/ and
lab/, which the Rust code includes with `include_str!`), so moving a kernel's text out of a Rust
string shows here.

Figures: 29,606 at d6d93d2 (29,352 of them in harness/), the milestone's ceiling 33,000, raised to 33,100 for
parameter types resolved by the compiler (issue 32: about +380 lines, 62 cut beside it), to
33,200 for shards dealt by recorded time (issue 35: +92), to 33,400 for launch expressions that
read the device (issue 34: +170), and back to 33,300 after a review cut 113 (33,235); then
33,238 → 33,500 for a kernel's own axes (issue 34: about +330), kernels read through the
headers a source includes (issue 32: +30) and the roofline (issue 36: about +190), with 412
lines cut by two review passes beside them (33,492); to 33,600 for the HTML chart of a
kernel's variants against their axis (issue 34: +55); then 33,553 → 34,200 for cuBLASLt's GEMM
as a suite kernel (issue 36: +731 — suite/library.rs, device/cublaslt.rs, gemm.rs), skip
conditions over the sizes (issue 34: +56) and a worker that sees only its GPU (issue 35: +19),
with 158 lines cut by a review pass beside them (34,197); then 34,178 → 34,450 for CUPTI's
kernel records (issue 32's `cupti` timing regime and issue 36's library kernels and algorithm:
+261) and merge deciding a sharded run as one family (issue 35: +147), with 157 lines cut by a
review pass beside them (34,429); then 34,446 → 34,750 for a kernel's variants timed in shared
rounds against one set of reference samples (issue 34: +301 with its accounting, +6), a shard's
verdicts shown as deferred (issue 35: +10) and two errors of the llm.c port said where they
happen (issue 32: +29), with 57 lines cut by a review pass beside them (34,735), and 34,749
after a last read of the change (its four mends, the log's tick counting a group's trials the
largest: +14 in all); then 34,749 → 34,850 for a pool of GPU models in one merged report (issue
35: +269), the time cap marked per variant and the variant limit counted after `skip` (issue 34:
+18), `kernelgate report --junit` (+16), a library call's profile command (issue 36: +9) and
`order` (+2), with 246 lines cut by three review passes beside them (34,817), and 34,825
after a last read of the change (its mends: +8); then 34,825 → 34,450 after two review passes
(the counters probe a GPU-only test: −237; an element type's constants one table: −26; a
compile outcome holding the report's `Compiled`: −22; 18 cuts in suite/ and cli/: −124) with a
library call's profile command that spares the suite's own kernels and CUPTI found held by
`ncu` (issue 36: +5): 34,421; then 34,450 → 34,400 after a third pass over report/, html/ and
history/ (−60): 34,361; and 34,400 → 34,325 after a fourth over runner/, worker/, measure/ and
device/ (−58): 34,303; then 34,325 → 33,725 after the scripted worker left the product for the
tests (a test double the tests start as `KERNELGATE_WORKER_PROGRAM`: −249) and three review
passes (suite/, check/, sass/ and their neighbours: −195; report/, html/, history/ and the root
files: −74; runner/, worker/, measure/, device/, cli/ and lab/: −82): 33,703, and 33,713 after a last read
of the change (if/else again where the passes had matched on a bool for the line count alone, a
kernel's argument list written out: +10); then 33,725 → 33,350 after four structural passes
(suite/: −124; report/, html/, history/: −71; device/, check/, measure/, sass/: −93; cli/,
worker/, runner/, gate/, lab/ and the root files: −99, of which 7 are test data renamed as the
test file it is, stats/paired_cases_tests.rs): 33,326; and 33,350 → 33,275 after a second
round (calibrate's and the lab's families through one measure::judge: −43; history's trend
point holding its stored row: −16; a launch's targets read from the suite's buffers: −12):
33,255, and 33,256 after a last read (calibrate's re-measure reason an if/else again:
+1) and 33,257
(suite::ctx::choice takes a word's place and the word as two parameters, not a tuple: +1); then
33,275 → 33,000, the milestone's ceiling, after a third round of structural passes (suite/ and
init: −57; report/, html/, history/: −90; cli/, sass/, gate/, nextest/ and the root files: −70,
strsim's edit distance among them; runner/ and worker/: −28; device/, check/, measure/: −30)
and history's verdict column reading every verdict a run records (−4): 32,978, and 32,980
after a last read (history's append hashes a run's results once again: +2)."""
import pathlib
import sys


def count(path):
    n = 0
    for line in path.read_text(errors="replace").split("\n"):
        s = line.strip()
        if s.startswith("#[cfg(test)]"):
            break
        if s and not s.startswith("//"):
            n += 1
    return n


def main(argv):
    ceiling = None
    if argv[:1] == ["--max"]:
        ceiling, argv = int(argv[1]), argv[2:]
    root = pathlib.Path(argv[0] if argv else pathlib.Path(__file__).resolve().parent.parent)
    parts = {}
    for p in sorted(root.rglob("*.rs")):
        rel = p.relative_to(root).parts
        if "tests" in p.name or "tests" in rel or "target" in rel or "fixtures" in rel:
            continue
        if any(part.startswith(".") for part in rel):
            continue
        parts[rel[0]] = parts.get(rel[0], 0) + count(p)
    total = sum(parts.values())
    for top, n in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"{n:>8}  {top}/")
    print(f"{total:>8}  code lines in all")
    cuda = sum(count(p) for top in ("harness", "lab") for p in sorted((root / top).rglob("*.cu")))
    print(f"{cuda:>8}  lines of the product's own CUDA kernels (.cu under harness/ and lab/; not in the total)")
    if ceiling is not None and total > ceiling:
        print(f"ci/codelines.py: {total} code lines, over the ceiling of {ceiling}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
