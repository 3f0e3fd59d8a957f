"""Tests for tools/report_lib/results.py: every benchmark executor_bench
runs (saved from `executor_bench --smoke --benchmark_format=json` in
executor_bench_smoke.json) is classified into a known family, so a renamed
benchmark cannot silently fall into "Other" and out of the report's tables.

Run by CTest: python3 results_test.py <repository root>. Refresh the saved
file when a benchmark is added or renamed on purpose.
"""

import os
import sys
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from report_lib import results  # noqa: E402

SAVED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "executor_bench_smoke.json")


class ClassifyTest(unittest.TestCase):
    def test_fixture_name(self):
        self.assertEqual(
            results._classify("ExecutorPoolFixture<Classic>/LongLivedScheduleRun_Classic/Tasks:16/real_time/threads:4"),
            ("ExecutorPoolFixture", "Classic", "LongLivedScheduleRun", "Tasks", 16, 4))

    def test_peer_name(self):
        self.assertEqual(
            results._classify("Peer<Asio>/TimeoutAddCancel_Asio/Timeouts:30000/real_time/threads:1"),
            ("Peer", "Asio", "TimeoutAddCancel", "Timeouts", 30000, 1))

    def test_footprint_name_without_threads(self):
        self.assertEqual(
            results._classify("Footprint<Wheel>/IdleCpu_Wheel/Tasks:30000/real_time"),
            ("Footprint", "Wheel", "IdleCpu", "Tasks", 30000, 1))

    def test_floors(self):
        self.assertEqual(results._classify("PingPong/real_time/threads:2")[:3],
                         ("Floor", "PingPong", "PingPong"))
        self.assertEqual(results._classify("Baseline/ClockNow/real_time")[:3],
                         ("Floor", "ClockNow", "Baseline"))

    def test_unknown_name_is_other(self):
        self.assertEqual(results._classify("Renamed/Thing/real_time")[0], "Other")


class SavedResultsTest(unittest.TestCase):
    def setUp(self):
        self.rows = results.rows_from(results.load(SAVED))

    def test_every_benchmark_has_a_family(self):
        self.assertTrue(self.rows)
        others = [r.name for r in self.rows if r.family == "Other"]
        self.assertEqual(others, [], "benchmarks the report cannot place")

    def test_iterations_suffix_is_folded(self):
        for r in self.rows:
            self.assertNotIn("/iterations:", r.name)

    def test_times_are_in_nanoseconds_and_positive(self):
        for r in self.rows:
            self.assertGreater(r.real_ns, 0.0, r.name)


if __name__ == "__main__":
    unittest.main()
