#!/usr/bin/env bash
# What a run costs, on a GPU (issue 22): the example suites twice with a warm compile cache,
# once more with KERNELGATE_PROFILE=1, and a 400-trial saxpy sweep (200 sizes x 2 kernels,
# generated into a temporary folder), each with its closing lines, its process wall time, and
# the GPU's persistence mode and clocks just before it. Run from the repository root with the
# perf binary at ./.gpu/perf (../shared/gpu-bundle.sh), or PERF=path/to/perf.
set -uo pipefail
perf=${PERF:-./.gpu/perf}
[ -x "$perf" ] || { echo "no perf binary at $perf (build it with ../shared/gpu-bundle.sh)" >&2; exit 2; }
work=$(mktemp -d)

gpu_state() {
  nvidia-smi --query-gpu=name,persistence_mode,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' || echo "gpu: (nvidia-smi not available)"
}

# run LABEL [VAR=VALUE...]: one run of the perf binary with the variables given; prints the GPU
# state before it, the process wall time, the exit status and the closing lines.
run() {
  local label=$1
  shift
  echo "== $label"
  gpu_state
  local log="$work/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '-').log"
  local t0 t1
  t0=$(date +%s.%N)
  env "$@" "$perf" > "$log" 2>&1
  local status=$?
  t1=$(date +%s.%N)
  echo "process wall $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s, exit $status (log: $log)"
  grep '^kernelgate:' "$log" | grep -v 'WARNING' | cut -c1-400
}

# The example suites: the first run fills the compile cache and is not quoted.
run "example suites, filling the compile cache (not quoted)" KERNELGATE_RESULTS="$work/warm.json" > /dev/null
run "example suites, warm cache, run 1" KERNELGATE_RESULTS="$work/run1.json"
run "example suites, warm cache, run 2" KERNELGATE_RESULTS="$work/run2.json"
run "example suites, warm cache, KERNELGATE_PROFILE=1" KERNELGATE_PROFILE=1 KERNELGATE_RESULTS="$work/profile.json"
# Every trial's hardware counters read too (after all timing): what issue 16's evidence costs
# when asked for everywhere (the default, auto, reads them only where a verdict needs them).
run "example suites, warm cache, KERNELGATE_COUNTERS=all" KERNELGATE_COUNTERS=all KERNELGATE_RESULTS="$work/counters.json"

# The sweep: saxpy's two kernels over 200 sizes from 2^12 to 2^24, spaced evenly in log,
# without baselines (every trial passes with "no baseline": timing, not judging, is measured).
mkdir -p "$work/sweep/saxpy" "$work/sweep-baselines"
cp suites/saxpy/saxpy.cu "$work/sweep/saxpy/"
sizes=$(python3 -c 'print(", ".join(str(round(4096 * 4096 ** (i / 199))) for i in range(200)))')
sed -e "s/^sizes = .*/sizes = { n = [$sizes] }/" -e 's/^name = "saxpy"/name = "sweep"/' \
  suites/saxpy.toml > "$work/sweep/sweep.toml"
sweep=(KERNELGATE_SUITES="$work/sweep" KERNELGATE_BASELINES="$work/sweep-baselines")
run "saxpy sweep, filling the compile cache (not quoted)" "${sweep[@]}" > /dev/null
run "saxpy sweep, 400 trials" "${sweep[@]}" KERNELGATE_RESULTS="$work/sweep.json"
run "saxpy sweep, 400 trials, KERNELGATE_COUNTERS=all" "${sweep[@]}" KERNELGATE_COUNTERS=all KERNELGATE_RESULTS="$work/sweep-counters.json"

# Checks that must still fail, now that the reference's outputs stay on the device: a
# tolerance that cannot fail (the vacuous test, on the device), and timed launches that skip
# work (docs/timing-integrity.md: launch_counter fails, the others pass).
mkdir -p "$work/vacuous"
cp -r suites/saxpy suites/saxpy.toml "$work/vacuous/"
sed -i 's/^atol = 1e-6/atol = 10.0/' "$work/vacuous/saxpy.toml"
echo "== must fail: saxpy with atol = 10 (every kernel trial: 'cannot fail: an output of all zeros')"
KERNELGATE_SUITES="$work/vacuous" KERNELGATE_BASELINES="$work/none" "$perf" > "$work/vacuous.log" 2>&1
echo "exit $? (101 expected); $(grep -c 'cannot fail: an output of all zeros' "$work/vacuous.log") message(s)"
grep -m1 -o 'the check of output `y` cannot fail[^;]*' "$work/vacuous.log"
# must_fail NAME SUITES EXPECTED TESTS MESSAGE: the fixture in SUITES without baselines, its
# exit status beside EXPECTED, its trial lines matching TESTS and the first MESSAGE.
must_fail() {
  local name=$1 suites=$2 expected=$3 tests=$4 message=$5
  KERNELGATE_SUITES="$suites" KERNELGATE_BASELINES="$work/none" "$perf" > "$work/$name.log" 2>&1
  echo "exit $? ($expected)"
  grep -E "$tests" "$work/$name.log" | cut -c1-160
  grep -m1 -o "$message" "$work/$name.log"
}
echo "== must fail: the integrity fixture's launch_counter (timed launches skip work)"
must_fail integrity tests/fixtures/integrity "101 expected" '^test integrity::' \
  'the timed launches computed something else[^(]*'
echo "== must fail: an accumulating histogram with its bins declared role = \"output\" (the second poison, compared with the reference's outputs kept on the device)"
must_fail accumulate tests/fixtures/accumulate \
  "2 expected: every accout trial fails, every accinout trial passes" '^test acc(out|inout)::' \
  'output `bins` depends on what it held before[^(]*'
echo "== must fail: a kernel that keeps results keyed on its inputs (the memo probe, whose seen launches are the timed ones in the cold regime)"
must_fail memo tests/fixtures/memo "101 expected: memo4 fails, twin passes" '^test memo::' \
  'kernel `memo4` is faster on inputs it has seen[^(]*'

# The profile's parts, from the results files (seconds).
python3 - "$work" <<'PY'
import json, sys, os
keys = ["wall_seconds", "load_seconds", "first_gpu_work_seconds", "worker_start_seconds",
        "context_seconds", "worker_wait_seconds", "compile_seconds", "floor_probe_seconds",
        "setup_seconds", "check_seconds", "copies_seconds", "warmup_seconds", "sampled_seconds",
        "kernel_seconds", "timed_check_seconds", "trials_seconds", "counter_seconds",
        "judge_seconds", "report_seconds"]
names = ["run1", "run2", "profile", "counters", "sweep"]
files = {n: os.path.join(sys.argv[1], n + ".json") for n in names}
totals = {n: (json.load(open(f)).get("totals") or {}) for n, f in files.items() if os.path.exists(f)}
print(f"{'== totals (s)':<24}" + "".join(f"{n:>10}" for n in totals))
for k in keys:
    cells = []
    for n in totals:
        v = totals[n].get(k)
        cells.append(f"{v:10.3f}" if isinstance(v, (int, float)) else f"{'-':>10}")
    print(f"{k:<24}" + "".join(cells))
p = totals.get("profile", {}).get("sampling_profile")
if p:
    print("sampling profile:", json.dumps(p))
PY
echo "logs and results files: $work"
