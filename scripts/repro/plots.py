"""Matplotlib drawings. Each writes NAME.png and NAME.svg, and the data it drew as NAME.csv."""
import csv
import math
import os
import re
import textwrap

from .common import require_matplotlib
from . import sweepdata

plt = require_matplotlib()


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "x"


def save(fig, base):
    """PNG and SVG, without a date or version, so that identical data give identical files."""
    os.makedirs(os.path.dirname(base) or ".", exist_ok=True)
    fig.tight_layout()
    fig.savefig(base + ".png", dpi=100, metadata={"Software": None})
    fig.savefig(base + ".svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


def write_csv(base, header, rows):
    with open(base + ".csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(["" if v is None else v for v in row])


def _ordered(points, axis):
    order = list(axis["values"])
    return sorted(points, key=lambda p: order.index(p[0]))


def sweep_column(data, title, x_axis, published, base):
    """One column of a sweep over its x axis, a line (numeric x) or a bar group per series.

    published: {(series, x label): value} of seed figures to overlay.
    Returns the rows written to the CSV: series, x, measured, published.
    """
    column = sweepdata.column_by_title(data, title)
    axis = next(a for a in data["sweep"]["axes"] if a["name"] == x_axis)
    numeric = all(sweepdata.as_number(l) is not None for l in axis["values"])
    all_series = {k: _ordered(v, axis) for k, v in sweepdata.series(data, title, x_axis).items()}
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    rows = []
    labels = list(axis["values"])
    width = 0.8 / max(1, len(all_series))
    # Series that coincide must stay visible: each its own marker and dashes,
    # later ones drawn thinner on top.
    markers, dashes = "osD^vP*X", ["-", "--", "-.", ":"]
    for i, (name, points) in enumerate(all_series.items()):
        xs = [float(l) if numeric else labels.index(l) + (i - (len(all_series) - 1) / 2) * width
              for l, _ in points]
        ys = [math.nan if v is None else v for _, v in points]
        if numeric:
            ax.plot(xs, ys, marker=markers[i % len(markers)], linestyle=dashes[i % len(dashes)],
                    markersize=max(3.0, 7.0 - i), linewidth=max(0.8, 2.0 - 0.3 * i), markerfacecolor="none",
                    label=name, gid=f"series-{i}")
        else:
            ax.bar(xs, ys, width=width, label=name)
        for (label, value), x in zip(points, xs):
            seed = published.get((name, label))
            rows.append([name, label, value, seed])
            if seed is not None:
                ax.plot([x], [seed], marker="*", markersize=13, color="black", linestyle="none",
                        label="published (seed)" if "published (seed)" not in
                        ax.get_legend_handles_labels()[1] else None)
    if not numeric:
        ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
    elif all(float(l) > 0 for l in labels) and max(map(float, labels)) / min(map(float, labels)) >= 8:
        ax.set_xscale("log", base=2)
        ax.set_xticks([float(l) for l in labels], labels)
    ax.set_xlabel(x_axis, gid="xlabel")
    ax.set_ylabel(sweepdata_label(column), gid="ylabel")  # the ids name the labels in the SVG
    # The sweep's own title when it has one (else its file's name), wrapped.
    heading = data.get("sweep", {}).get("title") or data["name"]
    ax.set_title(textwrap.fill(f"{heading}: {title}", 90), fontsize=9)
    ax.grid(True, alpha=0.3)
    if len(all_series) > 1 or any(r[3] is not None for r in rows):
        ax.legend(fontsize=7)
    save(fig, base)
    write_csv(base, ["series", x_axis, title, "published"], rows)
    return rows


def sweepdata_label(column):
    """The y axis label of a column: its title, and its unit in brackets when the column has one."""
    unit = column.get("unit")
    return f"{column['title']} ({unit})" if unit else column["title"]


def percentile_profile(name, hist, base):
    """Latency percentiles of one stats.json histogram: stats.json keeps only six points of
    the distribution (min, p50, p90, p99, p99.9, max), not its bins, so this is not a
    histogram: a bar per recorded percentile, and a step CDF through those six points."""
    keys = [("min", 0.0), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999), ("max", 1.0)]
    unit = hist.get("unit", "")
    xs = [float(hist[k]) for k, _ in keys]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    left.bar([k for k, _ in keys], xs, color="tab:blue")
    left.set_xlabel("recorded percentile")
    left.set_ylabel(f"latency ({unit})" if unit else "latency")
    left.set_title(f"{name}: latency percentiles ({hist['count']} samples)", fontsize=9)
    right.step(xs, [q for _, q in keys], where="post", marker="o")
    if xs[0] > 0 and xs[-1] / xs[0] > 20:
        right.set_xscale("log")
    right.set_xlabel(f"latency ({unit})" if unit else "latency")
    right.set_ylabel("fraction of samples <= x")
    right.set_title(f"{name}: CDF through the 6 recorded percentiles", fontsize=9)
    for a in (left, right):
        a.grid(True, alpha=0.3)
    save(fig, base)
    write_csv(base, ["percentile", "quantile", unit], [[k, q, x] for (k, q), x in zip(keys, xs)])


def bars(title, names, values, ylabel, base, header):
    fig, ax = plt.subplots(figsize=(max(4.5, 0.35 * len(names) + 2), 3.6))
    ax.bar(names, values, color="tab:green")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelrotation=45 if len(names) > 8 else 0, labelsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, base)
    write_csv(base, header, zip(names, values))


def tornado(title, base_value, rows, unit, base):
    """rows: [(parameter, low value, high value, figure at low, figure at high)], largest effect first."""
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.6))
    names = [r[0] for r in rows][::-1]
    lows = [r[3] - base_value for r in rows][::-1]
    highs = [r[4] - base_value for r in rows][::-1]
    y = range(len(names))
    ax.barh(y, lows, color="tab:blue", label="parameter down")
    ax.barh(y, highs, color="tab:orange", alpha=0.8, label="parameter up")
    ax.set_yticks(list(y), names, fontsize=8)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"change of the figure from {base_value:.4g} {unit}".rstrip())
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, axis="x", alpha=0.3)
    save(fig, base)
    write_csv(base, ["parameter", "low", "high", "figure_low", "figure_high", "figure_base"],
              [list(r) + [base_value] for r in rows])


def ratio_chart(rows, base):
    """rows: [(figure id, measured / published, band low ratio, band high ratio)] on a log axis."""
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(rows) + 1.5))
    names = [r[0] for r in rows][::-1]
    # A log axis has no 0: a figure measured at 0 is drawn at the axis's left
    # edge, as an arrow marked "0", not dropped.
    positive = [v for r in rows for v in r[1:] if v is not None and v > 0]
    floor = min(positive) / 4 if positive else 0.01
    for i, (_, ratio, lo, hi) in enumerate(rows[::-1]):
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [i, i], color="tab:green", linewidth=6, alpha=0.35)
        if ratio is not None and ratio > 0:
            inside = lo is not None and lo <= ratio <= hi
            ax.plot([ratio], [i], marker="o", color="tab:green" if inside else "tab:red")
        elif ratio is not None:
            ax.plot([floor], [i], marker="<", color="tab:red", gid=f"zero-{slug(names[i])}")
            ax.annotate("0", (floor, i), textcoords="offset points", xytext=(6, -3), fontsize=7, color="tab:red")
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xlabel("measured / published (band shaded; red: outside)")
    ax.grid(True, axis="x", alpha=0.3)
    save(fig, base)
    write_csv(base, ["figure", "ratio", "band_low_ratio", "band_high_ratio"], rows)
