"""The steps of scripts/reproduce.py: run, measure, study sensitivity, plot, report."""
import math
import os
import sys
import textwrap
import time

from . import directions, figures, plots, provenance, report, runner, sweepdata
from .common import InputError, load_json, point_dir_name
from .sensitivity import Study


def progress(job, n, total):
    status = "ok" if job.returncode == 0 else f"FAILED (exit {job.returncode}, log {job.log})"
    print(f"[{n}/{total}] {' '.join(os.path.basename(a) for a in job.argv[1:3])}: {status} "
          f"{job.seconds:.1f} s", file=sys.stderr)


def select(figs, only):
    if only:
        unknown = set(only) - {f["id"] for f in figs["figures"]}
        if unknown:
            raise InputError(f"no figure {', '.join(sorted(unknown))}")
        figs["figures"] = [f for f in figs["figures"] if f["id"] in only]
    return figs


def micro_measures(figs):
    """(micro-figure, value entry) for every micro-figure value the platform measures."""
    return [(m, v) for m in figs.get("micro_figures", []) for v in m["values"] if "measure" in v]


def scenario_runs(figs, args):
    """{scenario name: Job} running each scenario as docs/results.md does
    (the seed figures', then the measured micro-figures')."""
    jobs = {}
    names = [fig["scenario"] for fig in figs["figures"]]
    names += [v["measure"]["scenario"] for _, v in micro_measures(figs)]
    for name in names:
        if name not in jobs:
            scenario = figs["scenarios"][name]
            jobs[name] = runner.scenario_job(args.cli, name, figures.scenario_path(name),
                                             "sweep" in scenario, os.path.join(args.out, "runs"))
    return jobs


def stats_reader(job, scenario):
    """stats_of(term) for figures.evaluate over a scenario's own run or sweep."""
    def stats_of(term):
        if "labels" in term:
            directory = point_dir_name(term["labels"], scenario["sweep"]["axes"])
            path = os.path.join(job.out, directory, "stats.json")
        else:
            path = os.path.join(job.out, "stats.json")
        return load_json(path), path
    return stats_of


def measure(figs, jobs):
    """{figure id: value or None (its run failed)}."""
    values = {}
    for fig in figs["figures"]:
        job = jobs[fig["scenario"]]
        try:
            values[fig["id"]] = figures.evaluate(fig, stats_reader(job, figs["scenarios"][fig["scenario"]]))
        except InputError as e:
            if job.returncode == 0:
                raise
            print(f"reproduce: {fig['id']}: {e}", file=sys.stderr)
            values[fig["id"]] = None
    return values


def measure_micro(figs, jobs):
    """[(micro-figure, value entry, measured value or None)] for every measured micro-figure value."""
    rows = []
    for m, v in micro_measures(figs):
        name = v["measure"]["scenario"]
        job = jobs[name]
        term = v["measure"]["term"]
        try:
            stats, where = stats_reader(job, figs["scenarios"][name])(term)
            value = figures.term_value(term, stats, where)
        except InputError as e:
            if job.returncode == 0:
                raise
            print(f"reproduce: {m['id']}: {e}", file=sys.stderr)
            value = None
        rows.append((m, v, value))
    return rows


def sweep_plots(figs, jobs, out):
    """Per sweep scenario, a plot of every column a figure reads, with the published values."""
    made = {}
    for name, job in jobs.items():
        if job.returncode != 0 or "sweep" not in figs["scenarios"][name]:
            continue
        data = sweepdata.read_sweep(job.out)
        axes = data["sweep"]["axes"]
        x_axis = sweepdata.choose_x_axis(axes)
        wanted = {}
        for fig in figs["figures"]:
            if fig["scenario"] != name:
                continue
            for term in fig["measure"]["terms"]:
                overlay = wanted.setdefault(term["column"], {})
                if fig["measure"]["kind"] == "value" and fig.get("published") is not None:
                    key = (sweepdata.series_name(term["labels"], axes, x_axis, term["column"]),
                           term["labels"][x_axis])
                    overlay[key] = fig["published"]
        made[name] = []
        for title, overlay in wanted.items():
            base = os.path.join(out, "plots", f"{name}_{plots.slug(title)}")
            plots.sweep_column(data, title, x_axis, overlay, base)
            made[name].append((title, base))
    return made


