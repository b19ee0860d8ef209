#!/usr/bin/python3
"""Calibrates a machine profile to measured figures: a least-squares fit of chosen parameters.

Reads a calibration spec (JSON): the profile to start from, the free
parameters with their bounds, and the targets (what to run and read, and the
value the machine measured). Each evaluation runs every target's scenario
point with the parameters as --set overrides, the way `smmu-vp sweep` runs a
point; scipy.optimize.least_squares fits the parameters to the targets'
relative residuals, with forward differences of a relative step (the model is
deterministic, so a step of a few percent gives clean slopes). Writes a new
profile that extends the starting one with the fitted values, each with a
"fitted" provenance entry naming the targets and the residuals.

  /usr/bin/python3 scripts/calibrate.py SPEC.json [--cli build/smmu-vp] [--out PROFILE.json]
        [--work DIR] [-j N] [--jobs-command 'parallel -j 8 < {jobs}']

The spec (docs/studies.md, "Calibrating a profile to your machine"):

  {"profile": "base",                          # a profile name, or a file relative to the spec
   "new_profile": {"name": "mysoc", "title": "...", "machine": "..."},
   "parameters": {"platform.smmu.cmdq.sync_ns": {"min": 5, "max": 500, "start": 20}, ...},
   "targets": [{"id": "my_sync_mean", "source": {"quote": "...", "address": "..."},
                "scenario": "smmu_stress",     # a name of platform/scenarios, or a file relative to the spec
                "point": "LABEL",              # a sweep scenario's point (a label or {axis: label})
                "stat": "smmu.cmdq.sync_latency_ns", "field": "mean",   # or "column": a sweep column
                "value": 240, "unit": "ns", "weight": 1}],
   "fit": {"diff_step": 0.05, "max_evaluations": 30, "xtol": 1e-3, "ftol": 1e-4}}

A target's id is a figure of docs/figures.json marked "fit" (its scenario,
measure and published value are the defaults), one of its micro-figures
("at" names one of its points, e.g. {"cpus": 32}: that point's measure and
published value are the defaults, and the same id may recur at other points), or
the user's own id with a "source"; a figure marked "predict" is refused: we
never fit to a figure we claim to predict. Exit status: 0 when the fit ran and
the profile was written, 1 when a simulator run failed, 2 on bad input (named
with the spec file and key).
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from repro import figures, runner  # noqa: E402
from repro.common import ROOT, InputError, load_json, point_labels, point_overrides  # noqa: E402
from repro.provenance import cli_json, shown  # noqa: E402

FIT_DEFAULTS = {"diff_step": 0.05, "max_evaluations": 30, "xtol": 1e-3, "ftol": 1e-4}


class RunFailed(Exception):
    """A simulator run failed: exit 1."""


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", help="the calibration spec (JSON)")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "smmu-vp"), help="the smmu-vp binary")
    ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures.json"), help="figure definitions")
    ap.add_argument("--out", help="the profile to write (default: WORK/NAME.json)")
    ap.add_argument("--work", help="directory of the runs (default: build/calibrate/NAME)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="simulator processes at once (default 2)")
    ap.add_argument("--jobs-command", metavar="CMD",
                    help="run each batch of points with CMD instead of locally: every batch is written as a "
                         "jobs.txt of one sh line per point, as `smmu-vp sweep plan` writes them, and CMD "
                         "(with {jobs} replaced by its path) must run them all and return, e.g. "
                         "'parallel --will-cite -j 8 < {jobs}'")
    return ap.parse_args(argv)


# ---- the spec ----------------------------------------------------------------

def number(value, where, what="a number"):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{where}: expected {what}, got {value!r}")
    return value


def text(obj, key, where):
    if not isinstance(obj, dict) or not isinstance(obj.get(key), str) or not obj[key].strip():
        raise InputError(f"{where}: no field '{key}' (a non-empty string)")
    return obj[key]


def check_keys(obj, known, where):
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected an object")
    for key in obj:
        if key not in known:
            raise InputError(f"{where}.{key}: unknown key (known here: {', '.join(known)})")


class Profile:
    """The starting profile as `smmu-vp profile show --json` gives it."""

    def __init__(self, cli, name_or_file, spec_dir, where):
        bare = "/" not in name_or_file and not name_or_file.endswith(".json")
        self.arg = name_or_file if bare else os.path.normpath(os.path.join(spec_dir, name_or_file))
        self.by_name = bare
        try:
            data = json.loads(cli_json(cli, ["profile", "show", self.arg, "--json"]))
        except InputError as e:
            raise InputError(f"{where}: {e}")
        self.name, self.file = data["name"], os.path.realpath(data["files"][0])
        self.values = {"platform." + row["parameter"]: row["value"] for row in data["values"]}


class Parameter:
    def __init__(self, path, bounds, profile, where):
        check_keys(bounds, ("min", "max", "start"), where)
        self.path = path
        if not path.startswith("platform.") or path.count(".") < 2:
            raise InputError(f"{where}: a parameter is a platform path, like platform.smmu.cmdq.sync_ns")
        for key in ("min", "max"):
            if key not in bounds:
                raise InputError(f"{where}.{key}: required (the parameter's bounds)")
        self.low = number(bounds["min"], f"{where}.min")
        self.high = number(bounds["max"], f"{where}.max")
        if not self.low < self.high:
            raise InputError(f"{where}: min {self.low:g} is not below max {self.high:g}")
        base = profile.values.get(path)
        if "start" in bounds:
            self.start = number(bounds["start"], f"{where}.start")
        elif base is not None:
            self.start = base
        else:
            raise InputError(f"{where}: the profile has no timing value '{path[len('platform.'):]}'; "
                             "give 'start'")
        # An integer parameter (cycles, a cost class) is fitted over the reals and run rounded.
        self.integer = isinstance(base if base is not None else self.start, int)
        if not self.low <= self.start <= self.high:
            what = "start" if "start" in bounds else f"start (the profile's value {self.start:g})"
            raise InputError(f"{where}: {what} is outside [{self.low:g}, {self.high:g}]")

    def as_run(self, x):
        return int(math.floor(x + 0.5)) if self.integer else round(float(x), 3)  # ns to the picosecond


class Target:
    """One target: an id, a figure-like measure over one or two runs, a value and a weight."""

    def __init__(self, t, i, spec, figs):
        where = f"{spec.path}: targets.{i}"
        check_keys(t, ("id", "at", "source", "scenario", "point", "stat", "field", "scale", "column",
                       "value", "unit", "weight"), where)
        self.id = text(t, "id", where)
        self.label = self.id
        where = f"{where} ({self.id})"
        self.where = where
        role = figures.role_of(figs, self.id)
        fig = next((f for f in figs["figures"] if f["id"] == self.id), None)
        micro = next((m for m in figs.get("micro_figures", []) if m["id"] == self.id), None)
        if role == "predict":
            raise InputError(f"{where}: {self.id} is a figure marked predict in {shown(spec.figures_path)}: "
                             "we never fit to a figure we claim to predict (fit to a figure marked fit, a "
                             "micro-figure, or your own measurement)")
        self.source = None
        point = self._micro_point(t, micro, where) if "at" in t else None
        if point is not None:
            self.label = f"{self.id} at " + ", ".join(f"{k} {v}" for k, v in point["at"].items())
            # The point's own measure, unless the target names one.
            if "scenario" not in t and "measure" in point:
                t = dict(point["measure"], **t)
        if role is None:
            if "source" not in t:
                raise InputError(f"{where}: '{self.id}' is no figure of {shown(spec.figures_path)}; your own "
                                 "target needs 'source': {\"quote\": ..., \"address\": ...}")
            text(t["source"], "quote", f"{where}.source")
            text(t["source"], "address", f"{where}.source")
            self.source = t["source"]
        self.unit = t.get("unit") or (fig or micro or {}).get("unit", "")
        self.weight = number(t.get("weight", 1.0), f"{where}.weight")
        if self.weight <= 0:
            raise InputError(f"{where}.weight: must be positive")
        if "value" in t:
            self.value = number(t["value"], f"{where}.value")
        elif point is not None:
            self.value = point["published"]
        elif fig is not None and isinstance(fig.get("published"), (int, float)):
            self.value = fig["published"]
        elif micro is not None and len(micro["values"]) == 1:
            self.value = micro["values"][0]["published"]
        else:
            raise InputError(f"{where}.value: required (the value your machine measured)")
        if self.value == 0:
            raise InputError(f"{where}.value: 0 has no relative residual; the fit needs a non-zero target")
        if "scenario" in t or fig is None:
            self._own_measure(t, spec, where)
        else:
            # A fit figure of docs/figures.json: its own scenario and measure.
            self.fig = fig
            self.path = figures.scenario_path(fig["scenario"])
            self.scenario = figs["scenarios"][fig["scenario"]]
        spec.check_platform(self, where)

    @staticmethod
    def _micro_point(t, micro, where):
        """The value of a micro-figure that "at" names ({"cpus": 32}), the way docs/figures.json states it."""
        if micro is None:
            raise InputError(f"{where}.at: names a point of a micro-figure, and '{t['id']}' is none")
        at = t["at"]
        if not isinstance(at, dict) or not at:
            raise InputError(f"{where}.at: expected an object like {json.dumps(micro['values'][0]['at'])}")
        wanted = {k: str(v) for k, v in at.items()}
        for value in micro["values"]:
            if {k: str(v) for k, v in value["at"].items()} == wanted:
                return value
        points = "; ".join(json.dumps(v["at"]) for v in micro["values"])
        raise InputError(f"{where}.at: {json.dumps(at)} is no point of {micro['id']} (its points: {points})")

    def _own_measure(self, t, spec, where):
        name = text(t, "scenario", where)
        self.path = spec.scenario_path(name)
        self.scenario = load_json(self.path)
        term = {k: t[k] for k in ("point", "stat", "field", "scale", "column") if k in t}
        axes = self.scenario.get("sweep", {}).get("axes")
        if axes is None and ("point" in term or "column" in term):
            raise InputError(f"{where}: {shown(self.path)} has no sweep; read a 'stat' of its stats.json")
        if axes is not None and "point" not in term:
            raise InputError(f"{where}: {shown(self.path)} has a sweep; name its 'point'")
        if "stat" in term and "column" in term or not ("stat" in term or "column" in term):
            raise InputError(f"{where}: give one of 'stat' (a stats.json path) and 'column' (a sweep column)")
        if axes is not None:
            term["labels"] = point_labels(term["point"], axes, where)
            if "column" in term:
                term["column_def"] = figures.find_column(self.scenario, term["column"], where)
        self.fig = {"id": self.id, "measure": {"kind": "value", "terms": [term]}}

    def runs(self):
        """[(scenario path, the point's overrides)] of each term."""
        axes = self.scenario.get("sweep", {}).get("axes")
        out = []
        for term in self.fig["measure"]["terms"]:
            overrides = point_overrides(term["labels"], axes) if "labels" in term else {}
            if getattr(self, "platform_override", None):
                overrides = {"platform": self.platform_override, **overrides}
            out.append((self.path, overrides))
        return out


class Spec:
    def __init__(self, path, cli, figures_path):
        self.path, self.dir, self.cli, self.figures_path = path, os.path.dirname(os.path.abspath(path)), cli, figures_path
        spec = load_json(path)
        check_keys(spec, ("profile", "new_profile", "parameters", "targets", "fit", "note"), path)
        self.profile = Profile(cli, text(spec, "profile", path), self.dir, f"{path}: profile")
        new = spec.get("new_profile")
        for key in ("name", "title", "machine"):
            text(new, key, f"{path}: new_profile")
        self.new_profile = new
        self.note = spec.get("note", "")
        params = spec.get("parameters")
        if not isinstance(params, dict) or not params:
            raise InputError(f"{path}: parameters: expected an object of \"platform.path\": {{\"min\", \"max\"}}")
        self.params = [Parameter(p, b, self.profile, f"{path}: parameters.{p}") for p, b in params.items()]
        # Each parameter's name in the log: the shortest tail of its path that
        # no other parameter shares (costs.x and cost_spread.x both end in x).
        for p in self.params:
            parts = p.path.split(".")
            k = 1
            while sum(q.path.split(".")[-k:] == parts[-k:] for q in self.params) > 1:
                k += 1
            p.label = ".".join(parts[-k:])
        fit = spec.get("fit", {})
        check_keys(fit, tuple(FIT_DEFAULTS), f"{path}: fit")
        self.fit = dict(FIT_DEFAULTS)
        for key, value in fit.items():
            self.fit[key] = number(value, f"{path}: fit.{key}")
            if value <= 0:
                raise InputError(f"{path}: fit.{key}: must be positive")
        figs = figures.load_figures(figures_path)
        targets = spec.get("targets")
        if not isinstance(targets, list) or not targets:
            raise InputError(f"{path}: targets: expected a non-empty list")
        self.targets = [Target(t, i, self, figs) for i, t in enumerate(targets)]
        seen = set()
        for t in self.targets:
            if t.label in seen:
                raise InputError(f"{t.where}: id used by another target" +
                                 (" at the same point" if t.label != t.id else ""))
            seen.add(t.label)

    def scenario_path(self, name):
        if "/" not in name and not name.endswith(".json"):
            return figures.scenario_path(name)
        return os.path.normpath(os.path.join(self.dir, name))

    def check_platform(self, target, where):
        """A target's scenario runs on the profile being calibrated (given its platform by name or file)."""
        named = target.scenario.get("platform")
        if not isinstance(named, str):
            raise InputError(f"{where}: {shown(target.path)} names no profile as its platform")
        if "/" not in named and not named.endswith(".json"):
            file = Profile(self.cli, named, self.dir, where).file
        else:
            file = os.path.realpath(os.path.join(os.path.dirname(target.path), named))
        # A scenario on another profile runs on this one: --set platform=FILE
        # replaces its platform, and its own "set" still applies on top.
        target.platform_override = None if file == self.profile.file else self.profile.file


# ---- evaluation ----------------------------------------------------------------

class Evaluator:
    """Runs batches of parameter vectors; remembers every result (the model is deterministic)."""

    def __init__(self, spec, args, work):
        self.spec, self.args, self.work = spec, args, work
        self.cache, self.count, self.batches = {}, 0, 0

    def overrides(self, x):
        return {p.path: p.as_run(v) for p, v in zip(self.spec.params, x)}

    def key(self, x):
        return tuple(sorted(self.overrides(x).items()))

    def batch(self, xs):
        """The residual vectors of the parameter vectors xs, running those not yet run in one batch."""
        pending = {}
        for x in xs:
            if self.key(x) not in self.cache:
                pending.setdefault(self.key(x), x)
        if pending:
            self.batches += 1
            # Every target's runs, each (scenario, point) once.
            runs = {(p, json.dumps(o, sort_keys=True)) for t in self.spec.targets for p, o in t.runs()}
            jobs = {}
            for x in pending.values():
                for path, point in runs:
                    name = os.path.splitext(os.path.basename(path))[0]
                    job = runner.point_job(self.args.cli, name, path, {**json.loads(point), **self.overrides(x)},
                                           os.path.join(self.work, "runs"))
                    jobs[job.key] = job
            self.run(list(jobs.values()))
            for k, x in pending.items():
                self.cache[k] = self.measure(x)
                self.count += 1
                self.progress(x, self.cache[k])
        return [self.cache[self.key(x)][1] for x in xs]

    def run(self, jobs):
        if self.args.jobs_command:
            self.run_with_command(jobs)
        else:
            runner.run_all(jobs, self.args.jobs)
        failed = [j for j in jobs if j.returncode != 0]
        if failed:
            raise RunFailed(f"{len(failed)} run(s) failed, e.g. exit {failed[0].returncode}: "
                            f"{' '.join(shlex.quote(a) for a in failed[0].argv)} (log {failed[0].log})")

    def run_with_command(self, jobs):
        """Writes the batch as jobs.txt (one sh line per point) and runs the user's command on it."""
        path = os.path.join(self.work, f"batch{self.batches:03d}", "jobs.txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lines = []
        for job in jobs:
            os.makedirs(job.out, exist_ok=True)
            for stale in ("exit_status", "stats.json"):
                if os.path.exists(os.path.join(job.out, stale)):
                    os.remove(os.path.join(job.out, stale))
            run = " ".join(shlex.quote(a) for a in job.argv)
            lines.append(f"cd {shlex.quote(job.out)} || exit 2; {run} >{shlex.quote(job.log)} 2>&1; "
                         "s=$?; echo $s >exit_status; exit $s")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        command = self.args.jobs_command.replace("{jobs}", shlex.quote(path))
        subprocess.run(command, shell=True)
        for job in jobs:
            try:
                with open(os.path.join(job.out, "exit_status")) as f:
                    job.returncode = int(f.read().strip() or 127)
            except (OSError, ValueError):
                job.returncode = 127  # not run

    def measure(self, x):
        values, residuals = [], []
        overrides = self.overrides(x)
        for t in self.spec.targets:
            runs = iter(t.runs())

            def stats_of(term, runs=runs):
                path, point = next(runs)
                job = runner.point_job(self.args.cli, os.path.splitext(os.path.basename(path))[0], path,
                                       {**point, **overrides}, os.path.join(self.work, "runs"))
                stats_path = os.path.join(job.out, "stats.json")
                return load_json(stats_path), stats_path
            value = figures.evaluate(t.fig, stats_of)
            values.append(value)
            residuals.append(t.weight * (value - t.value) / abs(t.value))
        return values, residuals

    def progress(self, x, result):
        values, residuals = result
        params = " ".join(f"{p.label}={p.as_run(v):g}" for p, v in zip(self.spec.params, x))
        res = " ".join(f"{t.label} {v:.4g} ({100 * (v - t.value) / abs(t.value):+.1f} %)"
                       for t, v in zip(self.spec.targets, values))
        cost = 0.5 * sum(r * r for r in residuals)
        print(f"calibrate: [{self.count}] {params} -> {res}; cost {cost:.3g}", file=sys.stderr)


def forward_jacobian(evaluator, params, step):
    """jac(x) for least_squares: forward differences, all n shifted points run as one batch.

    Each parameter moves by step x max(1, |x|) (backwards when that leaves its
    bounds); an integer parameter moves by at least 1 and the slope divides by
    the move its rounded runs really made."""
    def jac(x):
        shifted, moves = [], []
        for j, p in enumerate(params):
            h = step * max(1.0, abs(x[j]))
            if x[j] + h > p.high:
                h = -h
            y = list(x)
            y[j] = x[j] + h
            if p.integer and p.as_run(y[j]) == p.as_run(x[j]):
                y[j] = p.as_run(x[j]) + (1 if h > 0 else -1)
            shifted.append(y)
            moves.append(p.as_run(y[j]) - p.as_run(x[j]) if p.integer else h)
        f0, *fs = evaluator.batch([list(x)] + shifted)
        return [[(fs[j][i] - f0[i]) / moves[j] for j in range(len(params))] for i in range(len(f0))]
    return jac


def fit(spec, evaluator):
    try:
        from scipy.optimize import least_squares
    except ImportError:
        raise SystemExit("scipy is missing: install the Debian package python3-scipy "
                         "(scripts/install-deps.sh does) and run with /usr/bin/python3")
    x0 = [float(p.start) for p in spec.params]
    result = least_squares(lambda x: evaluator.batch([list(x)])[0], x0,
                           jac=forward_jacobian(evaluator, spec.params, spec.fit["diff_step"]),
                           bounds=([p.low for p in spec.params], [p.high for p in spec.params]),
                           x_scale="jac", method="trf", max_nfev=int(spec.fit["max_evaluations"]),
                           xtol=spec.fit["xtol"], ftol=spec.fit["ftol"])
    return result


# ---- the profile -----------------------------------------------------------------

def fmt(value):
    return f"{value:.4g}"


def residual_text(spec, values):
    parts = []
    for t, v in zip(spec.targets, values):
        unit = f" {t.unit}" if t.unit else ""
        parts.append(f"{t.label}: {fmt(v)}{unit} against {fmt(t.value)} ({100 * (v - t.value) / abs(t.value):+.1f} %)")
    return "; ".join(parts)


def write_profile(spec, args, out, best, values, result, evaluator):
    doc = {"profile": dict(spec.new_profile)}
    start_file = spec.profile.file
    doc["extends"] = spec.profile.arg if spec.profile.by_name else \
        os.path.relpath(start_file, os.path.dirname(os.path.abspath(out)))
    settings = (f"scripts/calibrate.py {shown(spec.path)}: {len(spec.params)} parameter(s) "
                f"({', '.join(p.path for p in spec.params)}) fitted by scipy.optimize.least_squares (trf, "
                f"forward differences of step {spec.fit['diff_step']:g}, relative residuals) from "
                f"{', '.join(f'{p.label}={p.start:g} in [{p.low:g}, {p.high:g}]' for p in spec.params)}; "
                f"{evaluator.count} evaluations, stopped: {result.message}")
    if spec.note:
        settings = f"{settings.rstrip('.')}. {spec.note}"
    own = {t.id: dict({"value": t.value}, **({"unit": t.unit} if t.unit else {}), source=t.source)
           for t in spec.targets if t.source}
    provenance = {}
    for p, v in zip(spec.params, best):
        node = doc
        parts = p.path.split(".")[1:]
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = p.as_run(v)
        entry = {"kind": "fitted", "to": list(dict.fromkeys(t.id for t in spec.targets)), "residual": residual_text(spec, values),
                 "note": settings}
        if own:
            entry["own_figures"] = own
        provenance[".".join(parts)] = entry
    doc["provenance"] = provenance
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(json.dumps(doc, indent=2) + "\n")


def main(argv=None):
    args = parse_args(argv)
    args.cli = os.path.abspath(args.cli)
    start = time.monotonic()
    try:
        spec = Spec(args.spec, args.cli, args.figures)
        name = spec.new_profile["name"]
        work = os.path.abspath(args.work or os.path.join(ROOT, "build", "calibrate", name))
        out = args.out or os.path.join(work, name + ".json")
        evaluator = Evaluator(spec, args, work)
        print(f"calibrate: {len(spec.params)} parameter(s), {len(spec.targets)} target(s), from profile "
              f"{spec.profile.name}; runs in {work}/", file=sys.stderr)
        result = fit(spec, evaluator)
        best = [p.as_run(v) for p, v in zip(spec.params, result.x)]
        evaluator.batch([best])  # run already, unless rounding moved it
        values, _ = evaluator.cache[evaluator.key(best)]
        write_profile(spec, args, out, best, values, result, evaluator)
    except InputError as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 2
    except RunFailed as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 1
    check = subprocess.run([args.cli, "profile", "check", os.path.abspath(out)], capture_output=True, text=True)
    for p, v in zip(spec.params, best):
        print(f"{p.path} = {v:g}")
    print(f"residuals: {residual_text(spec, values)}")
    print(f"profile {out} ({evaluator.count} evaluations in {evaluator.batches} batches, "
          f"{time.monotonic() - start:.1f} s wall)")
    if check.returncode != 0:
        print(f"calibrate: the written profile fails `smmu-vp profile check`: {check.stderr.strip()}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
