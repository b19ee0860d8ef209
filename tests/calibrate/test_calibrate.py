#!/usr/bin/python3
"""Tests of docs/figures.json's roles and micro-figures.

  /usr/bin/python3 tests/calibrate/test_calibrate.py [FiguresTest ...]
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


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cli", default=CLI, help="the smmu-vp binary")
    args, rest = ap.parse_known_args()
    CLI = os.path.abspath(args.cli)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
