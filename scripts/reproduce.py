#!/usr/bin/python3
"""Reproduces every seed figure of docs/figures.json into a Markdown report with plots.

Runs each seed scenario with the command docs/results.md gives (`smmu-vp sweep
FILE` or `smmu-vp run FILE`), two processes at a time, compares each figure
with its published value and target band, runs each figure's sensitivity study
(its parameters scaled down and up by the factor) and writes OUT/report.md with
its plots beside it. Exit status: 0 when every run completed (figures outside
their band are findings, not failures), 1 when a run failed, 2 on bad input.

  /usr/bin/python3 scripts/reproduce.py [--cli build/smmu-vp] [--out build/reproduce]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from repro.common import ROOT, InputError, require_matplotlib  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "smmu-vp"),
                    help="the smmu-vp binary (default: build/smmu-vp of this checkout)")
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures.json"),
                    help="figure definitions (default: docs/figures.json)")
    ap.add_argument("--results-doc", default=os.path.join(ROOT, "docs", "results.md"),
                    help="the document whose sections explain the figures (default: docs/results.md)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "reproduce"),
                    help="output directory for report.md, plots and runs (default: build/reproduce)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="simulator processes at once (default 2)")
    ap.add_argument("--factor", type=float, help="sensitivity factor (default: the figures file's, else 0.5)")
    ap.add_argument("--no-sensitivity", action="store_true", help="skip the sensitivity studies")
    ap.add_argument("--only", nargs="*", metavar="ID", help="only these figure ids")
    ap.add_argument("--before", metavar="FILE",
                    help="an earlier run's figures_measured.json (OUT/figures_measured.json, written by every "
                         "run): the report adds its values and counts beside this run's and lists the figures "
                         "that entered or left their band and those whose direction verdict changed")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    require_matplotlib()
    from repro import reproduction
    start = time.monotonic()
    try:
        failed = reproduction.reproduce(args, start)
    except InputError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
