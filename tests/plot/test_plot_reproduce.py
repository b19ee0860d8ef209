#!/usr/bin/python3
"""Tests of scripts/plot.py, scripts/reproduce.py and scripts/sensitivity.py on short runs.

  /usr/bin/python3 tests/plot/test_plot_reproduce.py --cli build/smmu-vp [PlotTest|SensitivityTest|ReportTest ...]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
PYTHON = "/usr/bin/python3"
CLI = os.path.join(ROOT, "build", "smmu-vp")
SCENARIO = os.path.join(ROOT, "platform", "scenarios", "seed004_swiotlb_nvme.json")
SHORT = ["--set", "scenario.apps.0.params.runtime_us=500", "--set", "scenario.apps.0.params.warmup_us=100"]
NVME_SECTION = "Seed 004: bounce buffers on the NVMe path (`fio`)"


def script(name, *args):
    return subprocess.run([PYTHON, os.path.join(SCRIPTS, name)] + list(args), capture_output=True, text=True)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def assert_images(test, base):
    with open(base + ".png", "rb") as f:
        test.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", base + ".png")
    test.assertTrue(ET.parse(base + ".svg").getroot().tag.endswith("svg"), base + ".svg")


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sweep = os.path.join(cls.tmp.name, "sweep")
        r = subprocess.run([CLI, "sweep", SCENARIO, "--out", cls.sweep, "-j", "2"] + SHORT,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        cls.stdout = r.stdout
        with open(os.path.join(cls.sweep, "sweep.json")) as f:
            cls.data = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_matplotlib_is_installed(self):
        r = subprocess.run([PYTHON, "-c", "import matplotlib"], capture_output=True)
        self.assertEqual(r.returncode, 0, "install the Debian package python3-matplotlib (scripts/install-deps.sh)")

    def test_sweep_plot_draws_the_sweep_values(self):
        out = os.path.join(self.tmp.name, "plots")
        r = script("plot.py", "sweep", self.sweep, "--column", "MB/s", "--column", "IOPS", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        for title, stem in (("MB/s", "mb_s"), ("IOPS", "iops")):
            base = os.path.join(out, f"seed004_swiotlb_nvme_{stem}")
            assert_images(self, base)
            rows = read_csv(base + ".csv")
            self.assertEqual(len(rows), len(self.data["points"]))
            for point in self.data["points"]:
                # x: the last axis (search); a series per load
                row = next(x for x in rows if x["series"] == point["labels"]["load"]
                           and x["search"] == point["labels"]["search"])
                self.assertAlmostEqual(float(row[title]), point["values"][title], places=6)

    def test_published_values_are_overlaid_and_svg_is_reproducible(self):
        figs = os.path.join(self.tmp.name, "figures.json")
        write_figures(figs, [figure("f", 900.0, {"rel": 0.2}, "value",
                                    [{"point": {"load": "small (4 KiB, 1 job)", "search": "area-first"},
                                      "column": "MB/s"}])])
        outs = [os.path.join(self.tmp.name, f"overlay{i}") for i in (1, 2)]
        for out in outs:
            r = script("plot.py", "sweep", self.sweep, "--column", "MB/s", "--figures", figs, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(os.path.join(outs[0], "seed004_swiotlb_nvme_mb_s.csv"))
        marked = [r for r in rows if r["published"]]
        self.assertEqual([(r["series"], r["search"], float(r["published"])) for r in marked],
                         [("small (4 KiB, 1 job)", "area-first", 900.0)])
        svgs = []
        for o in outs:
            with open(os.path.join(o, "seed004_swiotlb_nvme_mb_s.svg")) as f:
                svgs.append(f.read())
        self.assertEqual(svgs[0], svgs[1])

    def test_the_table_title_says_what_set_changed(self):
        # The scenario's title describes it as shipped; --set at every point goes with it.
        first = self.stdout.splitlines()[0]
        self.assertIn("(with --set scenario.apps.0.params.runtime_us=500 scenario.apps.0.params.warmup_us=100)", first)

    def test_identical_series_stay_visible(self):
        # Two series with the same values: each its own marker and dashes.
        sys.path.insert(0, SCRIPTS)
        from repro import plots
        data = {"name": "t", "sweep": {"title": "t", "axes": [{"name": "s", "values": {"a": {}, "b": {}}},
                                                            {"name": "n", "values": {"1": {}, "2": {}}}],
                                       "columns": [{"title": "v"}]},
                "points": [{"labels": {"s": s, "n": n}, "values": {"v": 5.0}, "status": "ok"}
                           for s in ("a", "b") for n in ("1", "2")]}
        base = os.path.join(self.tmp.name, "same")
        plots.sweep_column(data, "v", "n", {}, base)
        svg = ET.parse(base + ".svg").getroot()
        ids = {e.get("id") for e in svg.iter() if e.get("id")}
        self.assertIn("series-0", ids)
        self.assertIn("series-1", ids)

    def test_a_figure_measured_at_zero_is_drawn_not_dropped(self):
        sys.path.insert(0, SCRIPTS)
        from repro import plots
        base = os.path.join(self.tmp.name, "ratios")
        plots.ratio_chart([("fig-a", 1.1, 0.8, 1.2), ("fig-zero", 0.0, 0.8, 1.2)], base)
        svg = ET.parse(base + ".svg").getroot()
        ids = {e.get("id") for e in svg.iter() if e.get("id")}
        self.assertIn("zero-fig_zero", ids)
        self.assertNotIn("zero-fig_a", ids)

    def test_sweep_plot_y_axis_label_carries_the_unit(self):
        out = os.path.join(self.tmp.name, "units")
        r = script("plot.py", "sweep", self.sweep, "--column", "CPU", "--column", "clat p50",
                   "--column", "MB/s", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        columns = {c["title"]: c for c in self.data["sweep"]["columns"]}
        self.assertEqual(columns["CPU"]["unit"], "%")
        self.assertEqual(columns["clat p50"]["unit"], "us")
        # A column with a unit is labelled "title (unit)"; MB/s has none: its title is its unit.
        for title, stem, label in (("CPU", "cpu", "CPU (%)"), ("clat p50", "clat_p50", "clat p50 (us)"),
                                   ("MB/s", "mb_s", "MB/s")):
            svg = os.path.join(out, f"seed004_swiotlb_nvme_{stem}.svg")
            self.assertEqual(svg_text(svg, "ylabel"), label, svg)
            self.assertEqual(svg_text(svg, "xlabel"), "search", svg)

    def test_run_plots_latency_percentiles_utilisation_and_tlb(self):
        point = self.data["points"][0]
        stats_path = os.path.join(self.sweep, point["dir"], "stats.json")
        out = os.path.join(self.tmp.name, "run")
        r = script("plot.py", "run", stats_path, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(stats_path) as f:
            stats = json.load(f)
        util = read_csv(os.path.join(out, "cpu_utilisation.csv"))
        self.assertEqual(len(util), len(stats["cpus"]))
        for row in util:
            self.assertAlmostEqual(float(row["utilisation_pct"]), 100 * stats["cpus"][row["cpu"]]["utilisation"])
        # The six percentiles stats.json keeps, drawn as they are (not binned into a histogram).
        clat = read_csv(os.path.join(out, "latency_percentiles_sw_fio_clat_ns.csv"))
        self.assertEqual([row["percentile"] for row in clat], ["min", "p50", "p90", "p99", "p999", "max"])
        for row in clat:
            self.assertEqual(float(row["ns"]), stats["sw"]["fio"]["clat_ns"][row["percentile"]])
        svg = os.path.join(out, "latency_percentiles_sw_fio_clat_ns.svg")
        with open(svg) as f:
            text = f.read()
        self.assertIn("sw.fio.clat_ns: latency percentiles (", text)
        self.assertNotIn("histogram", text.lower())
        tlb = read_csv(os.path.join(out, "tlb_hit_rate_by_sid.csv"))
        by_sid = stats["smmu"]["tlb"]["by_sid"]
        self.assertGreaterEqual(len(by_sid), 1, f"{stats_path}: no smmu.tlb.by_sid entry to check")
        self.assertGreaterEqual(len(tlb), 1, "tlb_hit_rate_by_sid.csv has no StreamID row")
        self.assertEqual(sorted(row["stream_id"] for row in tlb), sorted(f"sid {s}" for s in by_sid))
        for row in tlb:
            sid = by_sid[row["stream_id"].split()[1]]
            self.assertAlmostEqual(float(row["hit_rate_pct"]), 100 * sid["hits"] / sid["lookups"])
        for base in ("cpu_utilisation", "tlb_hit_rate_by_sid", "latency_percentiles_sw_fio_clat_ns"):
            assert_images(self, os.path.join(out, base))

    def test_bad_input_exits_2_naming_file_and_field(self):
        r = script("plot.py", "sweep", os.path.join(self.tmp.name, "nothing"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("sweep.json", r.stderr)
        bad = os.path.join(self.tmp.name, "bad_stats.json")
        with open(bad, "w") as f:
            json.dump({"smmu": {"tlb": {}}}, f)
        r = script("plot.py", "run", bad, "--out", os.path.join(self.tmp.name, "bad"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad_stats.json", r.stderr)
        self.assertIn("'cpus'", r.stderr)
        r = script("plot.py", "sweep", self.sweep, "--column", "no such column")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such column", r.stderr)


def read_ranking(path):
    """A tornado CSV as [(parameter, low, high, figure at low, figure at high, base)]."""
    return [(r["parameter"], float(r["low"]), float(r["high"]), float(r["figure_low"]),
             float(r["figure_high"]), float(r["figure_base"])) for r in read_csv(path)]


def effect(row):
    _, _, _, f_low, f_high, base = row
    return max(abs(f_low - base), abs(f_high - base))


class SensitivityTest(unittest.TestCase):
    """scripts/sensitivity.py on its own, on a scenario given on the command line (not a figure)."""
    # seed000_camera: a one-axis sweep (walk_flush) whose points run in about 0.3 s each.
    CAMERA = ["--scenario", "seed000_camera", "--point", "va", "--column", "unmap p50"]
    PARAMS = ["platform.cpu.frequency_mhz", "platform.smmu.cmdq.sync_ns", "platform.smmu.cmdq.tlbi_ns"]

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def sensitivity(self, *args):
        return script("sensitivity.py", "--cli", CLI, "--out", os.path.join(self.tmp.name, "out"), *args)

    def test_point_and_params_ranked_by_effect_with_a_tornado(self):
        args = list(self.CAMERA)
        for p in self.PARAMS:
            args += ["--param", p]
        r = self.sensitivity(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        base = os.path.join(self.tmp.name, "out", "tornado_seed000_camera_unmap_p50")
        assert_images(self, base)
        rows = read_ranking(base + ".csv")
        self.assertEqual(sorted(r[0] for r in rows), sorted(self.PARAMS))
        effects = [effect(r) for r in rows]
        self.assertEqual(effects, sorted(effects, reverse=True), rows)
        self.assertGreater(effects[0], 0.0, "no parameter moved the figure")
        # One TLBI per granule: the unmap time follows the TLBI cost, which must rank first.
        self.assertEqual(rows[0][0], "platform.smmu.cmdq.tlbi_ns")
        for name, low, high, _, _, _ in rows:
            self.assertAlmostEqual(high / low, 3.0, places=6, msg=name)  # x0.5 and x1.5
        # The printed ranking is the CSV's, in the same order.
        printed = [line.split()[0] for line in r.stdout.splitlines() if line.startswith("  platform.")]
        self.assertEqual(printed, [r[0] for r in rows])

    def test_all_params_varies_every_timing_parameter(self):
        # smmu_stress runs in a few hundredths of a second, so ~100 runs take a few seconds.
        r = self.sensitivity("--scenario", "smmu_stress", "--stat", "sw.smmu_stress.invalidations_per_s_total",
                             "--all-params")
        self.assertEqual(r.returncode, 0, r.stderr)
        base = os.path.join(self.tmp.name, "out", "tornado_smmu_stress_sw_smmu_stress_invalidations_per_s_total")
        assert_images(self, base)
        rows = read_ranking(base + ".csv")
        names = [r[0] for r in rows]
        self.assertEqual(len(names), len(set(names)))
        for expected in ("platform.cpu.frequency_mhz", "platform.cpu.costs.function_call",
                         "platform.smmu.cmdq.sync_ns", "platform.dram.read_latency_ns"):
            self.assertIn(expected, names)
        for name in names:
            self.assertTrue(".costs." in name or name.endswith(("_ns", "_cycles", "_mhz", "_gbps")), name)
        effects = [effect(r) for r in rows]
        self.assertEqual(effects, sorted(effects, reverse=True))
        self.assertGreater(effects[0], 0.0)

    def test_bad_input_exits_2_naming_what_is_wrong(self):
        cases = [
            (["--scenario", "no_such_scenario", "--stat", "x", "--param", "platform.cpu.frequency_mhz"],
             ["no_such_scenario.json", "cannot read"]),
            (["--scenario", "seed000_camera", "--point", "nope", "--column", "lost",
              "--param", "platform.cpu.frequency_mhz"], ["axis 'walk_flush' has no value 'nope'"]),
            (["--scenario", "seed000_camera", "--point", "va", "--column", "no such column",
              "--param", "platform.cpu.frequency_mhz"], ["no column 'no such column'"]),
            (self.CAMERA, ["no parameters", "--param", "--all-params"]),
            (self.CAMERA + ["--param", "platform.cpu.no_such_ns"], ["config.json", "no field 'platform.cpu.no_such_ns'"]),
            (["--point", "va"], ["--figure", "--scenario"]),
        ]
        for args, needles in cases:
            with self.subTest(args=args):
                r = self.sensitivity(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertTrue(r.stderr.startswith("sensitivity: "), r.stderr)
                for needle in needles:
                    self.assertIn(needle, r.stderr)


def svg_text(path, gid):
    """The text of the SVG element with the given id (plots.py gives axis labels one)."""
    ns = "{http://www.w3.org/2000/svg}"
    for group in ET.parse(path).getroot().iter(ns + "g"):
        if group.get("id") == gid:
            return "".join(t.text or "" for t in group.iter(ns + "text"))
    raise AssertionError(f"{path}: no element with id '{gid}'")


def figure(fid, published, band, kind, terms, sensitivity=(), role="predict"):
    return {"id": fid, "role": role, "seed": "004", "description": fid, "published": published, "unit": "MB/s",
            "band": dict(band, source="test"), "scenario": "seed004_swiotlb_nvme", "section": NVME_SECTION,
            "measure": {"kind": kind, "terms": terms}, "sensitivity": list(sensitivity)}


def write_figures(path, figs):
    write_json_file(path, {"figures": figs})


def write_json_file(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


SMALL_AF = {"point": {"load": "small (4 KiB, 1 job)", "search": "area-first"}, "column": "MB/s"}
SMALL_PF = {"point": {"load": "small (4 KiB, 1 job)", "search": "pool-first"}, "column": "MB/s"}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def reproduce(self, figs, *extra):
        path = os.path.join(self.tmp.name, "figures.json")
        write_figures(path, figs)
        out = os.path.join(self.tmp.name, "out")
        r = script("reproduce.py", "--cli", CLI, "--figures", path, "--out", out, *extra)
        report = os.path.join(out, "report.md")
        text = ""
        if os.path.exists(report):
            with open(report) as f:
                text = f.read()
        return r, text, out

    def measured_mbps(self):
        out = os.path.join(self.tmp.name, "ref")
        subprocess.run([CLI, "sweep", SCENARIO, "--out", out, "-j", "2"], check=True, capture_output=True)
        with open(os.path.join(out, "sweep.json")) as f:
            points = json.load(f)["points"]
        return next(p["values"]["MB/s"] for p in points if p["dir"] == "small (4 KiB, 1 job)__area-first")

    def test_in_band_and_out_of_band_figures_exit_0(self):
        mbps = self.measured_mbps()
        r, report, out = self.reproduce([
            figure("inside", mbps * 1.1, {"rel": 0.2}, "value", [SMALL_AF]),
            figure("outside", 25.4, {"rel": 0.2}, "gain_percent", [SMALL_AF, SMALL_PF],
                   ["platform.cpu.costs.memcpy_64b"], role="fit")])
        self.assertEqual(r.returncode, 0, r.stderr)
        inside = next(line for line in report.splitlines() if line.startswith("| `inside`"))
        outside = next(line for line in report.splitlines() if line.startswith("| `outside`"))
        self.assertIn("| `inside` | predict |", inside)
        self.assertIn("| `outside` | fit |", outside)
        self.assertIn("| yes |", inside)
        # The report shows four significant digits.
        self.assertIn(f"{mbps:,.{max(0, 3 - len(str(int(mbps))) + 1)}f}", inside)
        self.assertIn("| **no** |", outside)
        self.assertIn("results.md#seed-004-bounce-buffers-on-the-nvme-path-fio", outside)
        # Predictions and fits are counted apart, in the report and on stdout.
        counts = "predicted: 1 of 1 in band; fitted: 0 of 1 in band; all: 1 of 2"
        self.assertIn(f"**{counts}.**", report)
        self.assertIn(counts, r.stdout)
        assert_images(self, os.path.join(out, "plots", "tornado_outside"))
        rows = read_csv(os.path.join(out, "plots", "tornado_outside.csv"))
        self.assertEqual([(r["parameter"], r["low"], r["high"]) for r in rows],
                         [("platform.cpu.costs.memcpy_64b", "6", "18")])

    def test_before_shows_the_earlier_run_and_what_entered_or_left_its_band(self):
        mbps = self.measured_mbps()
        figs = [figure("inside", mbps * 1.1, {"rel": 0.2}, "value", [SMALL_AF]),
                figure("outside", mbps * 3.0, {"rel": 0.2}, "value", [SMALL_AF])]
        r, _, out = self.reproduce(figs, "--no-sensitivity")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "figures_measured.json")) as f:
            earlier = json.load(f)
        self.assertEqual(earlier["band_counts"], "predicted: 1 of 2 in band; fitted: 0 of 0 in band; all: 1 of 2")
        self.assertAlmostEqual(earlier["figures"]["inside"]["value"], mbps, delta=mbps * 1e-9)
        self.assertEqual([earlier["figures"][i]["in_band"] for i in ("inside", "outside")], [True, False])
        # As if the earlier run had had "inside" out of its band and at another value.
        earlier["figures"]["inside"].update(value=1.5, in_band=False)
        earlier["band_counts"] = "predicted: 0 of 2 in band; fitted: 0 of 0 in band; all: 0 of 2"
        before = write_json_file(os.path.join(self.tmp.name, "before.json"), earlier)
        r, report, _ = self.reproduce(figs, "--no-sensitivity", "--before", before)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("before: predicted: 0 of 2 in band", r.stdout)
        self.assertIn("Entered their band: `inside`. Left it: none.", r.stdout)
        self.assertIn("| published | before | measured |", report)
        inside = next(line for line in report.splitlines() if line.startswith("| `inside`"))
        self.assertIn("| 1.500 MB/s |", inside)

    def test_each_reported_effect_is_judged_same_way_wrong_way_or_no_effect(self):
        mbps = self.measured_mbps()
        figs = [figure("ahead", mbps * 1.1, {"rel": 0.2}, "value", [SMALL_AF]),
                figure("behind", mbps * 1.1, {"rel": 0.2}, "value", [SMALL_AF]),
                figure("flat", 25.4, {"rel": 0.2}, "gain_percent", [SMALL_AF, SMALL_PF]),
                figure("paired", mbps * 1.5, {"rel": 0.2}, "value", [SMALL_AF]),
                figure("plain", mbps, {"rel": 0.2}, "value", [SMALL_PF])]
        figs[0]["direction"] = {"against": mbps * 0.5, "seed": "above", "claim": "faster than half"}
        # The seed 5 % above its reference; the model 5 % below it, far outside 5 % of that distance.
        figs[1]["direction"] = {"against": mbps * 1.05, "seed": "above", "claim": "faster still"}
        # Both searches give the same small-load bandwidth, so the gain is exactly 0.
        figs[2]["direction"] = {"against": 0, "seed": "above", "claim": "area-first gains"}
        # Against another figure: the seed's pair differs, the model's two points are the same run.
        figs[3]["direction"] = {"against": "plain", "seed": "above", "claim": "above plain"}
        r, report, out = self.reproduce(figs, "--no-sensitivity")
        self.assertEqual(r.returncode, 0, r.stderr)
        line = ("direction: 1 of 4 effects the seeds report go their way; wrong way: `behind`; "
                "no effect in the model: `flat`, `paired`")
        self.assertIn(line, r.stdout)
        self.assertIn(f"**{line}.**", report)
        rows = {l.split("|")[1].strip(): l for l in report.splitlines() if l.startswith("| `")}
        self.assertIn("| same (+", rows["`ahead`"])
        self.assertIn("| **wrong** (-", rows["`behind`"])
        self.assertIn("| no effect (0 against 0; seed above) |", rows["`flat`"])
        self.assertIn("against `plain`; seed above) |", rows["`paired`"])
        self.assertIn("| - |", rows["`plain`"])
        with open(os.path.join(out, "figures_measured.json")) as f:
            measured = json.load(f)
        self.assertEqual(measured["direction_counts"], line)
        self.assertEqual({k: v["direction"] for k, v in measured["figures"].items()},
                         {"ahead": "same", "behind": "wrong", "flat": "no effect", "paired": "no effect",
                          "plain": None})
        # Given back as --before with "behind" once going the seed's way: the flip is named.
        measured["figures"]["behind"]["direction"] = "same"
        before = write_json_file(os.path.join(self.tmp.name, "before.json"), measured)
        r, report, _ = self.reproduce(figs, "--no-sensitivity", "--before", before)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Direction changed: `behind` same -> wrong.", r.stdout)
        self.assertIn("Direction changed: `behind` same -> wrong.", report)

    def test_a_bad_direction_exits_2_naming_the_figure_and_key(self):
        base = figure("x", 10.0, {"rel": 0.2}, "value", [SMALL_AF])
        other = figure("y", 5.0, {"rel": 0.2}, "value", [SMALL_PF])
        cases = (
            ({"against": "nowhere", "seed": "above", "claim": "c"}, "'against' names no other figure ('nowhere')"),
            ({"against": 1, "seed": "up", "claim": "c"}, "'seed' must be \"above\" or \"below\""),
            ({"against": 1, "seed": "above"}, "no field 'claim'"),
            ({"against": [1], "seed": "above", "claim": "c"}, "'against' must be a number or a figure id"),
            ({"against": 20, "seed": "above", "claim": "c"}, "the published 10 is not above its reference 20"),
            ({"against": "y", "seed": "below", "claim": "c"}, "the published 10 is not below its reference 5"),
        )
        for direction, why in cases:
            with self.subTest(direction=direction):
                r, _, _ = self.reproduce([dict(base, direction=direction), other])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"figures.json: figures.0 (x): direction: {why}", r.stderr)
        path = write_json_file(os.path.join(self.tmp.name, "share.json"),
                               {"figures": [base], "no_effect_share": 1.5})
        r = script("reproduce.py", "--cli", CLI, "--figures", path, "--out", os.path.join(self.tmp.name, "o"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("share.json: 'no_effect_share' must be a number from 0 to below 1 (got 1.5)", r.stderr)

    def test_a_before_file_that_is_not_an_earlier_run_exits_2_naming_it(self):
        fig = figure("inside", 1.0, {"rel": 0.2}, "value", [SMALL_AF])
        missing = os.path.join(self.tmp.name, "missing.json")
        wrong = write_json_file(os.path.join(self.tmp.name, "wrong.json"), {"figures": {"inside": {"role": "x"}}})
        way = write_json_file(os.path.join(self.tmp.name, "way.json"), {
            "band_counts": "x", "figures": {"inside": {"role": "predict", "value": 1, "in_band": True,
                                                      "direction": "sideways"}}})
        for path, why in ((missing, "cannot read the earlier run's figures"),
                          (wrong, "not a figures_measured.json of make reproduce"),
                          (way, "figures.inside: 'direction' must be one of same, wrong, no effect or null")):
            with self.subTest(path=path):
                r, _, _ = self.reproduce([fig], "--no-sensitivity", "--before", path)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"reproduce: {path}: {why}", r.stderr)

    def test_a_failing_run_exits_1_and_is_listed(self):
        # Half of the platform's cores cannot hold the 4-job point: that run fails validation.
        four = {"point": {"load": "4way (4 KiB, 4 jobs)", "search": "area-first"}, "column": "MB/s"}
        r, report, _ = self.reproduce([figure("fails", 1000.0, {"rel": 0.2}, "value", [four],
                                              ["platform.cpu.count"])])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("## Failed runs", report)
        self.assertRegex(report, r"--set platform\.cpu\.count=\d+`: exit 2")

    def test_a_figure_without_a_role_exits_2_naming_it(self):
        for role in (None, "fitted"):
            with self.subTest(role=role):
                fig = figure("norole", 1.0, {"rel": 0.2}, "value", [SMALL_AF])
                if role is None:
                    del fig["role"]
                else:
                    fig["role"] = role
                r, _, _ = self.reproduce([fig])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("figures.json: figures.0 (norole): 'role' must be \"fit\" or \"predict\"", r.stderr)

    def test_bad_figures_file_exits_2(self):
        r, _, _ = self.reproduce([figure("x", 1.0, {"rel": 0.2}, "value",
                                         [{"point": {"load": "tiny", "search": "area-first"}, "column": "MB/s"}])])
        self.assertEqual(r.returncode, 2)
        self.assertIn("no value 'tiny'", r.stderr)


def main():
    global CLI
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cli", default=CLI, help="the smmu-vp binary")
    args, rest = ap.parse_known_args()
    CLI = os.path.abspath(args.cli)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("these tests need matplotlib: install the Debian package python3-matplotlib "
                 "(scripts/install-deps.sh) and run them with /usr/bin/python3")
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
