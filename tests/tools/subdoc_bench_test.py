"""Tests for tools/report_lib/subdoc_bench.py, the report's sub-document
section: the kvexec-pillowfight command lines of the two variants, the
per-load figures (server CPU per op), the medians and subdoc / fulldoc
ratios, the table (machine beside the title, failed statuses named), and
tools/report --render of a saved run of that section alone. No server is
started.

Run by CTest: python3 subdoc_bench_test.py <repository root>.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from report_lib import subdoc_bench  # noqa: E402


def sample(rate, cpu_us, errors=None):
    errors = errors or {}
    return {"ops": int(rate), "ops_per_second": rate, "cpu_us_per_op": cpu_us,
            "errors": sum(errors.values()), "error_names": errors}


RUNS = {
    "get-heavy": {"fulldoc": [sample(100000, 5.0), sample(90000, 6.0), sample(110000, 4.0)],
                  "subdoc": [sample(50000, 20.0), sample(40000, 25.0), sample(60000, 15.0)]},
    "set-heavy": {"fulldoc": [sample(80000, 10.0)],
                  "subdoc": [sample(40000, 30.0, {"MUTATE_IN: Not found (0x01)": 3})]},
}


def data():
    return {"rounds": 3, "seconds": 5, "settings": dict(subdoc_bench.SETTINGS),
            "load_avg_at_end": [1.0, 1.0, 1.0],
            "mixes": [subdoc_bench.summary(mix, pct, RUNS[mix])
                      for mix, pct in subdoc_bench.MIXES]}


class CommandLineTest(unittest.TestCase):
    def test_variants_differ_only_in_json_values_or_subdoc(self):
        full = subdoc_bench.load_args("fulldoc", 10, 2)
        sub = subdoc_bench.load_args("subdoc", 10, 2)
        self.assertIn("-J", full)
        self.assertNotIn("--subdoc", full)
        self.assertIn("--subdoc", sub)
        self.assertEqual([a for a in full if a != "-J"], [a for a in sub if a != "--subdoc"])

    def test_loads_reuse_the_population_without_durability(self):
        args = [str(a) for a in subdoc_bench.load_args("subdoc", 90, 5)]
        self.assertIn("-n", args)
        self.assertEqual(args[args.index("-r") + 1], "90")
        self.assertEqual(args[args.index("--duration") + 1], "5")
        self.assertEqual(args[args.index("-d") + 1], "none")
        self.assertEqual(args[args.index("-m") + 1], args[args.index("-M") + 1])

    def test_which_variant_goes_first_flips_every_round(self):
        self.assertEqual(subdoc_bench.round_order(0), ("fulldoc", "subdoc"))
        self.assertEqual(subdoc_bench.round_order(1), ("subdoc", "fulldoc"))
        self.assertEqual(subdoc_bench.round_order(2), ("fulldoc", "subdoc"))

    def test_get_heavy_and_set_heavy_mixes(self):
        self.assertEqual(subdoc_bench.MIXES, [("get-heavy", 10), ("set-heavy", 90)])
        self.assertGreaterEqual(subdoc_bench.MODES["full"][0], 3)
        self.assertEqual(subdoc_bench.MODES["quick"][0], 1)


class FiguresTest(unittest.TestCase):
    def test_sample_divides_server_cpu_by_the_loads_ops(self):
        result = {"load": {"ops": 200000, "opsPerSecond": 100000.0, "errorCount": 0,
                           "errors": {}}}
        s = subdoc_bench.sample_of(result, cpu_seconds=1.5)
        self.assertEqual(s["ops_per_second"], 100000.0)
        self.assertAlmostEqual(s["cpu_us_per_op"], 7.5)
        self.assertEqual(subdoc_bench.sample_of({"load": dict(result["load"], ops=0)}, 1.0)
                         ["cpu_us_per_op"], 0.0)

    def test_summary_is_medians_and_subdoc_over_fulldoc(self):
        m = data()["mixes"][0]
        self.assertEqual(m["fulldoc_ops_per_second"], 100000)
        self.assertEqual(m["subdoc_ops_per_second"], 50000)
        self.assertEqual(m["fulldoc_cpu_us_per_op"], 5.0)
        self.assertEqual(m["subdoc_cpu_us_per_op"], 20.0)
        self.assertAlmostEqual(m["ratio"], 0.5)
        self.assertAlmostEqual(m["cpu_ratio"], 4.0)
        self.assertEqual(data()["mixes"][1]["subdoc_errors"], 3)


class TableTest(unittest.TestCase):
    def test_table_names_the_machine_and_the_ratios(self):
        text = subdoc_bench.table(data(), "machine: 2 cores")
        lines = text.splitlines()
        self.assertTrue(lines[0].endswith("[machine: 2 cores]"))
        self.assertIn("median of 3 x 5 s rounds", lines[0])
        self.assertIn("get-heavy -r 10", lines[2])
        self.assertIn("0.50x", lines[2])
        self.assertIn("4.00x", lines[2])
        self.assertIn("set-heavy -r 90", lines[3])

    def test_failed_statuses_are_named(self):
        text = subdoc_bench.table(data())
        self.assertIn("WARNING set-heavy subdoc: 3 x MUTATE_IN: Not found (0x01)", text)
        self.assertNotIn("WARNING get-heavy", text)

    def test_report_renders_a_saved_run_of_this_section_alone(self):
        saved = {"context": {}, "machine": {"cores": 2, "usable_cores": 2}, "mode": "quick",
                 "benchmarks": [], "load_avg_at_end": [0.0, 0.0, 0.0],
                 "subdoc_bench": data()}
        with tempfile.TemporaryDirectory() as run_dir:
            path = os.path.join(run_dir, "results.json")
            with open(path, "w") as f:
                json.dump(saved, f)
            # tools/report runs itself with /usr/bin/python3 (Debian's matplotlib).
            out = subprocess.run([os.path.join(ROOT, "tools", "report"),
                                  "--render", path, "--no-plots"],
                                 capture_output=True, text=True, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("Sub-document ops vs whole document"), out.stdout)
        self.assertIn("[machine: 2 cores]", out.stdout.splitlines()[0])


if __name__ == "__main__":
    unittest.main()
