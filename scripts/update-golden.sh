#!/usr/bin/env bash
# Regenerates the golden results (tests/golden/<scenario>.json): the stats.json
# of every shipped scenario's base run, and of the sweep points listed in
# tests/golden_points.json (tests/golden/<scenario>@<label>.json), without the
# wall-clock section. The
# golden test (tests/integration/golden_test.cc) fails when a simulated value
# moves; run this only when a change is meant to move them, and say which
# values moved and why in the commit.
#   scripts/update-golden.sh [BUILD_DIR] [scenario-name ...]     (default: build, all)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
shift || true
cli="$root/$build/smmu-vp"
[ -x "$cli" ] || { echo "update-golden: $cli not built (make build)" >&2; exit 2; }
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in "$root"/platform/scenarios/*.json; do
    # A scenario without apps (firmware.json) needs a --firmware: nothing to keep.
    grep -q '"apps"' "$f" && names+=("$(basename "$f" .json)")
  done
  # And the sweep points kept as golden runs (tests/golden_points.json).
  while IFS= read -r p; do names+=("$p"); done < <(python3 -c 'import json,sys; print("\n".join(k for k in json.load(open(sys.argv[1])) if not k.startswith("_")))' "$root/tests/golden_points.json")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$root/tests/golden"
for n in "${names[@]}"; do
  python3 "$root/scripts/golden-point.py" "$cli" "$n" "$tmp/$n" > /dev/null 2> "$tmp/$n.err" || true
  [ -f "$tmp/$n/stats.json" ] || { echo "update-golden: $n wrote no stats.json:" >&2; cat "$tmp/$n.err" >&2; exit 1; }
  python3 - "$tmp/$n/stats.json" "$root/tests/golden/$n.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s.pop("wallclock", None)
with open(sys.argv[2], "w") as f:
    json.dump(s, f, indent=1, sort_keys=True)
    f.write("\n")
PY
  echo "updated tests/golden/$n.json"
done
