"""The rule between profiles and figures: never fit to a figure we claim to predict.

Every profile `smmu-vp profile list` names is read with `smmu-vp profile show
NAME --json`, which gives each timing value's provenance entry and the file
that states it. Every id in the "to" of a "fitted" entry must be a figure of
docs/figures.json with role "fit", or one of its micro-figures, or an id the
entry defines itself in "own_figures" with a source (a measurement of the
user's own machine). Anything else is an error naming the
profile file and the key.
"""
import json
import os
import subprocess

from . import figures
from .common import ROOT, InputError


def shown(path):
    """A path as messages show it: relative to the checkout when inside it."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def cli_json(cli, args, env=None):
    try:
        r = subprocess.run([cli] + args, capture_output=True, text=True, env=env)
    except OSError as e:
        raise InputError(f"{cli}: cannot run ({e.strerror})")
    if r.returncode != 0:
        raise InputError(f"{' '.join([os.path.basename(cli)] + args)} failed (exit {r.returncode}): "
                         f"{r.stderr.strip()}")
    return r.stdout


def profile_names(cli, env=None):
    """The names `smmu-vp profile list` prints (each followed by an indented title line)."""
    out = cli_json(cli, ["profile", "list"], env)
    return [line.strip() for line in out.splitlines() if line.strip() and not line[0].isspace()]


def provenance_key(entry, parameter, stated_in):
    """The key under which the file states the entry: the parameter, or a device_types key."""
    try:
        with open(stated_in) as f:
            prov = json.load(f).get("provenance", {})
    except (OSError, ValueError):
        return parameter
    if parameter in prov:
        return parameter
    for key, value in prov.items():
        if value == entry:
            return key
    return parameter


def own_figure_ok(entry, fid):
    own = entry.get("own_figures")
    if not isinstance(own, dict) or not isinstance(own.get(fid), dict):
        return False
    source = own[fid].get("source")
    return isinstance(source, dict) and all(isinstance(source.get(k), str) and source[k].strip()
                                            for k in ("quote", "address"))


def entry_errors(entry, key, stated_in, figs):
    """The errors of one fitted entry, each naming the file and key."""
    errors = []
    for fid in entry.get("to", []):
        role = figures.role_of(figs, fid)
        where = f"{shown(stated_in)}: provenance.{key}: fitted to {fid}"
        if role == "predict":
            errors.append(f"{where}, a figure marked predict (fit only to figures marked fit and to micro-figures)")
        elif role is None and not own_figure_ok(entry, fid):
            errors.append(f"{where}, which is no figure or micro-figure of docs/figures.json "
                          "(and the entry's own_figures does not define it with a source)")
    return errors


def profile_errors(cli, figs, env=None):
    """[message] for every fitted entry of every profile that breaks the rule; [] when all keep it."""
    errors, seen = [], set()
    for name in profile_names(cli, env):
        text = cli_json(cli, ["profile", "show", name, "--json"], env)
        try:
            profile = json.loads(text)
        except ValueError as e:
            raise InputError(f"smmu-vp profile show {name} --json: not JSON ({e})")
        for row in profile.get("values", []):
            entry = row.get("provenance")
            if not isinstance(entry, dict) or entry.get("kind") != "fitted":
                continue
            stated_in = row.get("stated_in", name)
            key = provenance_key(entry, row["parameter"], stated_in)
            if (stated_in, key) in seen:
                continue
            seen.add((stated_in, key))
            errors += entry_errors(entry, key, stated_in, figs)
    return errors


def check(cli, figures_path=None, env=None):
    """Raises InputError listing every violation."""
    figs = figures.load_figures(figures_path or os.path.join(ROOT, "docs", "figures.json"))
    errors = profile_errors(cli, figs, env)
    if errors:
        raise InputError("\n".join(errors))
