#!/usr/bin/python3
"""Tests of docs/figures.json's roles and micro-figures and of scripts/check-provenance.py.

  /usr/bin/python3 tests/calibrate/test_calibrate.py --cli build/smmu-vp [FiguresTest|ProvenanceTest ...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
PYTHON = "/usr/bin/python3"
CLI = os.path.join(ROOT, "build", "smmu-vp")
BASE = os.path.join(ROOT, "platform", "platforms", "base.json")
STRESS = os.path.join(ROOT, "platform", "scenarios", "smmu_stress.json")

sys.path.insert(0, SCRIPTS)
from repro import figures  # noqa: E402
from repro.common import InputError  # noqa: E402


def script(name, *args, env=None):
    return subprocess.run([PYTHON, os.path.join(SCRIPTS, name)] + list(args), capture_output=True, text=True,
                          env=env)


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
    return path


class FiguresTest(unittest.TestCase):
    """docs/figures.json: every figure's role, and the micro-figures' values and sources."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(ROOT, "docs", "figures.json")) as f:
            self.doc = json.load(f)

    def tearDown(self):
        self.tmp.cleanup()

    def load(self, doc):
        return figures.load_figures(write_json(os.path.join(self.tmp.name, "figures.json"), doc))

    def test_fits_are_the_four_fitted_figures_and_the_rest_predict(self):
        figs = figures.load_figures(os.path.join(ROOT, "docs", "figures.json"))
        fits = sorted(f["id"] for f in figs["figures"] if f["role"] == "fit")
        self.assertEqual(fits, ["s000_unmap_asid_32M", "s000_unmap_ratio_32M", "s000_unmap_va_32M",
                                "s002_per_element_32M"])
        self.assertEqual(sum(1 for f in figs["figures"] if f["role"] == "predict"), 29)
        ratio = next(f for f in figs["figures"] if f["id"] == "s000_unmap_ratio_32M")
        self.assertIn("s000_unmap_va_32M", ratio["note"])
        self.assertIn("s000_unmap_asid_32M", ratio["note"])

    def test_micro_figures_carry_the_published_values(self):
        figs = figures.load_figures(os.path.join(ROOT, "docs", "figures.json"))
        micro = {m["id"]: m for m in figs["micro_figures"]}
        by_cpus = {i: [(v["at"]["cpus"], v["published"]) for v in micro[i]["values"]]
                   for i in ("lkml_cmdq_map_unmap_before", "lkml_cmdq_map_unmap_after")}
        self.assertEqual(by_cpus["lkml_cmdq_map_unmap_before"], [(8, 282000), (16, 115000), (32, 36000), (64, 11000)])
        self.assertEqual(by_cpus["lkml_cmdq_map_unmap_after"], [(8, 302000), (16, 193000), (32, 80000), (64, 30000)])
        self.assertEqual([v["published"] for v in micro["lkml_cmd_sync_local"]["values"]], [240, 560])
        for m in micro.values():
            self.assertTrue(m["source"]["address"].startswith("https://"), m["id"])
        self.assertIn("282K\t115K\t36K\t11K", micro["lkml_cmdq_map_unmap_before"]["source"]["quote"])
        self.assertIn("it needs 240ns only", micro["lkml_cmd_sync_local"]["source"]["quote"])
        self.assertEqual(figures.role_of(figs, "lkml_cmd_sync_local"), "micro")
        self.assertEqual(figures.role_of(figs, "s001_nic_v53"), "predict")
        self.assertIsNone(figures.role_of(figs, "no_such_figure"))

    def test_a_figure_without_a_valid_role_is_named(self):
        for role in (None, "fitted"):
            with self.subTest(role=role):
                doc = json.loads(json.dumps(self.doc))
                fig = doc["figures"][4]
                fig.pop("role")
                if role:
                    fig["role"] = role
                with self.assertRaises(InputError) as e:
                    self.load(doc)
                self.assertIn("figures.json: figures.4 (s000_map_32M): 'role' must be \"fit\" or \"predict\"",
                              str(e.exception))

    def test_bad_micro_figures_are_named(self):
        cases = [
            (lambda m: m["source"].pop("quote"), "micro_figures.0 (lkml_cmdq_map_unmap_before): source: no field 'quote'"),
            (lambda m: m.update(values=[]), "micro_figures.0 (lkml_cmdq_map_unmap_before): 'values' must be a non-empty list"),
            (lambda m: m["values"][1].update(published="115K"), "values.1: no numeric 'published'"),
            (lambda m: m.update(id="s001_nic_v53"), "micro_figures.0 (s001_nic_v53): id 's001_nic_v53' used twice"),
            (lambda m: m["values"][0].update(measure={"scenario": "smmu_stress", "column": "x"}),
             "values.0: measure: a term of a scenario without a sweep needs 'stat'"),
        ]
        for change, needle in cases:
            with self.subTest(needle=needle):
                doc = json.loads(json.dumps(self.doc))
                change(doc["micro_figures"][0])
                with self.assertRaises(InputError) as e:
                    self.load(doc)
                self.assertIn(needle, str(e.exception))

    def test_a_micro_figure_value_may_say_how_to_measure_it(self):
        self.doc["micro_figures"][2]["values"][0]["measure"] = {
            "scenario": "smmu_stress", "stat": "smmu.cmdq.sync_latency_ns", "field": "p50"}
        figs = self.load(self.doc)
        self.assertEqual(figs["micro_figures"][2]["values"][0]["measure"]["term"]["stat"], "smmu.cmdq.sync_latency_ns")


