"""OUT/report.md: the figures against the seeds, the sweep plots and the sensitivity studies."""
import json
import math
import os

from . import directions, figures, plots
from .common import InputError
from .sensitivity import effect


def fmt(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value == 0:
        return "0"
    digits = max(0, 3 - int(math.floor(math.log10(abs(value)))))
    return f"{value:,.{min(digits, 3)}f}"


def band_text(fig):
    low, high = figures.band_limits(fig)
    if low is not None and high is not None:
        return f"{fmt(low)} - {fmt(high)}"
    return f">= {fmt(low)}" if low is not None else f"<= {fmt(high)}"


def ratio(fig, value):
    pub = fig.get("published")
    if value is None or not pub or math.isnan(value):
        return None
    return value / pub


def link(args, fig):
    rel = os.path.relpath(args.results_doc, args.out)
    return f"[{fig['section'].split(':')[0]}]({rel}#{figures.github_anchor(fig['section'])})"


def summary_table(args, figs, values, before=None):
    """The figures table; with `before` (load_before's), a column of the earlier run's values."""
    was = "before | " if before else ""
    lines = [f"| figure | role | seed | what | published | {was}measured | ratio | band | in band | direction | why |",
             "|---|---|---|---|---:|" + ("---:|" if before else "") + "---:|---:|---|---|---|---|"]
    ways = directions.verdicts(figs, values)
    for fig in figs["figures"]:
        value = values[fig["id"]]
        pub = fig.get("published_text") if fig.get("published") is None else f"{fmt(fig['published'])} {fig['unit']}"
        r = ratio(fig, value)
        mark = "yes" if figures.in_band(fig, value) else "**no**"
        then = ""
        if before:
            old = before["figures"].get(fig["id"])
            then = "-" if old is None else f"{fmt(old['value'])} {fig['unit']}" + (
                f" ({old['role']})" if old["role"] != fig["role"] else "")
            then += " | "
        lines.append(f"| `{fig['id']}` | {fig['role']} | {fig['seed']} | {fig['description']} | {pub} | "
                     f"{then}{fmt(value)} {fig['unit']} | {fmt(r)} | {band_text(fig)} | {mark} | "
                     f"{direction_text(fig, ways)} | {link(args, fig)} |")
    return lines


def direction_text(fig, ways):
    """The direction cell: the verdict with the model's distance from its reference, or '-'."""
    if fig["id"] not in ways:
        return "-"
    verdict, effect = ways[fig["id"]]
    d = fig["direction"]
    ref = f"`{d['against']}`" if isinstance(d["against"], str) else fmt(d["against"])
    shown = "**wrong**" if verdict == "wrong" else verdict
    return f"{shown} ({'+' if effect > 0 else ''}{fmt(effect)} against {ref}; seed {d['seed']})"


def measured_doc(figs, values):
    """OUT/figures_measured.json: what --before of a later run reads."""
    ways = directions.verdicts(figs, values)
    return {"band_counts": band_counts(figs, values),
            "direction_counts": directions.counts(figs, values),
            "figures": {f["id"]: {"role": f["role"], "value": finite_or_none(values[f["id"]]),
                                  "in_band": figures.in_band(f, values[f["id"]]),
                                  "direction": ways.get(f["id"], (None,))[0]} for f in figs["figures"]}}


def finite_or_none(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def load_before(path):
    """An earlier run's figures_measured.json; InputError (exit 2) naming the file when it is not one."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read the earlier run's figures (--before): {e.strerror}")
    except ValueError as e:
        raise InputError(f"{path}: not JSON (--before): {e}")
    entries = doc.get("figures") if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or not isinstance(doc.get("band_counts"), str):
        raise InputError(f"{path}: not a figures_measured.json of make reproduce (--before): "
                         "expected 'band_counts' and 'figures'")
    for fid, e in entries.items():
        if not isinstance(e, dict) or e.get("role") not in ("fit", "predict") or not isinstance(e.get("in_band"), bool):
            raise InputError(f"{path}: figures.{fid}: expected 'role' fit or predict, 'value' and 'in_band' (--before)")
        if e.get("direction") not in (None,) + directions.VERDICTS:
            raise InputError(f"{path}: figures.{fid}: 'direction' must be one of {', '.join(directions.VERDICTS)} "
                             f"or null (--before; got {e['direction']!r})")
    for e in entries.values():
        e["value"] = math.nan if e.get("value") is None else e["value"]
    return doc


def band_changes(figs, values, before):
    """Lines naming the figures that entered or left their band since the earlier run."""
    entered, left = [], []
    for fig in figs["figures"]:
        old = before["figures"].get(fig["id"])
        now = figures.in_band(fig, values[fig["id"]])
        if old is not None and old["in_band"] != now:
            (entered if now else left).append(f"`{fig['id']}`")
    line = f"Entered their band: {', '.join(entered) or 'none'}. Left it: {', '.join(left) or 'none'}."
    turned = direction_changes(figs, values, before)
    if turned:
        line += f" Direction changed: {', '.join(turned)}."
    return [line]


def direction_changes(figs, values, before):
    """'`id` same -> wrong' for each figure whose direction verdict differs from the earlier run's
    (an earlier run without verdicts, from before the check existed, gives none)."""
    ways = directions.verdicts(figs, values)
    out = []
    for fig in figs["figures"]:
        old = before["figures"].get(fig["id"])
        if old is None or "direction" not in old:
            continue
        now = ways.get(fig["id"], (None,))[0]
        if old["direction"] != now:
            out.append(f"`{fig['id']}` {old['direction'] or '-'} -> {now or '-'}")
    return out


def ratio_plot(args, figs, values):
    rows = []
    for fig in figs["figures"]:
        r = ratio(fig, values[fig["id"]])
        low, high = figures.band_limits(fig)
        pub = fig.get("published")
        lo = low / pub if pub and low is not None else None
        hi = high / pub if pub and high is not None else None
        rows.append((fig["id"], r, lo, hi))
    base = os.path.join(args.out, "plots", "ratios")
    plots.ratio_chart(rows, base)
    return base


def img(args, base):
    return f"![{os.path.basename(base)}]({os.path.relpath(base + '.png', args.out)})"


def command_line(job, args):
    argv = [os.path.relpath(a, os.getcwd()) if os.path.isabs(a) else a for a in job.argv]
    return " ".join(f"'{a}'" if " " in a else a for a in argv)


def scenario_sections(args, jobs, made):
    lines = ["## Runs and sweep plots", ""]
    for name, job in jobs.items():
        status = "ok" if job.returncode == 0 else f"FAILED (exit {job.returncode}, log `{job.log}`)"
        lines += [f"### {name}", "", "```", command_line(job, args), "```", "",
                  f"{status}, {job.seconds:.1f} s wall.", ""]
        for title, base in made.get(name, []):
            lines += [img(args, base), ""]
    return lines


def sensitivity_sections(args, figs, studied, factor):
    lines = ["## Sensitivity", "",
             f"Each figure with its parameters scaled by {1 - factor:g} and {1 + factor:g} "
             "(`--set`, on every point the figure reads; integers rounded). "
             "The three largest effects per figure, then its tornado chart.", "",
             "| figure | base | parameter | down: value -> figure | up: value -> figure |",
             "|---|---:|---|---|---|"]
    for fig in figs["figures"]:
        if fig["id"] not in studied:
            continue
        base_value, rows, _ = studied[fig["id"]]
        for param, low, high, f_low, f_high in rows[:3]:
            if effect(base_value, f_low, f_high) == 0:
                param += " (no effect)"
            lines.append(f"| `{fig['id']}` | {fmt(base_value)} | `{param}` | {fmt(low)} -> {fmt(f_low)} | "
                         f"{fmt(high)} -> {fmt(f_high)} |")
    lines.append("")
    for fig in figs["figures"]:
        if fig["id"] in studied:
            lines += [f"### {fig['id']}", "", img(args, studied[fig["id"]][2]), ""]
    return lines


def band_counts(figs, values):
    """The line make reproduce prints: predictions and fits counted apart, then the total."""
    def count(role):
        group = [f for f in figs["figures"] if role is None or f["role"] == role]
        return sum(1 for f in group if figures.in_band(f, values[f["id"]])), len(group)
    (pi, pn), (fi, fn), (ti, tn) = count("predict"), count("fit"), count(None)
    return f"predicted: {pi} of {pn} in band; fitted: {fi} of {fn} in band; all: {ti} of {tn}"


def micro_table(micro):
    """The measured micro-figures: what the profiles were built from, measured like for like."""
    if not micro:
        return []
    lines = ["## Micro-figures of the seeds' machines", "",
             "Published measurements of the machines themselves (`micro_figures` of docs/figures.json): a "
             "profile's sourced values come from some and its fitted values are fitted to some (its "
             "provenance names which, `smmu-vp profile show`), so these check the profiles, not the model's "
             "predictions.", "",
             "| micro-figure | at | published | measured | ratio |", "|---|---|---:|---:|---:|"]
    for m, v, value in micro:
        at = ", ".join(f"{k} {x}" for k, x in v.get("at", {}).items()) or "-"
        rel = f"{v['relation']} " if v.get("relation") else ""
        r = value / v["published"] if value is not None and v["published"] else None
        lines.append(f"| `{m['id']}` | {at} | {rel}{fmt(v['published'])} {m['unit']} | {fmt(value)} {m['unit']} | "
                     f"{fmt(r)} |")
    return lines + [""]


def write(args, figs, jobs, values, made, studied, factor, failed, runs, wall, micro=(), impossible=()):
    before = getattr(args, "before_doc", None)
    lines = ["# Seed figures reproduced", "",
             f"**{band_counts(figs, values)}.** A fitted figure (role `fit`) had a profile value set to "
             "give it, so it is in its band by construction and no evidence for the model; the predicted "
             "ones are.", "",
             f"**{directions.counts(figs, values)}.** Each effect a seed reports (a figure's `direction` in "
             "the figures file: above or below a reference) against the model's: the same way, the wrong way, or "
             f"no effect (within {100 * directions.no_effect_share(figs):g} % "
             "of the seed's distance from its reference).", ""]
    if before:
        lines += [f"Before (`{os.path.relpath(args.before)}`): {before['band_counts']}"
                  + (f"; {before['direction_counts']}" if isinstance(before.get("direction_counts"), str) else "")
                  + ". " + band_changes(figs, values, before)[0], ""]
    lines += [
             f"Written by `scripts/reproduce.py` (`make reproduce`) with `{os.path.relpath(args.cli)}`: "
             f"{len(jobs)} scenarios and {runs - len(jobs)} sensitivity runs, {args.jobs} at a time, "
             f"{wall:.0f} s wall; {len(failed)} run(s) failed.", "",
             "Bands, published values and how each figure is measured: "
             f"`{os.path.relpath(args.figures, os.getcwd())}`. Why a figure misses: the section linked in "
             "the last column.", ""]
    lines += summary_table(args, figs, values, before)
    lines += ["", img(args, ratio_plot(args, figs, values)), ""]
    lines += micro_table(micro)
    if impossible:
        lines += ["## Results that are not physically possible", "",
                  "A run broke a physical invariant (platform/invariants.h): a bug in a model or an app to "
                  "fix, not a finding (docs/results.md, \"Results that are not physically possible\").", ""]
        lines += [f"- `{os.path.relpath(p, args.out)}`: {'; '.join(b)}" for p, b in impossible] + [""]
    if failed:
        lines += ["## Failed runs", ""] + [f"- `{command_line(j, args)}`: exit {j.returncode}, log `{j.log}`"
                                            for j in failed] + [""]
    lines += scenario_sections(args, jobs, made)
    if studied:
        lines += sensitivity_sections(args, figs, studied, factor)
    with open(os.path.join(args.out, "figures_measured.json"), "w") as f:
        json.dump(measured_doc(figs, values), f, indent=1)
        f.write("\n")
    path = os.path.join(args.out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path
