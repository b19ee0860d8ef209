#!/usr/bin/env python3
"""Runs one golden run: a shipped scenario's base run (NAME), or one point of
its sweep (NAME = SCENARIO@LABEL, listed in tests/golden_points.json: per
sweep axis, the value of the point, whose settings are passed as --set, and
optionally "set": more config values, passed as --set after them).

  scripts/golden-point.py CLI NAME OUT_DIR

Used by scripts/update-golden.sh and the golden test
(tests/integration/golden_test.cc). Exits as `smmu-vp run` does.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_args(name):
    if "@" not in name:
        return os.path.join(ROOT, "platform", "scenarios", name + ".json"), []
    points = json.load(open(os.path.join(ROOT, "tests", "golden_points.json")))
    if name not in points:
        sys.exit(f"golden-point: {name} is not in tests/golden_points.json")
    entry = points[name]
    scenario = os.path.join(ROOT, "platform", "scenarios", entry["scenario"] + ".json")
    axes = {a["name"]: a["values"] for a in json.load(open(scenario))["sweep"]["axes"]}
    sets = []
    for axis, label in entry["point"].items():
        if axis not in axes or label not in axes[axis]:
            sys.exit(f"golden-point: {name}: the sweep of {entry['scenario']} has no {axis} = {label}")
        for path, value in axes[axis][label].items():
            sets += ["--set", f"{path}={json.dumps(value)}"]
    # Settings no sweep axis reaches (an option's non-default rule), after the point's.
    extra = entry.get("set", {})
    if not isinstance(extra, dict):
        sys.exit(f"golden-point: {name}: \"set\" must map config paths to values")
    for path, value in extra.items():
        sets += ["--set", f"{path}={json.dumps(value)}"]
    return scenario, sets


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cli, name, out = sys.argv[1:]
    scenario, sets = run_args(name)
    sys.exit(subprocess.run([cli, "run", scenario, "--quiet", "--out", out] + sets).returncode)


if __name__ == "__main__":
    main()
