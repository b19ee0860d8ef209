#!/usr/bin/env bash
# Runs every libFuzzer harness of a fuzz build (make fuzz / make fuzz-smoke)
# for SECONDS each, on a copy of its committed corpus (tests/fuzz/corpus/)
# kept in the build directory, with its dictionary when it has one; prints
# executions and exec/s per harness and the totals; fails on any crash.
# Usage: run-fuzz.sh BUILD_DIR SECONDS [harness...]
# FUZZ_RUNS=N (environment): run each harness for N executions instead (the
# campaign: FUZZ_RUNS=10000000); SECONDS then only bounds each one (0: none).
set -uo pipefail
build=${1:?build dir}
secs=${2:?seconds}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in "$build"/fuzz/fuzz_*; do harnesses+=("$(basename "$f")"); done
fi
mkdir -p "$build/fuzz-corpus" "$build/fuzz-artifacts" "$build/fuzz-logs"
failed=()
total_runs=0
printf '%-24s %12s %10s %8s\n' harness executions exec/s result
case "${FUZZ_RUNS:-}" in ''|*[!0-9]*) [ -z "${FUZZ_RUNS:-}" ] || { echo "run-fuzz: FUZZ_RUNS must be a number of executions, not '$FUZZ_RUNS'" >&2; exit 2; } ;; esac
for h in "${harnesses[@]}"; do
  corpus="$build/fuzz-corpus/$h"
  mkdir -p "$corpus"
  # New inputs found by earlier runs stay in the build directory's copy;
  # the committed corpus stays small.
  [ -d "$src/tests/fuzz/corpus/$h" ] && cp -n "$src/tests/fuzz/corpus/$h"/* "$corpus"/ 2>/dev/null
  args=(-print_final_stats=1 -timeout=30 -rss_limit_mb=2048 -artifact_prefix="$build/fuzz-artifacts/$h-")
  [ "$secs" != 0 ] && args+=(-max_total_time="$secs")
  [ -n "${FUZZ_RUNS:-}" ] && args+=(-runs="$FUZZ_RUNS")
  [ -f "$src/tests/fuzz/dict/$h.dict" ] && args+=(-dict="$src/tests/fuzz/dict/$h.dict")
  log="$build/fuzz-logs/$h.log"
  start=$(date +%s.%N)
  "$build/fuzz/$h" "${args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  runs=${runs:-0}
  rate=$(awk -v r="$runs" -v a="$start" -v b="$end" 'BEGIN { printf "%d", r / (b - a) }')
  result=ok
  if [ $rc -ne 0 ]; then
    result="CRASH (rc $rc, see $log)"
    failed+=("$h")
  fi
  total_runs=$((total_runs + runs))
  printf '%-24s %12s %10s %8s\n' "$h" "$runs" "$rate" "$result"
  grep -h '^fuzz_smmu_translate: level 3' "$log" | tail -1
done
printf '%-24s %12s\n' total "$total_runs"
if [ ${#failed[@]} -ne 0 ]; then
  echo "run-fuzz: crashes in: ${failed[*]} (inputs in $build/fuzz-artifacts/)" >&2
  exit 1
fi
