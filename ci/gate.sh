#!/usr/bin/env bash
# The merge gate on a GPU runner, from an unpacked bundle (ci/bundle.sh) or a checkout with
# target/release/kernelgate built. Writes reports under ${KERNELGATE_REPORTS:-reports}/ and
# exits with kernelgate's code:
#   0 pass · 1 performance regression · 101 correctness failure · 2 infrastructure / bad input
# Shard with KERNELGATE_SHARD=k/n (one runner each); spread over GPUs with KERNELGATE_DEVICE=0,1.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=./kernelgate
[ -x "$bin" ] || bin=target/release/kernelgate
reports=${KERNELGATE_REPORTS:-reports}
mkdir -p "$reports"
tag=${KERNELGATE_SHARD:-all}; tag=${tag//\//-of-}
export KERNELGATE_REQUIRE_GPU=${KERNELGATE_REQUIRE_GPU:-1}
# Pull requests are gated in paired mode: against the base's suites shipped in the bundle
# (ci/bundle.sh with KERNELGATE_BASE), or in a checkout against the merge base with the PR's
# target branch. Stored baselines stay for main-branch runs.
if [ -z "${KERNELGATE_BASE:-}" ]; then
  if [ -f base/SUITES ]; then
    KERNELGATE_BASE=base/$(cat base/SUITES)
    export KERNELGATE_BASE
  elif [ -d base/suites ]; then
    export KERNELGATE_BASE=base/suites
  elif [ -n "${GITHUB_BASE_REF:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
    KERNELGATE_BASE=$(git merge-base HEAD "origin/$GITHUB_BASE_REF") || {
      echo "kernelgate: no merge base with origin/$GITHUB_BASE_REF (fetch more history: git fetch --deepen=200 origin $GITHUB_BASE_REF)" >&2
      exit 2
    }
    export KERNELGATE_BASE
  fi
fi
# On main, a trial without a baseline (added by the pull request just merged) is reported as
# new (not gated), not failed, until the bless job records it; a project that wants every
# trial gated sets require_baseline in kernelgate.toml (or KERNELGATE_REQUIRE_BASELINE=1).
if [ -n "${KERNELGATE_BASE:-}" ]; then
  echo "kernelgate: paired mode against KERNELGATE_BASE=$KERNELGATE_BASE"
fi
export KERNELGATE_RESULTS=${KERNELGATE_RESULTS:-$reports/results-$tag.json}
export KERNELGATE_JUNIT=${KERNELGATE_JUNIT:-$reports/junit-$tag.xml}
export KERNELGATE_MARKDOWN=${KERNELGATE_MARKDOWN:-$reports/summary-$tag.md}
export KERNELGATE_HTML=${KERNELGATE_HTML:-$reports/report-$tag.html}
# The run history (SQLite) is kept only where KERNELGATE_HISTORY names a persistent path.
"$bin" run "$@"
code=$?
case $code in
  0) echo "kernelgate: passed" ;;
  1) echo "kernelgate: a trial got slower than its ${KERNELGATE_BASE:+base revision}${KERNELGATE_BASE:-baseline} (performance regression); see $KERNELGATE_MARKDOWN" ;;
  101) echo "kernelgate: a kernel computed a wrong result, faulted, hung or did not compile" ;;
  2) echo "kernelgate: infrastructure problem or bad input (no GPU, missing baseline, invalid suite)" ;;
  *) echo "kernelgate: exited with $code" ;;
esac
exit $code
