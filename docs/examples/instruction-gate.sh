#!/usr/bin/env bash
# The instruction gate on a GPU (issue 18): bless the `fma` fixture, make its kernel do 2% more
# FMAs (ITERS 100 → 102), run three times; every run must fail on `max_instruction_growth`.
# Run from the repository root with the perf binary at ./.gpu/perf (../shared/gpu-bundle.sh).
set -uo pipefail
work=$(mktemp -d)
cp -r tests/fixtures/counters "$work/suites"
export KERNELGATE_SUITES="$work/suites" KERNELGATE_BASELINES="$work/baselines"
KERNELGATE_BLESS=1 ./.gpu/perf > "$work/bless.log" 2>&1 || { tail -20 "$work/bless.log"; exit 1; }
grep '^test fma::' "$work/bless.log" | cut -c1-200
sed -i 's/#define ITERS 100/#define ITERS 102/' "$work/suites/fma.cu"
caught=0
for i in 1 2 3; do
  ./.gpu/perf > "$work/run$i.log" 2>&1
  status=$?
  line=$(grep -m1 'instructions grew' "$work/run$i.log")
  echo "run $i: exit $status: $line"
  [ "$status" -eq 1 ] && [ -n "$line" ] && caught=$((caught + 1))
done
echo "caught in $caught of 3 runs"
