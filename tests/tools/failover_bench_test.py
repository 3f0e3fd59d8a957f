"""Tests for tools/report_lib/failover.py: tools/failover-bench's reading of
a round's writes (kill to the first and to the last key written again),
its medians and table, on hand-made writes (no cluster needed).

Run by CTest: python3 failover_bench_test.py <repository root>.
"""

import os
import sys
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from report_lib import failover  # noqa: E402
from report_lib.kvclient import AMBIGUOUS, FAILED, OK  # noqa: E402

KILL = 100.0


class OneRound(unittest.TestCase):
    WRITES = {
        # acknowledged before, lost with the node, back 4.5 s after the kill
        "a": [(98.0, 99.0, OK), (99.9, 100.1, AMBIGUOUS), (100.2, 104.5, OK)],
        # a write that started before the kill and ended after it does not count
        "b": [(99.5, 100.5, OK), (100.6, 103.0, FAILED), (103.1, 106.0, OK)],
    }

    def test_the_first_and_the_last_key_back_count_from_the_kill(self):
        r = failover.summarize(KILL, self.WRITES)
        self.assertAlmostEqual(r["first_s"], 4.5)
        self.assertAlmostEqual(r["all_s"], 6.0)
        self.assertEqual((r["keys_back"], r["keys"]), (2, 2))
        self.assertEqual(r["acked_before"], 2)
        self.assertEqual(r["ambiguous_after"], 1)

    def test_a_key_never_written_again_leaves_every_key_unknown(self):
        writes = dict(self.WRITES, c=[(99.0, 99.5, OK), (100.1, 160.0, FAILED)])
        r = failover.summarize(KILL, writes)
        self.assertAlmostEqual(r["first_s"], 4.5)
        self.assertIsNone(r["all_s"])
        self.assertIsNone(r["per_key_s"]["c"])


class Rounds(unittest.TestCase):
    def run_of(self, first, all_, map_s):
        return {"victim": "n1", "first_s": first, "all_s": all_, "map_s": map_s,
                "acked_before": 10, "ambiguous_after": 1}

    def test_medians_leave_out_incomplete_rounds_and_count_them(self):
        runs = [self.run_of(4.0, 4.5, 3.9), self.run_of(5.0, 5.5, 4.9),
                self.run_of(3.0, None, 2.9), self.run_of(6.0, 6.5, 5.9)]
        row = failover.median_row(runs)
        self.assertAlmostEqual(row["first_s"], 5.0)
        self.assertAlmostEqual(row["all_s"], 5.5)
        self.assertEqual(row["all_s_range"], (4.5, 6.5))
        self.assertEqual((row["rounds"], row["incomplete"]), (4, 1))
        self.assertEqual(row["ambiguous_after"], 4)

    def test_the_table_names_its_settings_and_every_round(self):
        runs = [self.run_of(4.0, 4.5, 3.9), self.run_of(3.0, None, 2.9)]
        results = {"machine": "vm, 2 CPUs", "runs": runs, "row": failover.median_row(runs),
                   "settings": {"nodes": 3, "replicas": 1, "vbuckets": 1024, "keys": 8,
                                "failover_timeout": 5, "warmup": 2.0}}
        text = failover.render(results)
        self.assertIn("--failover-timeout 5 s", text)
        self.assertIn("kill to every key written again        4.50 s", text)
        self.assertIn("1 of 2 round(s): a key was not written again", text)
        self.assertIn("round 2: victim n1, first 3.00 s, all -", text)


if __name__ == "__main__":
    unittest.main()
