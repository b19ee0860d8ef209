"""The figure definitions (docs/figures.json): loading, checking, and measuring a figure.

A figure's measure has a kind and one or two terms:
  value         a                      ratio       a / b
  percent_of    100 a / b              gain_percent  100 (a / b - 1)
A term is {"point": LABEL or {AXIS: LABEL}, "column": TITLE} for a scenario with
a sweep (the column as the sweep defines it), or {"stat": PATH, "field": F,
"scale": S} for one without.

Every figure has a role: "fit" (a profile value was fitted to it, so it is in
its band by construction) or "predict". The file's "micro_figures" are
published measurements of the seeds' machines that a profile may be fitted
to; each value may say how the platform measures it ("measure": scenario,
optional point, stat or column).
"""
import math
import os
import re

from . import directions
from .common import ROOT, InputError, column_value, load_json, point_labels, stat_value

KINDS = {"value": 1, "ratio": 2, "percent_of": 2, "gain_percent": 2}
ROLES = ("fit", "predict")


def scenario_path(name, root=ROOT):
    return os.path.join(root, "platform", "scenarios", name + ".json")


def load_figures(path, root=ROOT):
    data = load_json(path)
    if not isinstance(data.get("figures"), list):
        raise InputError(f"{path}: no list 'figures'")
    scenarios = {}
    seen = set()
    for i, fig in enumerate(data["figures"]):
        where = f"{path}: figures.{i}"
        for key in ("id", "seed", "description", "unit", "scenario", "measure", "band", "section"):
            if key not in fig:
                raise InputError(f"{where}: no field '{key}'")
        if fig["id"] in seen:
            raise InputError(f"{where}: id '{fig['id']}' used twice")
        seen.add(fig["id"])
        if fig.get("role") not in ROLES:
            raise InputError(f"{where} ({fig['id']}): 'role' must be \"fit\" or \"predict\" "
                             f"(got {fig.get('role')!r})")
        name = fig["scenario"]
        if name not in scenarios:
            scenarios[name] = load_json(fig.get("scenario_file") and os.path.join(root, fig["scenario_file"])
                                        or scenario_path(name, root))
        check_measure(fig, scenarios[name], f"{where} ({fig['id']})")
        check_band(fig, f"{where} ({fig['id']})")
    check_micro_figures(data, path, seen, scenarios, root)
    directions.check(data, path)
    data["scenarios"] = scenarios
    return data


def nonempty_text(obj, key, where):
    if not isinstance(obj, dict) or not isinstance(obj.get(key), str) or not obj[key].strip():
        raise InputError(f"{where}: no field '{key}' (a non-empty string)")


def check_micro_figures(data, path, seen, scenarios, root=ROOT):
    """The optional 'micro_figures' list: ids unique among all figures, values, unit, source."""
    micro = data.get("micro_figures", [])
    if not isinstance(micro, list):
        raise InputError(f"{path}: 'micro_figures' must be a list")
    for i, fig in enumerate(micro):
        where = f"{path}: micro_figures.{i}"
        if not isinstance(fig, dict):
            raise InputError(f"{where}: expected an object")
        nonempty_text(fig, "id", where)
        where = f"{where} ({fig['id']})"
        if fig["id"] in seen:
            raise InputError(f"{where}: id '{fig['id']}' used twice")
        seen.add(fig["id"])
        for key in ("description", "unit", "machine"):
            nonempty_text(fig, key, where)
        nonempty_text(fig.get("source"), "quote", f"{where}: source")
        nonempty_text(fig.get("source"), "address", f"{where}: source")
        values = fig.get("values")
        if not isinstance(values, list) or not values:
            raise InputError(f"{where}: 'values' must be a non-empty list of {{\"at\": ..., \"published\": N}}")
        for j, value in enumerate(values):
            vwhere = f"{where}: values.{j}"
            if not isinstance(value, dict) or not isinstance(value.get("published"), (int, float)) \
                    or isinstance(value.get("published"), bool):
                raise InputError(f"{vwhere}: no numeric 'published'")
            if len(values) > 1 and not isinstance(value.get("at"), dict):
                raise InputError(f"{vwhere}: a figure of several values needs 'at' (what each was measured at)")
            if "measure" in value:
                check_micro_measure(value["measure"], vwhere + ": measure", scenarios, root)


