"""The subcommands of scripts/plot.py."""
import os

from . import figures, plots, sweepdata
from .common import InputError, load_json, lookup


def published_overlay(figures_path, data, title, x_axis):
    """{(series, x label): published} of the 'value' figures reading this sweep's column."""
    if figures_path == "none" or not os.path.exists(figures_path):
        return {}
    figs = figures.load_figures(figures_path)
    axes = data["sweep"]["axes"]
    out = {}
    for fig in figs["figures"]:
        if fig["scenario"] != data["name"] or fig["measure"]["kind"] != "value" or fig.get("published") is None:
            continue
        term = fig["measure"]["terms"][0]
        if term.get("column") == title:
            out[(sweepdata.series_name(term["labels"], axes, x_axis, title), term["labels"][x_axis])] = \
                fig["published"]
    return out


def sweep(args):
    data = sweepdata.read_sweep(args.dir)
    x_axis = sweepdata.choose_x_axis(data["sweep"]["axes"], args.x)
    titles = args.column or [c["title"] for c in data["sweep"]["columns"]]
    out = args.out or os.path.join(args.dir, "plots")
    made = []
    for title in titles:
        sweepdata.column_by_title(data, title)
        base = os.path.join(out, f"{data['name']}_{plots.slug(title)}")
        plots.sweep_column(data, title, x_axis, published_overlay(args.figures, data, title, x_axis), base)
        made.append(base)
    return made


def histograms(stats, prefix=""):
    """{dotted name: histogram} of every histogram with samples (count and percentiles)."""
    out = {}
    for key, value in stats.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and "p50" in value and "count" in value:
            if value["count"] and value.get("unit") == "ns":
                out[name] = value
        elif isinstance(value, dict) and key != "wallclock":
            out.update(histograms(value, name + "."))
    return out


def run(args):
    stats = load_json(args.stats)
    where = args.stats
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.stats)), "plots")
    made = []
    for name, hist in sorted(histograms(stats).items()):
        for key in ("min", "p50", "p90", "p99", "p999", "max"):
            if key not in hist:
                raise InputError(f"{where}: histogram '{name}' has no '{key}'")
        base = os.path.join(out, f"latency_percentiles_{plots.slug(name)}")
        plots.percentile_profile(name, hist, base)
        made.append(base)
    cpus = lookup(stats, "cpus", where)
    names = sorted(cpus, key=lambda c: int(c[3:]) if c[3:].isdigit() else 0)
    util = [100.0 * float(lookup(cpus[c], "utilisation", f"{where}: cpus.{c}")) for c in names]
    base = os.path.join(out, "cpu_utilisation")
    plots.bars("busy share of the run per core", names, util, "utilisation (%)", base, ["cpu", "utilisation_pct"])
    made.append(base)
    by_sid = lookup(stats, "smmu.tlb", where).get("by_sid", {})
    sids = sorted(by_sid, key=int)
    rates = []
    for sid in sids:
        hits = float(lookup(by_sid[sid], "hits", f"{where}: smmu.tlb.by_sid.{sid}"))
        lookups = float(lookup(by_sid[sid], "lookups", f"{where}: smmu.tlb.by_sid.{sid}"))
        rates.append(100.0 * hits / lookups if lookups else 0.0)
    base = os.path.join(out, "tlb_hit_rate_by_sid")
    plots.bars("SMMU TLB hit rate per StreamID", [f"sid {s}" for s in sids], rates, "hit rate (%)", base,
               ["stream_id", "hit_rate_pct"])
    made.append(base)
    return made
