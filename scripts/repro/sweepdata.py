"""The output directory of `smmu-vp sweep FILE --out DIR`: sweep.json and a directory per point."""
import os

from .common import InputError, load_json


def read_sweep(directory):
    path = os.path.join(directory, "sweep.json")
    data = load_json(path)
    for key in ("scenario", "sweep", "points"):
        if key not in data:
            raise InputError(f"{path}: no field '{key}'")
    sweep = data["sweep"]
    for key in ("axes", "columns"):
        if key not in sweep:
            raise InputError(f"{path}: no field 'sweep.{key}'")
    for i, point in enumerate(data["points"]):
        for key in ("labels", "dir", "status"):
            if key not in point:
                raise InputError(f"{path}: no field 'points.{i}.{key}'")
    data["path"] = path
    data["name"] = os.path.splitext(os.path.basename(data["scenario"]))[0]
    return data


def column_by_title(sweep_data, title):
    for column in sweep_data["sweep"]["columns"]:
        if column["title"] == title:
            return column
    titles = ", ".join(c["title"] for c in sweep_data["sweep"]["columns"])
    raise InputError(f"{sweep_data['path']}: no column '{title}' (columns: {titles})")


def point_value(point, title):
    """A point's value of a column, None when the sweep showed '-' or the point failed."""
    if point["status"] != "ok":
        return None
    value = point.get("values", {}).get(title)
    return float(value) if isinstance(value, (int, float)) else None


def as_number(label):
    try:
        return float(label)
    except ValueError:
        return None


def choose_x_axis(axes, wanted=None):
    """The axis on x: the one asked for, else the last numeric one, else the last."""
    names = [a["name"] for a in axes]
    if wanted is not None:
        if wanted not in names:
            raise InputError(f"no axis '{wanted}' (axes: {', '.join(names)})")
        return wanted
    for axis in reversed(axes):
        if all(as_number(label) is not None for label in axis["values"]):
            return axis["name"]
    return names[-1]


def series(sweep_data, title, x_axis):
    """{series name: [(x label, value)]}, one series per combination of the other axes."""
    axes = sweep_data["sweep"]["axes"]
    out = {}
    for point in sweep_data["points"]:
        name = series_name(point["labels"], axes, x_axis, title)
        out.setdefault(name, []).append((point["labels"][x_axis], point_value(point, title)))
    return out


def series_name(labels, axes, x_axis, title):
    """The series a point belongs to in series(): its labels on the other axes."""
    others = [a["name"] for a in axes if a["name"] != x_axis]
    return ", ".join(labels[a] for a in others) or title