def sensitivity(figs, args, factor, start):
    """Runs every figure's study; returns ({id: Study}, [jobs])."""
    out_root = os.path.join(args.out, "runs", "points")
    studies = {}
    for fig in figs["figures"]:
        name = fig["scenario"]
        studies[fig["id"]] = Study(fig, figs["scenarios"][name], figures.scenario_path(name),
                                   args.cli, out_root, fig.get("sensitivity", []), factor)
    base = unique([j for s in studies.values() for j in s.base_jobs()])
    print(f"reproduce: sensitivity, {len(base)} base point runs", file=sys.stderr)
    ran = runner.run_all(base, args.jobs, progress)
    failed_keys = {j.key for j in ran if j.returncode != 0}
    ok = {i: s for i, s in studies.items() if not any(j.key in failed_keys for j in s.base_jobs())}
    for study in ok.values():
        study.read_base_parameters()
    variations = unique([j for s in ok.values() for j in s.variation_jobs()])
    print(f"reproduce: sensitivity, {len(variations)} runs with a parameter changed "
          f"({time.monotonic() - start:.0f} s so far)", file=sys.stderr)
    ran += runner.run_all(variations, args.jobs, progress)
    failed_keys = {j.key for j in ran if j.returncode != 0}
    done = {i: s for i, s in ok.items()
            if not any(j.key in failed_keys for j in s.variation_jobs())}
    return done, ran


def unique(jobs):
    seen, out = set(), []
    for job in jobs:
        if job.key not in seen:
            seen.add(job.key)
            out.append(job)
    return out


def tornadoes(figs, studies, out):
    """{figure id: (base value, ranking rows, plot base)}."""
    result = {}
    for fig in figs["figures"]:
        study = studies.get(fig["id"])
        if study is None or not study.params:
            continue
        base_value = study.base_value()
        rows = study.ranking()
        base = os.path.join(out, "plots", f"tornado_{fig['id']}")
        plots.tornado(f"{fig['id']}\n{textwrap.shorten(fig['description'], 90)}", base_value, rows, fig["unit"], base)
        result[fig["id"]] = (base_value, rows, base)
    return result


def impossible_results(runs_dir):
    """[(stats.json path, [violations])] for every run whose results broke a physical invariant."""
    found = []
    for dirpath, _, files in os.walk(runs_dir):
        if "stats.json" in files:
            path = os.path.join(dirpath, "stats.json")
            broken = load_json(path).get("run", {}).get("invariant_violations")
            if broken:
                found.append((path, broken))
    return sorted(found)


def reproduce(args, start):
    figs = select(figures.load_figures(args.figures), args.only)
    figures.check_sections(figs, args.results_doc)
    args.before_doc = report.load_before(args.before) if getattr(args, "before", None) else None
    # Never fit to a figure we claim to predict: the profiles against docs/figures.json.
    provenance.check(args.cli)
    factor = args.factor if args.factor is not None else float(figs.get("factor", 0.5))
    os.makedirs(args.out, exist_ok=True)
    jobs = scenario_runs(figs, args)
    print(f"reproduce: {len(jobs)} scenarios, {args.jobs} at a time", file=sys.stderr)
    ran = runner.run_all(list(jobs.values()), args.jobs, progress)
    values = measure(figs, jobs)
    micro = measure_micro(figs, jobs)
    made = sweep_plots(figs, jobs, args.out)
    studies, extra = ({}, []) if args.no_sensitivity else sensitivity(figs, args, factor, start)
    ran += extra
    studied = tornadoes(figs, studies, args.out)
    failed = [j for j in ran if j.returncode != 0]
    # Every run, sweep points and sensitivity variations included, must be physically possible.
    impossible = impossible_results(os.path.join(args.out, "runs"))
    for path, broken in impossible:
        print(f"reproduce: {path}: results not physically possible: {'; '.join(broken)}", file=sys.stderr)
    wall = time.monotonic() - start
    path = report.write(args, figs, jobs, values, made, studied, factor, failed, len(ran), wall, micro, impossible)
    print(report.band_counts(figs, values))
    print(directions.counts(figs, values))
    if args.before_doc:
        print(f"before: {args.before_doc['band_counts']}")
        print(report.band_changes(figs, values, args.before_doc)[0])
    print(f"reproduce: {len(failed)} of {len(ran)} runs failed, {wall:.0f} s wall; report {path}", file=sys.stderr)
    # A broken invariant is listed in the report and on stderr (a bug to fix,
    # docs/results.md names the known one); the exit status stays that of the runs.
    return failed


def finite(value):
    return value is not None and not math.isnan(value)
