#!/usr/bin/python3
"""Tests of docs/figures.json's roles and micro-figures, scripts/check-provenance.py and scripts/calibrate.py.

  /usr/bin/python3 tests/calibrate/test_calibrate.py --cli build/smmu-vp [FiguresTest|ProvenanceTest|CalibrateTest ...]
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
from repro import directions, figures  # noqa: E402
from repro.common import InputError  # noqa: E402
import calibrate  # noqa: E402

FIGURES = os.path.join(ROOT, "docs", "figures.json")


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

    def test_fits_are_the_six_fitted_figures_and_the_rest_predict(self):
        figs = figures.load_figures(os.path.join(ROOT, "docs", "figures.json"))
        fits = sorted(f["id"] for f in figs["figures"] if f["role"] == "fit")
        self.assertEqual(fits, ["s000_unmap_asid_32M", "s000_unmap_ratio_32M", "s000_unmap_va_32M",
                                "s000_unmap_va_4K", "s001_fio_msi", "s002_per_element_32M"])
        self.assertEqual(sum(1 for f in figs["figures"] if f["role"] == "predict"), 27)  # s001_iova_bench_after retired
        # Every fit figure but the ratio of two (its note names them) is one a
        # shipped profile's fitted value names.
        named = set()
        pdir = os.path.join(ROOT, "platform", "platforms")
        for name in os.listdir(pdir):
            with open(os.path.join(pdir, name)) as fh:
                for entry in json.load(fh).get("provenance", {}).values():
                    if entry.get("kind") == "fitted":
                        named.update(entry["to"])
        self.assertEqual(sorted(set(fits) - named), ["s000_unmap_ratio_32M"])
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
                fig = doc["figures"][5]
                fig.pop("role")
                if role:
                    fig["role"] = role
                with self.assertRaises(InputError) as e:
                    self.load(doc)
                self.assertIn("figures.json: figures.5 (s000_map_32M): 'role' must be \"fit\" or \"predict\"",
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


class DirectionsTest(unittest.TestCase):
    """scripts/repro/directions.py: which way the model goes against each effect a seed reports."""

    def figs(self, *defs, share=0.05):
        """defs: (id, published, direction or None)."""
        out = []
        for fid, published, direction in defs:
            fig = {"id": fid, "unit": "x", "published": published}
            if direction:
                fig["direction"] = dict(direction, claim="c")
            out.append(fig)
        return {"figures": out, "no_effect_share": share}

    def verdict(self, figs, values, fid):
        return directions.verdicts(figs, values).get(fid, (None,))[0]

    def test_same_wrong_and_no_effect_against_a_number(self):
        # The seed 1.5 above its reference 1; within 5 % of that, 0.075, is no effect.
        figs = self.figs(("r", 2.5, {"against": 1, "seed": "above"}))
        for value, want in ((1.3, "same"), (0.9, "wrong"), (1.07, "no effect"), (0.93, "no effect"),
                            (1.08, "same"), (0.92, "wrong")):
            with self.subTest(value=value):
                self.assertEqual(self.verdict(figs, {"r": value}, "r"), want)

    def test_below_and_against_another_figure(self):
        figs = self.figs(("before", 100.0, None), ("after", 40.0, {"against": "before", "seed": "below"}))
        # The model's reference is the other figure's measured value, not its published one.
        self.assertEqual(self.verdict(figs, {"before": 50.0, "after": 45.0}, "after"), "same")
        self.assertEqual(self.verdict(figs, {"before": 50.0, "after": 55.0}, "after"), "wrong")
        self.assertEqual(self.verdict(figs, {"before": 50.0, "after": 48.0}, "after"), "no effect")  # |2| <= 3
        self.assertEqual(self.verdict(figs, {"before": 50.0, "after": 45.0}, "before"), None)  # no direction

    def test_without_a_published_number_only_the_reference_itself_is_no_effect(self):
        figs = self.figs(("drops", None, {"against": 0, "seed": "above"}))
        self.assertEqual(self.verdict(figs, {"drops": 0}, "drops"), "no effect")
        self.assertEqual(self.verdict(figs, {"drops": 1}, "drops"), "same")

    def test_an_unmeasured_value_or_a_left_out_reference_has_no_verdict(self):
        figs = self.figs(("a", 2.0, {"against": "b", "seed": "above"}))  # "b" left out, as by --only
        self.assertIsNone(self.verdict(figs, {"a": 3.0}, "a"))
        figs = self.figs(("a", 2.0, {"against": 1, "seed": "above"}))
        self.assertIsNone(self.verdict(figs, {"a": float("nan")}, "a"))
        self.assertIsNone(self.verdict(figs, {"a": None}, "a"))
        self.assertIn("not measured: `a`", directions.counts(figs, {"a": None}))

    def test_the_shipped_figures_claim_an_effect_wherever_the_seed_compares(self):
        figs = figures.load_figures(os.path.join(ROOT, "docs", "figures.json"))
        claimed = {f["id"]: f["direction"] for f in figs["figures"] if "direction" in f}
        self.assertEqual(len(claimed), 21)
        # Every speed-up or gain the seeds publish is judged against no change.
        for f in figs["figures"]:
            if f["measure"]["kind"] == "ratio":
                self.assertEqual(claimed[f["id"]]["against"], 1, f["id"])
            if f["measure"]["kind"] == "gain_percent":
                self.assertEqual(claimed[f["id"]]["against"], 0, f["id"])


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
        doc = fitted_profile(["s001_fio_baseline"], key="device_types.nvme.read_latency_us")
        r, d = self.check({"x": doc})
        self.assertEqual(r.returncode, 2, r.stdout)
        # One message for the entry, though four drives inherit it.
        self.assertEqual(r.stderr.count("fitted to s001_fio_baseline"), 1, r.stderr)
        self.assertIn(f"{d}/x.json: provenance.device_types.nvme.read_latency_us: fitted to s001_fio_baseline, "
                      "a figure marked predict", r.stderr)


# The test's machine: smmu_stress (4 cores, 200 invalidations each, 0.03 s a run) at these values.
TRUE = {"platform.smmu.cmdq.sync_ns": 25.0, "platform.smmu.cmdq.tlbi_ns": 70.0}
READ = {"sync_mean": ("smmu.cmdq.sync_latency_ns", "mean"), "command_mean": ("smmu.cmdq.command_latency_ns", "mean")}


def measured(tmp, values, scenario=STRESS):
    out = os.path.join(tmp, "truth")
    argv = [CLI, "run", scenario, "--quiet", "--out", out]
    for k, v in values.items():
        argv += ["--set", f"{k}={v}"]
    subprocess.run(argv, check=True, capture_output=True)
    with open(os.path.join(out, "stats.json")) as f:
        stats = json.load(f)
    result = {}
    for tid, (path, field) in READ.items():
        node = stats
        for part in path.split("."):
            node = node[part]
        result[tid] = node[field]
    return result


class CalibrateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.truth = measured(self.tmp.name, TRUE)

    def tearDown(self):
        self.tmp.cleanup()

    def spec(self, **changes):
        spec = {
            "profile": "base",
            "new_profile": {"name": "testsoc", "title": "base fitted to two SMMU figures", "machine": "a test"},
            "parameters": {"platform.smmu.cmdq.sync_ns": {"min": 5, "max": 100, "start": 60},
                           "platform.smmu.cmdq.tlbi_ns": {"min": 10, "max": 200, "start": 150}},
            "targets": [{"id": tid, "source": {"quote": f"{path} {field}", "address": "this test"},
                         "scenario": "smmu_stress", "stat": path, "field": field, "value": self.truth[tid],
                         "unit": "ns"} for tid, (path, field) in READ.items()],
        }
        spec.update(changes)
        return write_json(os.path.join(self.tmp.name, "spec.json"), spec)

    def calibrate(self, spec, *extra):
        out = os.path.join(self.tmp.name, "testsoc.json")
        r = script("calibrate.py", spec, "--cli", CLI, "--work", os.path.join(self.tmp.name, "work"),
                   "--out", out, *extra)
        return r, out

    def check_recovered(self, r, out):
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            profile = json.load(f)
        self.assertEqual(profile["extends"], "base")
        self.assertEqual(profile["profile"]["name"], "testsoc")
        fitted = {"platform.smmu.cmdq.sync_ns": profile["smmu"]["cmdq"]["sync_ns"],
                  "platform.smmu.cmdq.tlbi_ns": profile["smmu"]["cmdq"]["tlbi_ns"]}
        for key, value in TRUE.items():
            self.assertAlmostEqual(fitted[key] / value, 1.0, delta=0.02, msg=f"{key}: {fitted[key]} for {value}")
        for key in ("smmu.cmdq.sync_ns", "smmu.cmdq.tlbi_ns"):
            entry = profile["provenance"][key]
            self.assertEqual(entry["kind"], "fitted")
            self.assertEqual(entry["to"], ["sync_mean", "command_mean"])
            self.assertRegex(entry["residual"], r"^sync_mean: [0-9.]+ ns against [0-9.]+ \([+-]\d+\.\d %\); "
                                                r"command_mean: [0-9.]+ ns against [0-9.]+ \([+-]\d+\.\d %\)$")
            self.assertIn("least_squares", entry["note"])
            self.assertEqual(sorted(entry["own_figures"]), ["command_mean", "sync_mean"])
        # Progress on stderr: one line per evaluation with the parameters and the residuals.
        evaluations = [line for line in r.stderr.splitlines() if line.startswith("calibrate: [")]
        self.assertTrue(evaluations[0].startswith("calibrate: [1] sync_ns=60 tlbi_ns=150 -> sync_mean "),
                        evaluations[0])
        self.assertGreaterEqual(len(evaluations), 4)
        # The profile passes `smmu-vp profile check`, and a scenario on it measures the targets.
        check = subprocess.run([CLI, "profile", "check", out], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stderr)
        with open(STRESS) as f:
            scenario = json.load(f)
        scenario["platform"] = out
        on_profile = measured(self.tmp.name, {}, write_json(os.path.join(self.tmp.name, "on_profile.json"), scenario))
        for tid, value in self.truth.items():
            self.assertAlmostEqual(on_profile[tid] / value, 1.0, delta=0.005, msg=tid)
        # And it keeps the provenance rule: its own ids carry their source.
        d = profile_dir(self.tmp.name, {})
        shutil.copy(out, d)
        check = script("check-provenance.py", "--cli", CLI, env=dict(os.environ, SMMU_VP_PROFILES=d))
        self.assertEqual(check.returncode, 0, check.stderr)
        return profile

    def test_recovers_the_values_the_targets_were_measured_at(self):
        r, out = self.calibrate(self.spec(), "-j", "2")
        self.check_recovered(r, out)

    def test_a_jobs_command_runs_each_batch_from_a_jobs_file(self):
        r, out = self.calibrate(self.spec(), "--jobs-command", "parallel --will-cite -j 2 < {jobs}")
        self.check_recovered(r, out)
        batches = sorted(os.listdir(os.path.join(self.tmp.name, "work")))
        self.assertIn("batch001", batches)
        with open(os.path.join(self.tmp.name, "work", "batch002", "jobs.txt")) as f:
            lines = f.read().splitlines()
        # The first Jacobian's batch: one point per parameter, shifted by 5 % (the start ran in batch001).
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("--set platform.smmu.cmdq.sync_ns=63.0 --set platform.smmu.cmdq.tlbi_ns=150.0 ", lines[0])
        self.assertIn("--set platform.smmu.cmdq.sync_ns=60.0 --set platform.smmu.cmdq.tlbi_ns=157.5 ", lines[1])
        for line in lines:
            self.assertIn(" run ", line)
            self.assertTrue(line.endswith("s=$?; echo $s >exit_status; exit $s"), line)

    def test_bad_specs_exit_2_naming_the_key(self):
        own = {"id": "mine", "scenario": "smmu_stress", "stat": "smmu.cmdq.syncs", "value": 10,
               "source": {"quote": "q", "address": "a"}}
        cases = [
            ({"parameters": {"platform.smmu.cmdq.sync_ns": {"min": 20, "max": 100, "start": 10}}},
             "parameters.platform.smmu.cmdq.sync_ns: start is outside [20, 100]"),
            ({"parameters": {"platform.smmu.cmdq.sync_ns": {"min": 20, "max": 100}}},
             "parameters.platform.smmu.cmdq.sync_ns: start (the profile's value 10) is outside [20, 100]"),
            ({"parameters": {"platform.smmu.cmdq.sync_ns": {"min": 5}}},
             "parameters.platform.smmu.cmdq.sync_ns.max: required"),
            ({"targets": [{"id": "s001_nic_v53", "value": 50}]},
             "targets.0 (s001_nic_v53): s001_nic_v53 is a figure marked predict"),
            ({"targets": [dict(own, source=None)]}, "targets.0 (mine).source: no field 'quote'"),
            ({"targets": [{k: v for k, v in own.items() if k != "source"}]},
             "targets.0 (mine): 'mine' is no figure of docs/figures.json; your own target needs 'source'"),
            ({"targets": [{k: v for k, v in own.items() if k != "value"}]}, "targets.0 (mine).value: required"),
            ({"targets": [dict(own, point="x")]}, "has no sweep; read a 'stat'"),
            ({"profile": "no_such_profile"}, "profile: smmu-vp profile show no_such_profile --json failed"),
            ({"targets": [dict(own, weight=2, speed=1)]}, "targets.0.speed: unknown key"),
        ]
        for change, needle in cases:
            with self.subTest(change=change):
                r, out = self.calibrate(self.spec(**change))
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertTrue(r.stderr.startswith(f"calibrate: {self.tmp.name}/spec.json: "), r.stderr)
                self.assertIn(needle, r.stderr)
                self.assertFalse(os.path.exists(out))

    def test_a_micro_figure_point_is_a_target_with_its_measure_and_value(self):
        at = lambda cpus: {"id": "lkml_cmdq_map_unmap_v59", "at": {"cpus": cpus}}
        spec = calibrate.Spec(self.spec(targets=[at(2), at("32")]), CLI, FIGURES)
        self.assertEqual([t.label for t in spec.targets],
                         ["lkml_cmdq_map_unmap_v59 at cpus 2", "lkml_cmdq_map_unmap_v59 at cpus 32"])
        self.assertEqual([t.value for t in spec.targets], [453000, 33600])
        # Each runs its own point of the micro-figure's scenario, on the profile being calibrated.
        runs = [t.runs() for t in spec.targets]
        self.assertTrue(all(path.endswith("lkml_cmdq_map_unmap.json") for (path, _), in runs), runs)
        self.assertEqual([o["platform.cpu.count"] for (_, o), in runs], [2, 32])
        self.assertTrue(all(o["platform"].endswith("base.json") for (_, o), in runs), runs)
        # The same point twice, a point the micro-figure lacks, "at" on no micro-figure: exit 2.
        cases = [([at(2), at(2)], "targets.1 (lkml_cmdq_map_unmap_v59): id used by another target at the same point"),
                 ([at(3)], 'targets.0 (lkml_cmdq_map_unmap_v59).at: {"cpus": 3} is no point of lkml_cmdq_map_unmap_v59 '
                           '(its points: {"cpus": 2}; {"cpus": 4}'),
                 ([{"id": "s000_unmap_va_4K", "at": {"cpus": 2}}],
                  "targets.0 (s000_unmap_va_4K).at: names a point of a micro-figure, and 's000_unmap_va_4K' is none")]
        for targets, needle in cases:
            with self.subTest(targets=targets):
                r, out = self.calibrate(self.spec(targets=targets))
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(needle, r.stderr)

    def test_the_shipped_calibration_specs_are_valid(self):
        d = os.path.join(ROOT, "platform", "calibrations")
        names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
        self.assertIn("kunpeng920_cmdq.json", names)
        for name in names:
            with self.subTest(spec=name):
                spec = calibrate.Spec(os.path.join(d, name), CLI, FIGURES)
                self.assertGreater(len(spec.targets), 0)
                # Each value it fits is fitted in its profile, which names this file.
                with open(spec.profile.file) as f:
                    provenance = json.load(f)["provenance"]
                for p in spec.params:
                    entry = provenance.get(p.path[len("platform."):], {})
                    self.assertEqual(entry.get("kind"), "fitted", p.path)
                    self.assertIn(f"platform/calibrations/{name}", entry.get("note", ""), p.path)

    def test_parameters_are_named_by_the_shortest_tail_no_other_shares(self):
        spec = calibrate.Spec(os.path.join(ROOT, "platform", "calibrations", "kunpeng920_cmdq.json"), CLI, FIGURES)
        self.assertEqual([p.label for p in spec.params],
                         ["tlbi_ns", "costs.iommu_driver_op", "cost_spread.iommu_driver_op"])

    def test_a_scenario_on_another_profile_runs_on_the_calibrated_one(self):
        # The same targets from a copy of smmu_stress that names another
        # profile (a slower command decode): the runs get --set platform=base,
        # so the fit recovers the same values.
        other = write_json(os.path.join(self.tmp.name, "other.json"),
                           {"profile": {"name": "other", "title": "t", "machine": "m"}, "extends": BASE,
                            "smmu": {"cmdq": {"decode_ns": 40}},
                            "provenance": {"smmu.cmdq.decode_ns": {"kind": "guess", "reasoning": "a test"}}})
        with open(STRESS) as f:
            scenario = json.load(f)
        scenario["platform"] = other
        path = write_json(os.path.join(self.tmp.name, "stress_other.json"), scenario)
        spec = json.load(open(self.spec()))
        for t in spec["targets"]:
            t["scenario"] = path
        r, out = self.calibrate(write_json(os.path.join(self.tmp.name, "spec_other.json"), spec))
        self.check_recovered(r, out)

    def test_a_failing_run_exits_1_naming_its_log(self):
        spec = self.spec(parameters={"platform.smmu.cmdq.sync_ns": {"min": -50, "max": 100, "start": -10}})
        r, out = self.calibrate(spec)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("run(s) failed", r.stderr)
        self.assertIn("platform.smmu.cmdq.sync_ns=-10", r.stderr)
        self.assertIn(".log", r.stderr)
        self.assertFalse(os.path.exists(out))


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cli", default=CLI, help="the smmu-vp binary")
    args, rest = ap.parse_known_args()
    CLI = os.path.abspath(args.cli)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
