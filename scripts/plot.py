#!/usr/bin/python3
"""Plots of smmu-vp results (PNG and SVG, and the plotted data as CSV beside each).

  /usr/bin/python3 scripts/plot.py sweep DIR [--column TITLE ...] [--x AXIS] [--figures docs/figures.json] [--out DIR]
      DIR is `smmu-vp sweep FILE --out DIR`'s output: one plot per column (default: every
      column), a line per series over a numeric axis or a bar group over a categorical one,
      with the seed's published values of docs/figures.json overlaid as stars.
  /usr/bin/python3 scripts/plot.py run STATS.json [--out DIR]
      one run: the latency percentiles of every stats.json histogram with samples (a bar per
      recorded percentile, min, p50, p90, p99, p99.9 and max, and a CDF through those six
      points; stats.json keeps no bins, so there is no true histogram to draw), per-core
      utilisation, TLB hit rate per StreamID.

Exit status 2 on bad input, naming the file and the field.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from repro.common import ROOT, InputError, require_matplotlib  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sw = sub.add_parser("sweep", help="plot a sweep's output directory")
    sw.add_argument("dir", help="the directory given to smmu-vp sweep --out")
    sw.add_argument("--column", action="append", help="a column title (repeatable; default: all)")
    sw.add_argument("--x", help="the axis on x (default: the last numeric axis, else the last)")
    sw.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures.json"),
                    help="published values to overlay (default: docs/figures.json; 'none' for none)")
    sw.add_argument("--out", help="output directory (default: DIR/plots)")
    rn = sub.add_parser("run", help="plot one run's stats.json")
    rn.add_argument("stats", help="a run's stats.json")
    rn.add_argument("--out", help="output directory (default: plots/ beside stats.json)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    require_matplotlib()
    from repro import plot_commands
    try:
        made = plot_commands.sweep(args) if args.command == "sweep" else plot_commands.run(args)
    except InputError as e:
        print(f"plot: {e}", file=sys.stderr)
        return 2
    for base in made:
        print(f"{base}.png {base}.svg {base}.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
