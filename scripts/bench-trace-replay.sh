#!/usr/bin/env bash
# Replay cost against trace length: records the NVMe fio scenario (two drives,
# 4 KiB random reads, two cores) for 2, 8 and 32 ms of run time, replays
# each trace (trace_replay, as fast as possible, and timed) and prints records,
# wall seconds and records per wall second from each replay's wallclock
# section (stats.json). A linear replay keeps records/s flat.
#
#   scripts/bench-trace-replay.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli="$root/${1:-build}/smmu-vp"
[ -x "$cli" ] || { echo "bench-trace-replay: $cli not built (make build)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '| runtime | records | timing | replay wall s | records/s | simulated ms |\n|---:|---:|---|---:|---:|---:|\n'
for us in 2000 8000 32000; do
  "$cli" run "$root/platform/scenarios/seed001_fio_4nvme.json" --quiet --out "$work/rec" \
    --set 'scenario.apps.0.cores=[0,1]' --set scenario.apps.0.params.drives=2 \
    --set scenario.apps.0.params.bs=4096 --set scenario.apps.0.params.sync_each_page=0 \
    --set scenario.apps.0.params.map_sg=1 --set scenario.apps.0.params.cmdq=1 \
    --set scenario.apps.0.params.warmup_us=200 --set scenario.apps.0.params.runtime_us=$us \
    --record-trace "$work/t.trace" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
  for timing in asap timed; do
    "$cli" run "$root/platform/scenarios/trace_replay.json" --quiet --out "$work/rep" \
      --set platform.devices.player0.trace="$work/t.trace" --set scenario.apps.0.params.timing=$timing \
      > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
    python3 - "$work/rep/stats.json" "$us" "$timing" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
recs = s["sw"]["trace_replay"]["records"]
wall = s["wallclock"]["elapsed_seconds"]
print(f"| {sys.argv[2]} us | {recs:.0f} | {sys.argv[3]} | {wall:.3f} | {recs / wall:,.0f} | {s['run']['simulated_time_ns'] / 1e6:.3f} |")
PY
  done
done