def profile_dir(tmp, profiles):
    """A profile directory: base.json and the given {name: document}."""
    d = os.path.join(tmp, "profiles")
    os.makedirs(d, exist_ok=True)
    shutil.copy(BASE, d)
    for name, doc in profiles.items():
        write_json(os.path.join(d, name + ".json"), doc)
    return d


def fitted_profile(to, own=None, key="smmu.cmdq.sync_ns"):
    entry = {"kind": "fitted", "to": to, "residual": "240 ns against 240 (+0.0 %)"}
    if own is not None:
        entry["own_figures"] = own
    doc = {"profile": {"name": "x", "title": "a test profile", "machine": "none"}, "extends": "base",
           "provenance": {key: entry}}
    if key.startswith("device_types."):
        return doc  # an entry for every device of the type; the values stay the inherited ones
    section, name = key.rsplit(".", 1)
    node = doc
    for part in section.split("."):
        node = node.setdefault(part, {})
    node[name] = 30
    return doc


class ProvenanceTest(unittest.TestCase):
    """scripts/check-provenance.py: fitted values name fit figures or micro-figures, never a predict figure."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, profiles):
        env = dict(os.environ, SMMU_VP_PROFILES=profile_dir(self.tmp.name, profiles))
        return script("check-provenance.py", "--cli", CLI, env=env), os.path.join(self.tmp.name, "profiles")

    def test_the_shipped_profiles_keep_the_rule(self):
        r = script("check-provenance.py", "--cli", CLI)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("every fitted value names fit figures or micro-figures", r.stdout)

    def test_fit_figures_micro_figures_and_own_sourced_ids_pass(self):
        own = {"my_sync": {"value": 240, "source": {"quote": "CMD_SYNC 240 ns", "address": "lab notes p. 3"}}}
        r, _ = self.check({"x": fitted_profile(["s000_unmap_asid_32M", "lkml_cmd_sync_local", "my_sync"], own)})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 profile(s)", r.stdout)

    def test_a_predict_figure_or_unknown_id_exits_2_naming_file_and_key(self):
        r, d = self.check({"x": fitted_profile(["s000_unmap_asid_32M", "s001_nic_v53", "nothing_known"])})
        self.assertEqual(r.returncode, 2, r.stdout)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 2, r.stderr)
        self.assertTrue(lines[0].startswith(f"check-provenance: {d}/x.json: provenance.smmu.cmdq.sync_ns: "
                                            "fitted to s001_nic_v53, a figure marked predict"), lines[0])
        self.assertTrue(lines[1].startswith(f"check-provenance: {d}/x.json: provenance.smmu.cmdq.sync_ns: "
                                            "fitted to nothing_known, which is no figure"), lines[1])

    def test_an_own_id_without_a_source_is_unknown(self):
        r, d = self.check({"x": fitted_profile(["my_sync"], {"my_sync": {"value": 240}})})
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn(f"{d}/x.json: provenance.smmu.cmdq.sync_ns: fitted to my_sync, which is no figure", r.stderr)

    def test_a_device_type_key_is_named_as_the_file_states_it(self):
        doc = fitted_profile(["s001_fio_msi"], key="device_types.nvme.read_latency_us")
        r, d = self.check({"x": doc})
        self.assertEqual(r.returncode, 2, r.stdout)
        # One message for the entry, though four drives inherit it.
        self.assertEqual(r.stderr.count("fitted to s001_fio_msi"), 1, r.stderr)
        self.assertIn(f"{d}/x.json: provenance.device_types.nvme.read_latency_us: fitted to s001_fio_msi, "
                      "a figure marked predict", r.stderr)


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cli", default=CLI, help="the smmu-vp binary")
    args, rest = ap.parse_known_args()
    CLI = os.path.abspath(args.cli)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