def check_micro_measure(measure, where, scenarios, root=ROOT):
    """A micro-figure value's measure: {"scenario", optional "point", "stat" or "column"}."""
    nonempty_text(measure, "scenario", where)
    name = measure["scenario"]
    if name not in scenarios:
        scenarios[name] = load_json(scenario_path(name, root))
    term = {k: v for k, v in measure.items() if k in ("point", "column", "stat", "field", "scale")}
    check_measure({"measure": {"kind": "value", "terms": [term]}}, scenarios[name], where)
    measure["term"] = term


def role_of(figs, fid):
    """'fit', 'predict', 'micro' (a micro-figure) or None (no such id)."""
    for fig in figs["figures"]:
        if fig["id"] == fid:
            return fig["role"]
    if any(m["id"] == fid for m in figs.get("micro_figures", [])):
        return "micro"
    return None


def check_measure(fig, scenario, where):
    measure = fig["measure"]
    kind = measure.get("kind")
    if kind not in KINDS:
        raise InputError(f"{where}: measure.kind must be one of {', '.join(KINDS)}")
    terms = measure.get("terms", [])
    if len(terms) != KINDS[kind]:
        raise InputError(f"{where}: measure '{kind}' needs {KINDS[kind]} term(s)")
    axes = scenario.get("sweep", {}).get("axes")
    for term in terms:
        if axes is not None:
            if "column" not in term or "point" not in term:
                raise InputError(f"{where}: a term of a sweep scenario needs 'point' and 'column'")
            term["labels"] = point_labels(term["point"], axes, where)
            term["column_def"] = find_column(scenario, term["column"], where)
        elif "stat" not in term:
            raise InputError(f"{where}: a term of a scenario without a sweep needs 'stat'")


def find_column(scenario, title, where):
    for column in scenario["sweep"]["columns"]:
        if column["title"] == title:
            return column
    raise InputError(f"{where}: the scenario's sweep has no column '{title}'")


def check_band(fig, where):
    band = fig["band"]
    if not ("rel" in band or "min" in band or "max" in band):
        raise InputError(f"{where}: band needs 'rel' or 'min'/'max'")
    if "rel" in band and not isinstance(fig.get("published"), (int, float)):
        raise InputError(f"{where}: a relative band needs a numeric 'published'")


def term_value(term, stats, where):
    if "column_def" in term:
        return column_value(stats, term["column_def"], where)
    return stat_value(stats, term["stat"], term.get("field"), float(term.get("scale", 1.0)), where)


def evaluate(fig, stats_of):
    """The figure's value; stats_of(term) gives (stats dict, where) of the term's run."""
    values = []
    for term in fig["measure"]["terms"]:
        stats, where = stats_of(term)
        values.append(term_value(term, stats, where))
    kind = fig["measure"]["kind"]
    if kind == "value":
        return values[0]
    a, b = values
    if b == 0:
        return math.nan
    return {"ratio": a / b, "percent_of": 100 * a / b, "gain_percent": 100 * (a / b - 1)}[kind]


def band_limits(fig):
    """(low, high) of the figure's target band in its own unit (None: unbounded)."""
    band = fig["band"]
    if "rel" in band:
        p = float(fig["published"])
        return p * (1 - band["rel"]), p * (1 + band["rel"])
    return band.get("min"), band.get("max")


def in_band(fig, value):
    if value is None or math.isnan(value):
        return False
    low, high = band_limits(fig)
    return (low is None or value >= low) and (high is None or value <= high)


def github_anchor(heading):
    """The anchor GitHub and most forges give a Markdown heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def check_sections(figs, doc_path):
    """Every figure's section must be a heading of docs/results.md."""
    with open(doc_path) as f:
        headings = {line.lstrip("#").strip() for line in f if line.startswith("#")}
    for fig in figs["figures"]:
        if fig["section"] not in headings:
            raise InputError(f"{doc_path}: no heading '{fig['section']}' (figure {fig['id']})")
