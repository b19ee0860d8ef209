# What the distributed-sweep tests share (sourced by parallel_sweep.sh and
# slurm_sweep.sh): a small sweep, its local run, and the comparison of a
# collected plan with the local runner's results.

# fail MESSAGE: the test's verdict, on stderr, and exit 1.
fail() {
  echo "$test_name: FAIL: $*" >&2
  exit 1
}

# need COMMAND PACKAGE: fails naming the Debian package when COMMAND is absent.
need() {
  command -v "$1" >/dev/null || fail "$1 not found: install the Debian package $2 (scripts/install-deps.sh installs it)"
}

# write_sweep SOURCE_DIR FILE: smmu_stress at two policies and two core
# counts, a few iterations per core, so that each point takes milliseconds.
write_sweep() {
  cat >"$2" <<JSON
{"platform": "$1/platform/platforms/base.json",
 "scenario": {"apps": [{"app": "smmu_stress", "cores": [0], "params": {"iterations": 5}}]},
 "sweep": {
  "title": "distributed two by two",
  "axes": [
    {"name": "policy", "values": {"poll": {"scenario.apps.0.params.sync": 0},
                                  "msi cmd": {"scenario.apps.0.params.sync": 2}}},
    {"name": "cores", "values": {"1": {"platform.cpu.count": 1, "scenario.apps.0.cores": [0]},
                                 "2": {"platform.cpu.count": 2, "scenario.apps.0.cores": [0, 1]}}}],
  "columns": [
    {"title": "invalidations", "stat": "sw.smmu_stress.invalidations"},
    {"title": "inv p50", "stat": "sw.smmu_stress.invalidation_ns", "field": "p50", "unit": "ns", "digits": 1},
    {"title": "syncs/inv", "ratio": ["sw.smmu_stress.syncs", "sw.smmu_stress.invalidations"], "digits": 3}]}}
JSON
}

# same_results LOCAL_OUT PLAN_DIR: the collected table, sweep.csv, sweep.json
# and every point's stats.json and config.json equal the local runner's,
# outside the "wallclock" sections.
same_results() {
  python3 - "$1" "$2" <<'PY' || fail "the collected results differ from the local runner's (above)"
import json, os, sys
local, plan = sys.argv[1], sys.argv[2]
def load(*p):
    with open(os.path.join(*p)) as f:
        j = json.load(f)
    j.pop("wallclock", None)
    return j
bad = []
if open(os.path.join(local, "sweep.csv")).read() != open(os.path.join(plan, "sweep.csv")).read():
    bad.append("sweep.csv")
sl, sp = load(local, "sweep.json"), load(plan, "sweep.json")
if sl != sp:
    bad.append("sweep.json")
for point in sl["points"]:
    for f in ("stats.json", "config.json"):
        if load(local, point["dir"], f) != load(plan, point["dir"], f):
            bad.append(point["dir"] + "/" + f)
for b in bad:
    print("differs: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
