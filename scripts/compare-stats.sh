#!/usr/bin/env bash
# Runs every shipped scenario (or those named) in two source trees, each with
# its own build/smmu-vp and its own platform/scenarios, and compares their
# stats.json outside the wall-clock section: a refactoring or speed change
# must leave every simulated value as it was.
#   git worktree add --detach ../before HEAD~1 && (cd ../before && make build)
#   scripts/compare-stats.sh ../before . [scenario-name ...]
# Keys only the new binary has are listed, not failed (new statistics).
# Exit 1 when a value differs or a key disappeared.
set -euo pipefail
cd "$(dirname "$0")/.."
old_tree=$(cd "${1:?usage: compare-stats.sh OLD_TREE NEW_TREE [scenario-name ...]}" && pwd)
new_tree=$(cd "${2:?usage: compare-stats.sh OLD_TREE NEW_TREE [scenario-name ...]}" && pwd)
shift 2
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  for f in "$old_tree"/platform/scenarios/*.json; do scenarios+=("$(basename "$f" .json)"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for name in "${scenarios[@]}"; do
  s=platform/scenarios/$name.json
  # Sweep files run their base point; firmware scenarios need a --firmware.
  if grep -q '"app": *"firmware"' "$old_tree/$s" 2>/dev/null; then echo "skip  $name (needs --firmware)"; continue; fi
  for side in old new; do
    tree=${side}_tree
    if ! "${!tree}/build/smmu-vp" run "${!tree}/$s" --out "$tmp/$side-$name" >"$tmp/$side-$name.log" 2>&1 &&
       [ ! -f "$tmp/$side-$name/stats.json" ]; then
      echo "FAIL  $name: the $side run wrote no stats.json:"; tail -3 "$tmp/$side-$name.log"; status=1; continue 2
    fi
  done
  if python3 - "$tmp/old-$name/stats.json" "$tmp/new-$name/stats.json" "$name" <<'PY'
import json, sys
def flat(d, p=""):
    out = {}
    items = d.items() if isinstance(d, dict) else enumerate(d)
    for k, v in items:
        q = f"{p}.{k}" if p else str(k)
        if isinstance(v, (dict, list)) and v: out.update(flat(v, q))
        else: out[q] = v
    return out
a, b = (flat({k: v for k, v in json.load(open(f)).items() if k != "wallclock"}) for f in sys.argv[1:3])
diff = [k for k in a if k in b and a[k] != b[k]]
gone = [k for k in a if k not in b]
new = [k for k in b if k not in a]
name = sys.argv[3]
if diff or gone:
    print(f"DIFF  {name}: {len(diff)} values differ, {len(gone)} keys gone")
    for k in (diff + gone)[:15]: print(f"      {k}: {a.get(k)} -> {b.get(k, '(gone)')}")
    sys.exit(1)
print(f"same  {name} ({len(a)} values; {len(new)} new keys{': ' + ', '.join(sorted(set(k.split('.')[0] for k in new))) if new else ''})")
PY
  then :; else status=1; fi
done
exit $status
