"""Sensitivity of a figure to platform parameters: each one scaled down and up by a factor.

For a figure of docs/figures.json (or one made on the command line), every
point the figure reads is run once with the point's own overrides (the base)
and once per parameter and direction with `--set PARAM=base x (1 -/+ factor)`
added. Integer parameters are rounded to the nearest integer (half up).
"""
import math
import os

from . import figures, runner
from .common import InputError, load_json, lookup, point_overrides

TIMING_SUFFIXES = ("_ns", "_cycles", "_mhz", "_gbps")


def timing_parameters(config):
    """Every platform parameter a timing study would vary: cost classes and *_ns/_cycles/_mhz/_gbps."""
    out = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, (int, float)) and not isinstance(node, bool) and node > 0:
            if ".costs." in path or path.endswith(TIMING_SUFFIXES):
                out.append(path)

    walk(config["platform"], "platform")
    return sorted(out)


def scaled(base, factor):
    value = base * factor
    if isinstance(base, int):
        return int(math.floor(value + 0.5))
    return round(value, 6)


class Study:
    """One figure's study: the runs it needs and, once they have run, the ranking."""

    def __init__(self, fig, scenario, path, cli, out_root, params, factor):
        self.fig, self.scenario, self.path, self.cli = fig, scenario, path, cli
        self.out_root, self.params, self.factor = out_root, list(params), factor
        axes = scenario.get("sweep", {}).get("axes")
        self.term_overrides = [point_overrides(t["labels"], axes) if axes else {}
                               for t in fig["measure"]["terms"]]
        self.base_values = {}

    def _job(self, overrides):
        return runner.point_job(self.cli, self.fig["scenario"], self.path, overrides, self.out_root)

    def base_jobs(self):
        return [self._job(o) for o in self.term_overrides]

    def read_base_parameters(self):
        """Base values of the parameters from the first base run's config.json."""
        config_path = os.path.join(self.base_jobs()[0].out, "config.json")
        config = load_json(config_path)
        if not self.params:
            self.params = timing_parameters(config)
        for param in self.params:
            value = lookup(config, param, config_path)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"{config_path}: parameter '{param}' is not a number")
            self.base_values[param] = value

    def variations(self):
        """[(param, direction, value)]: down and up."""
        out = []
        for param in self.params:
            base = self.base_values[param]
            out.append((param, "down", scaled(base, 1 - self.factor)))
            out.append((param, "up", scaled(base, 1 + self.factor)))
        return out

    def variation_jobs(self):
        jobs = []
        for param, _, value in self.variations():
            jobs += [self._job({**o, param: value}) for o in self.term_overrides]
        return jobs

    def _value(self, extra):
        def stats_of(term):
            i = self.fig["measure"]["terms"].index(term)
            job = self._job({**self.term_overrides[i], **extra})
            path = os.path.join(job.out, "stats.json")
            return load_json(path), path
        return figures.evaluate(self.fig, stats_of)

    def base_value(self):
        return self._value({})

    def ranking(self):
        """[(param, low value, high value, figure at low, figure at high)], largest effect first."""
        base = self.base_value()
        rows = []
        for param in self.params:
            low = scaled(self.base_values[param], 1 - self.factor)
            high = scaled(self.base_values[param], 1 + self.factor)
            rows.append((param, low, high, self._value({param: low}), self._value({param: high})))
        rows.sort(key=lambda r: (-effect(base, r[3], r[4]), r[0]))
        return rows


def effect(base, low, high):
    """The larger change of the figure either way (0 where a value is not a number)."""
    changes = [abs(v - base) for v in (low, high) if not math.isnan(v) and not math.isnan(base)]
    return max(changes, default=0.0)
