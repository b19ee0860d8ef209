#!/usr/bin/env bash
# Checks that the results hal_poll*'s sleeping moves (platform.cpu.poll_sleep,
# docs/architecture.md "Polling") move only through the order of events due
# at the same picosecond. For each scenario: runs it with poll_sleep false
# and true under a build that logs every core-side event (shared-log.patch:
# loads, stores and atomics, MMIO accesses, interrupts, polls and the loads
# they make, DRAM writes onto polled words), finds the first simulated time
# at which the two runs differ and names the same-picosecond tie behind it
# (first-divergence.py). Address-space randomisation is turned off so that
# the two logs name the same host addresses.
#   git apply scripts/poll-tie-check/shared-log.patch && make build
#   scripts/poll-tie-check/run.sh [BUILD_DIR] [scenario-name ...]   (default: build, every golden one)
#   git apply -R scripts/poll-tie-check/shared-log.patch
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$root"/tests/golden/*.json; do names+=("$(basename "$f" .json)"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in "${names[@]}"; do
  for sleep in false true; do
    SMMU_VP_SHARED_LOG="$tmp/$n.$sleep.log" setarch "$(uname -m)" -R "$root/$build/smmu-vp" run \
      "$root/platform/scenarios/$n.json" --quiet --out "$tmp/$n.$sleep" --set platform.cpu.poll_sleep=$sleep \
      > /dev/null 2>&1 || true
  done
  echo "=== $n"
  python3 "$here/first-divergence.py" "$tmp/$n.false.log" "$tmp/$n.true.log" | grep -v '^--\|^   t='
  rm -f "$tmp/$n".*.log
done
