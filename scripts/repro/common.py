"""Reading smmu-vp results: stats.json paths, sweep directories, scenario files.

Every reader raises InputError naming the file and the field on bad input;
the entry points turn it into exit code 2.
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class InputError(Exception):
    """Bad input: a missing file, malformed JSON or a missing field."""


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e})")


def lookup(tree, dotted, where):
    """The value at a dotted path of a nested dict (numeric parts index lists)."""
    node = tree
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise InputError(f"{where}: no field '{dotted}' (missing at '{part}')")
    return node


def number(value, dotted, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: field '{dotted}' is not a number ({value!r})")
    return float(value)


def stat_value(stats, stat, field=None, scale=1.0, where="stats.json"):
    """A stat of a run, as a sweep column reads it: stat[.field] x scale."""
    value = lookup(stats, stat, where)
    if field is not None:
        if not isinstance(value, dict) or field not in value:
            raise InputError(f"{where}: field '{stat}' has no '{field}'")
        value = value[field]
    elif isinstance(value, dict):
        raise InputError(f"{where}: field '{stat}' is a histogram; name its field (p50, mean, ...)")
    return number(value, stat, where) * scale


def column_value(stats, column, where):
    """One sweep column (its JSON definition) evaluated on a run's stats."""
    scale = float(column.get("scale", 1.0))
    if "ratio" in column:
        num, den = column["ratio"]
        d = stat_value(stats, den, where=where)
        return stat_value(stats, num, where=where) / d * scale if d else float("nan")
    if "stat" not in column:
        raise InputError(f"{where}: column '{column.get('title')}' has neither 'stat' nor 'ratio'")
    return stat_value(stats, column["stat"], column.get("field"), scale, where)


def column_label(column):
    """The column's title with its unit, as the sweep table prints it."""
    unit = column.get("unit")
    return f"{column['title']} ({unit})" if unit else column["title"]


def point_dir_name(labels, axes):
    """The directory smmu-vp sweep writes a point to: labels joined by '__'."""
    return "__".join(labels[a["name"]] for a in axes)


def point_labels(point, axes, where):
    """A figure's point (a label, or {axis: label}) as {axis: label}."""
    if isinstance(point, str):
        if len(axes) != 1:
            raise InputError(f"{where}: point '{point}' needs one label per axis "
                             f"({', '.join(a['name'] for a in axes)})")
        point = {axes[0]["name"]: point}
    if not isinstance(point, dict):
        raise InputError(f"{where}: point must be a label or an object of labels")
    for axis in axes:
        label = point.get(axis["name"])
        if label not in axis["values"]:
            raise InputError(f"{where}: axis '{axis['name']}' has no value '{label}'")
    return point


def point_overrides(labels, axes):
    """The --set overrides of a sweep point, axis after axis as the sweep applies them."""
    overrides = {}
    for axis in axes:
        overrides.update(axis["values"][labels[axis["name"]]])
    return overrides


def require_matplotlib():
    """Imports matplotlib with the Agg backend and reproducible SVG output."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("matplotlib is missing: install the Debian package python3-matplotlib "
                         "(scripts/install-deps.sh does) and run with /usr/bin/python3")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "smmu-vp"
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt
    return plt
