"""Tests for tools/report_lib/rebalance.py: tools/rebalance-bench's reading
of pillowfight's OPS/SEC lines, its window rates, medians and table, on
hand-made samples (no cluster needed).

Run by CTest: python3 rebalance_bench_test.py <repository root>.
"""

import os
import sys
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from report_lib import rebalance  # noqa: E402


class ProgressLines(unittest.TestCase):
    def test_a_load_line_gives_its_rate_ops_errors_and_retries(self):
        self.assertEqual(rebalance.parse_progress("OPS/SEC: 12073  (Load: 900511 ops, 0 errors, "
                                                  "248 retried)\n"), (12073, 900511, 0, 248))
        self.assertEqual(rebalance.parse_progress("OPS/SEC: 25945  (Load: 45904 ops, 2 errors)"),
                         (25945, 45904, 2, 0))

    def test_population_and_other_lines_are_not_load_progress(self):
        self.assertIsNone(rebalance.parse_progress(
            "OPS/SEC: 9000  (Populate 50%: 5000/10000 ops, 0 errors)"))
        self.assertIsNone(rebalance.parse_progress("Connecting: 3/8 clients ready"))


class Windows(unittest.TestCase):
    # 1000 ops/s for 10 s, then 500 ops/s for 10 s, sampled every second.
    SAMPLES = [(float(t), 1000 * t if t <= 10 else 10000 + 500 * (t - 10)) for t in range(21)]

    def test_a_window_reads_the_ops_between_its_ends(self):
        self.assertAlmostEqual(rebalance.window_rate(self.SAMPLES, 2.0, 8.0), 1000.0)
        self.assertAlmostEqual(rebalance.window_rate(self.SAMPLES, 12.0, 20.0), 500.0)

    def test_a_window_between_samples_is_interpolated(self):
        self.assertAlmostEqual(rebalance.ops_at(self.SAMPLES, 2.5), 2500.0)
        self.assertAlmostEqual(rebalance.window_rate(self.SAMPLES, 9.5, 10.5), 750.0)

    def test_a_window_the_samples_do_not_cover_has_no_rate(self):
        self.assertIsNone(rebalance.window_rate(self.SAMPLES, -1.0, 5.0))
        self.assertIsNone(rebalance.window_rate(self.SAMPLES, 15.0, 25.0))
        self.assertIsNone(rebalance.window_rate(self.SAMPLES, 5.0, 5.0))

    def test_the_slowest_second_is_the_lowest_line_inside_the_window(self):
        lines = [(1.0, 900), (2.0, 100), (3.0, 700), (4.0, 50)]
        self.assertEqual(rebalance.slowest_second(lines, 1.0, 3.0), 100)
        self.assertIsNone(rebalance.slowest_second(lines, 4.0, 5.0))


def run(rebalance_s, before, during, errors=0, retries=10, rebalanced=True):
    return {"rebalanced": rebalanced, "rebalance_s": rebalance_s if rebalanced else None,
            "ops_before": before, "ops_during": during, "ops_after": before,
            "during_vs_before": during / before, "after_vs_before": 1.0,
            "slowest_second": during / 2, "cpu_before": 1.0, "cpu_during": 1.5,
            "cpu_after": 1.0, "cpu_rebalance_s": 1.5 * rebalance_s if rebalanced else None,
            "map_revisions": 300, "errors": errors, "retries": retries}


class Rows(unittest.TestCase):
    def test_a_row_has_medians_and_sums_errors_and_retries(self):
        row = rebalance.median_row([run(60, 1000, 500), run(80, 1200, 900, errors=2),
                                    run(70, 1100, 600)])
        self.assertEqual(row["rebalance_s"], 70)
        self.assertEqual(row["ops_before"], 1100)
        self.assertEqual(row["ops_during"], 600)
        self.assertEqual(row["errors"], 2)
        self.assertEqual(row["retries"], 30)
        self.assertEqual(row["failed"], 0)

    def test_a_rebalance_that_did_not_finish_is_counted_not_measured(self):
        row = rebalance.median_row([run(60, 1000, 500), run(0, 2000, 1900, errors=1,
                                                            rebalanced=False)])
        self.assertEqual(row["rebalance_s"], 60)
        self.assertEqual(row["ops_during"], 500)
        self.assertEqual(row["failed"], 1)
        self.assertEqual(row["errors"], 1)

    def test_the_table_shows_each_durability_and_says_what_failed(self):
        none = rebalance.median_row([run(60, 1000, 500)])
        none["durability"] = "none"
        majority = rebalance.median_row([run(90, 400, 100, rebalanced=False)])
        majority["durability"] = "majority"
        text = rebalance.render({
            "machine": "2 CPU(s)", "rounds": 1, "load": "pillowfight",
            "settings": {"nodes": 3, "replicas": 1, "vbuckets": 1024, "items": 100000,
                         "size": 512, "window": 10.0},
            "rows": [none, majority]})
        self.assertIn("3 nodes + 1, 1024 vBuckets", text)
        none_line = next(line for line in text.splitlines() if line.startswith("none"))
        self.assertIn("60.0s", none_line)
        self.assertIn("0.50", none_line)  # during / before
        self.assertIn("1 of 1 rebalance(s) did not finish", text)


if __name__ == "__main__":
    unittest.main()
