"""Tests for tools/report_lib/persist_render.py: the ratios, the fdatasyncs
per durable write and the floor's bound that tools/persist-latency prints,
the one-node and two-node rows side by side, on a small hand-made
results.json (no server needed); and persist_run's merge of the nodes'
histograms.

Run by CTest: python3 persist_render_test.py <repository root>.
"""

import json
import os
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from report_lib import persist_render, persist_run  # noqa: E402

MS = 1000 * 1000


def run(name, cache, backend, rate, mean_ms, p99_ms, writes, fdatasyncs, nodes=None):
    hist = {"count": writes, "mean": mean_ms * MS, "p50": mean_ms * MS, "p90": p99_ms * MS,
            "p99": p99_ms * MS, "p999": p99_ms * MS, "max": p99_ms * MS,
            "buckets": [[mean_ms * MS, writes // 2], [p99_ms * MS, writes - writes // 2]]}
    extra = {"nodes": nodes} if nodes else {}  # older results.json: no "nodes"
    return {"name": name, "cache": cache, "backend": backend, "fdatasyncs": fdatasyncs,
            "serverCpuSeconds": 1.0, **extra,
            "pillowfight": {"load": {"opsPerSecond": rate, "errorCount": 0,
                                     "histograms": {"SET": hist}},
                            "server": {"histograms": {persist_render.HISTOGRAM: hist}}}}


DATA = {"mode": "quick", "machine": {"cpus": 2}, "floor": {
    "one": {"us_mean": 250.0, "us_p99": 400.0, "syncs_per_second": 4000.0},
    "parallel": {"files": 4, "syncs_per_second": 10000.0}},
    "settings": {"clients": 200, "batch": 1, "size": 512, "items": 100, "cycles": 10,
                 "vbuckets": 1024, "shards": 4, "noneCycles": 10},
    "runs": [run("cache off", False, "wheel", 4000, 30, 60, 1000, 1000),
             run("cache on", True, "wheel", 5000, 20, 40, 1000, 500),
             run("cache on, Classic", True, "classic", 2500, 40, 120, 1000, 500)],
    "none": []}


def report_block_of(data):
    """tools/report's block with `data` as the latest saved run."""
    with tempfile.TemporaryDirectory() as repo:
        run_dir = os.path.join(repo, "out", "persist-latency", "20261124T000000Z-quick")
        os.makedirs(run_dir)
        with open(os.path.join(run_dir, "results.json"), "w") as f:
            json.dump(data, f)
        return persist_render.report_block(repo)


class PersistRenderTest(unittest.TestCase):
    def test_ratios_are_cache_off_over_on_and_classic_over_wheel(self):
        table = persist_render.comparison_table(DATA["runs"])
        self.assertIn("cache off / cache on (Wheel): mean 1.50x, p99 1.50x, throughput 0.80x",
                      table)
        self.assertIn("Classic / Wheel (cache on): mean 2.00x, p99 3.00x, throughput 0.50x",
                      table)

    def test_bound_is_parallel_floor_times_writes_per_fdatasync(self):
        lines = persist_render.bound_lines(DATA)
        # cache on: 2 writes per fdatasync, so 10000 syncs/s allow 20000 writes/s.
        self.assertIn("5000 durable writes/s = 25% of the floor's bound 20000/s", lines)
        self.assertIn("4000 durable writes/s = 40% of the floor's bound 10000/s", lines)

    def test_side_by_side_has_one_column_per_run_and_the_means(self):
        text = persist_render.side_by_side(DATA["runs"])
        self.assertIn("cache on, Classic", text.splitlines()[1])
        self.assertIn("Avg", text.splitlines()[-1])
        self.assertIn("20ms", text.splitlines()[-1])

    def test_each_configuration_is_shown_by_its_median_round(self):
        data = dict(DATA)
        data["runs"] = [run("cache on", True, "wheel", rate, 20, 40, 1000, 500)
                        for rate in (9000, 1000, 5000)]
        chosen = persist_render.representative_runs(data)
        self.assertEqual(len(chosen), 1)
        self.assertEqual(persist_render.durable_rate(chosen[0]), 5000)
        self.assertIn("9000/s (mean 20ms), 1000/s (mean 20ms), 5000/s (mean 20ms)",
                      persist_render.rounds_lines(data))

    def test_one_node_results_render_as_before(self):
        text = persist_render.render(DATA)
        self.assertNotIn("One node:", text)
        self.assertNotIn("vs 1 node", text)
        self.assertIn("cache off, 1 node ", persist_render.bound_lines(DATA))

    def test_two_node_rows_beside_the_one_node_rows_with_their_ratios(self):
        data = dict(DATA)
        data["runs"] = DATA["runs"] + [
            run("cache off", False, "wheel", 2000, 60, 240, 1000, 2000, nodes=2),
            run("cache on", True, "wheel", 4000, 30, 80, 1000, 1000, nodes=2)]
        text = persist_render.render(data)
        self.assertIn("One node:", text)
        self.assertIn("2 nodes (tools/cluster-run, 1 replica", text)
        rows = [line.split() for line in persist_render.nodes_table(
            persist_render.representative_runs(data)).splitlines()[1:]]
        self.assertEqual([r[:3] for r in rows[:3]], [["cache", "off", "1"], ["cache", "off", "2"],
                                                     ["cache", "on", "1"]])
        # two nodes / one node: writes/s, mean, p99
        self.assertEqual(rows[1][-3:], ["0.50x,", "2.00x,", "4.00x"])
        self.assertEqual(rows[3][-3:], ["0.80x,", "1.50x,", "2.00x"])
        block = report_block_of(data)
        self.assertIn("1 node: cache off / cache on (Wheel): mean 1.50x", block)
        self.assertIn("2 nodes: cache off / cache on (Wheel): mean 2.00x", block)
        self.assertIn("0.50x, 2.00x, 4.00x", block)

    def test_merged_histogram_sums_counts_and_keeps_percentiles_between_the_nodes(self):
        def hist(count, mean, p, buckets):
            return {"count": count, "mean": mean, "p50": p[0], "p90": p[1], "p99": p[2],
                    "p999": p[3], "max": p[4], "buckets": buckets}
        a = hist(100, 3000, (3000, 3500, 3900, 4000, 4000), [[2047, 10], [4095, 90]])
        b = hist(300, 5000, (5000, 6000, 7000, 7500, 8000), [[4095, 100], [8191, 200]])
        merged = persist_run.merge_histograms([a, b])
        self.assertEqual(merged["count"], 400)
        self.assertEqual(merged["mean"], 4500)
        self.assertEqual(merged["max"], 8000)
        self.assertEqual(merged["buckets"], [[2047, 10], [4095, 190], [8191, 200]])
        for key in ("p50", "p90", "p99", "p999"):
            self.assertTrue(a[key] <= merged[key] <= b[key], key)
        # Half the writes are at or below 4095, in the buckets: p50 is there.
        self.assertLessEqual(merged["p50"], 4095)
        # One node's merge is that node's own percentiles.
        self.assertEqual(persist_run.merge_histograms([b, {}])["p99"], 7000)

    def test_report_block_names_the_runs_own_machine(self):
        # tools/report shows the latest saved run, which may come from
        # another machine than the report's: its own core count.
        block = report_block_of(DATA)
        self.assertIn("[machine: 2 cores]", block.splitlines()[0])


if __name__ == "__main__":
    unittest.main()
