#!/usr/bin/env python3
"""Re-runs every sweep docs/results.md shows and replaces its table.

A table is refreshed when the doc has a code block holding exactly the line
`build/smmu-vp sweep platform/scenarios/NAME.json --format markdown` and the
next markdown table after it (before the next heading) is that sweep's. The
text around the tables is not touched: read the diff and fix any figure the
prose quotes.

  scripts/update-results-tables.py [--cli build/smmu-vp] [--doc docs/results.md] [NAME ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_sweep(cli, name):
    with tempfile.TemporaryDirectory() as out:
        cmd = [cli, "sweep", os.path.join(ROOT, "platform", "scenarios", name + ".json"),
               "--format", "markdown", "--out", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: the sweep failed (exit {r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return [l for l in r.stdout.splitlines() if l.startswith("|")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "smmu-vp"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "results.md"))
    ap.add_argument("names", nargs="*", help="only these scenarios")
    a = ap.parse_args()
    lines = open(a.doc).read().split("\n")
    pattern = re.compile(r"^build/smmu-vp sweep platform/scenarios/([\w.-]+)\.json --format markdown$")
    i, done = 0, []
    while i < len(lines):
        m = pattern.match(lines[i].strip())
        if not m or (a.names and m.group(1) not in a.names):
            i += 1
            continue
        name = m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("|") and not lines[j].startswith("#"):
            j += 1
        if j >= len(lines) or lines[j].startswith("#"):
            sys.exit(f"{name}: no table after its command in {a.doc}")
        k = j
        while k < len(lines) and lines[k].startswith("|"):
            k += 1
        table = run_sweep(a.cli, name)
        lines[j:k] = table
        done.append(name)
        print(f"updated {name} ({len(table) - 2} rows)", file=sys.stderr)
        i = j + len(table)
    open(a.doc, "w").write("\n".join(lines))
    if a.names and set(a.names) - set(done):
        sys.exit(f"not found in {a.doc}: {', '.join(sorted(set(a.names) - set(done)))}")


if __name__ == "__main__":
    main()
