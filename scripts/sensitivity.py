#!/usr/bin/python3
"""Sensitivity of a result figure to platform parameters, ranked, with a tornado chart.

Each parameter is scaled down and up by the factor (default 0.5: x0.5 and x1.5)
with `--set`, on every sweep point the figure reads, and the parameters are
ranked by the larger change of the figure either way.

  # a figure of docs/figures.json, with its own parameter list:
  /usr/bin/python3 scripts/sensitivity.py --figure s001_nic_v53
  # the same figure against every timing parameter and cost class of the platform:
  /usr/bin/python3 scripts/sensitivity.py --figure s001_nic_v53 --all-params
  # any scenario and column, given parameters:
  /usr/bin/python3 scripts/sensitivity.py --scenario seed003_lazy_gather --point '1 (baseline)' \\
      --column Gbit/s --param platform.cpu.costs.memcpy_64b --param platform.cpu.frequency_mhz

Writes OUT/tornado_NAME.{png,svg,csv} and prints the ranking. Exit 1 when a run fails, 2 on bad input.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from repro.common import ROOT, InputError, require_matplotlib  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "smmu-vp"), help="the smmu-vp binary")
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures.json"), help="figure definitions")
    ap.add_argument("--figure", help="a figure id of the figures file")
    ap.add_argument("--scenario", help="instead of --figure: a scenario name of platform/scenarios/")
    ap.add_argument("--point", help="with --scenario: the sweep point's label (one-axis sweeps)")
    ap.add_argument("--column", help="with --scenario: a column of its sweep")
    ap.add_argument("--stat", help="with --scenario without a sweep: a stats.json path")
    ap.add_argument("--param", action="append", help="a dotted parameter path (repeatable)")
    ap.add_argument("--all-params", action="store_true",
                    help="every cost class and *_ns/_cycles/_mhz/_gbps parameter of the platform")
    ap.add_argument("--factor", type=float, default=0.5, help="relative change down and up (default 0.5)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="simulator processes at once (default 2)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "sensitivity"), help="output directory")
    return ap.parse_args(argv)


def make_figure(args):
    from repro import figures
    if args.figure:
        figs = figures.load_figures(args.figures)
        for fig in figs["figures"]:
            if fig["id"] == args.figure:
                return fig, figs["scenarios"][fig["scenario"]]
        raise InputError(f"{args.figures}: no figure '{args.figure}'")
    if not args.scenario:
        raise InputError("name a --figure, or a --scenario with --column/--stat")
    from repro.common import load_json
    scenario = load_json(figures.scenario_path(args.scenario))
    term = {"point": args.point, "column": args.column} if "sweep" in scenario else {"stat": args.stat}
    fig = {"id": f"{args.scenario}_{args.column or args.stat}", "description": args.column or args.stat,
           "unit": "", "scenario": args.scenario, "measure": {"kind": "value", "terms": [term]}}
    figures.check_measure(fig, scenario, "command line")
    return fig, scenario


def main(argv=None):
    args = parse_args(argv)
    require_matplotlib()
    from repro import figures, plots, runner
    from repro.sensitivity import Study
    try:
        fig, scenario = make_figure(args)
        params = [] if args.all_params else (args.param or fig.get("sensitivity", []))
        if not params and not args.all_params:
            raise InputError("no parameters: give --param or --all-params")
        study = Study(fig, scenario, figures.scenario_path(fig["scenario"]), args.cli,
                      os.path.join(args.out, "runs"), params, args.factor)
        jobs = runner.run_all(study.base_jobs(), args.jobs)
        if any(j.returncode for j in jobs):
            print(f"sensitivity: the base run failed (log {jobs[0].log})", file=sys.stderr)
            return 1
        study.read_base_parameters()
        failed = [j for j in runner.run_all(study.variation_jobs(), args.jobs) if j.returncode]
        if failed:
            print(f"sensitivity: {len(failed)} runs failed, e.g. log {failed[0].log}", file=sys.stderr)
            return 1
        base_value, rows = study.base_value(), study.ranking()
    except InputError as e:
        print(f"sensitivity: {e}", file=sys.stderr)
        return 2
    base = os.path.join(args.out, f"tornado_{plots.slug(fig['id'])}")
    plots.tornado(fig["id"], base_value, rows, fig["unit"], base)
    print(f"{fig['id']}: {base_value:.6g} {fig['unit']} at the base values; x{1 - args.factor:g} / x{1 + args.factor:g}:")
    for param, low, high, f_low, f_high in rows:
        print(f"  {param:45s} {low:>10g} -> {f_low:<12.6g} {high:>10g} -> {f_high:.6g}")
    print(f"{base}.png {base}.svg {base}.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
