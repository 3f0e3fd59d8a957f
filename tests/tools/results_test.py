"""Tests for tools/report_lib/results.py: every benchmark executor_bench
runs (saved from `executor_bench --smoke --benchmark_format=json` in
executor_bench_smoke.json) is classified into a known family, so a renamed
benchmark cannot silently fall into "Other" and out of the report's tables;
and tables.py / compare.py: the wall-span rate, the 8-thread column, the
machine's cores beside every table.

Run by CTest: python3 results_test.py <repository root>. Refresh the saved
file when a benchmark is added or renamed on purpose.
"""

import json
import os
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from report_lib import compare, engine_table, results, runner, server_bench, tables  # noqa: E402

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



def _run(name, gb_rate, span_rate=None, repetitions=1):
    """A results.json holding `repetitions` runs of one threaded row."""
    runs = []
    for i in range(repetitions):
        run = {"name": name, "run_name": name, "run_type": "iteration", "threads": 16,
               "iterations": 1000, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "us",
               "items_per_second": gb_rate + i, "cpu_ns_per_item": 3000.0}
        if span_rate is not None:
            run["wall_items_per_second"] = span_rate + i
        runs.append(run)
    return {"benchmarks": runs}


def _compare(a, b):
    """compare.compare() of two runs saved as a.json and b.json."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for label, data in (("a", a), ("b", b)):
            paths.append(os.path.join(d, label + ".json"))
            with open(paths[-1], "w") as f:
                json.dump(data, f)
        return compare.compare(*paths)


ROW = "ExecutorPoolFixture<Wheel>/OneShotOversubscribed_Wheel/real_time/threads:16"


class SpanRateTest(unittest.TestCase):
    """items/s is the wall-span rate when a run measured it: Google
    Benchmark's own figure overstates threaded rows whose threads finish
    apart, and would favour the implementation that lets some run ahead."""

    def test_span_rate_is_the_rate_and_gb_rate_is_kept(self):
        [row] = results.rows_from(_run(ROW, gb_rate=900e3, span_rate=650e3, repetitions=3))
        self.assertEqual(row.items_per_second, 650e3 + 1)  # the median of three
        self.assertEqual(row.gb_items_per_second, 900e3 + 1)
        self.assertTrue(results.measured_over_span(row))

    def test_run_without_span_keeps_gb_rate(self):
        [row] = results.rows_from(_run(ROW, gb_rate=900e3))
        self.assertEqual(row.items_per_second, 900e3)
        self.assertFalse(results.measured_over_span(row))

    def test_summary_says_which_rate_it_shows(self):
        span = tables.summary(results.rows_from(_run(ROW, 900e3, span_rate=650e3)), {})
        self.assertIn("items over each run's wall span", span)
        self.assertIn("650k", span)
        self.assertNotIn("900k", span)
        old = tables.summary(results.rows_from(_run(ROW, 900e3)), {})
        self.assertIn("this run predates the wall-span rate", old)

    def test_compare_of_mixed_runs_is_like_for_like(self):
        # Before: Google Benchmark's figure only. After: span 700k, GB 1M.
        # Like for like, 1M over 800k: 1.25x, not 700k over 800k.
        text = _compare(_run(ROW, gb_rate=800e3), _run(ROW, 1000e3, span_rate=700e3))
        line = next(l for l in text.splitlines() if l.startswith(ROW))
        self.assertIn("1.25x", line)
        self.assertIn("items/s*", line)
        self.assertIn("only one run measured items/s over its wall span", text)

    def test_compare_of_span_runs_uses_the_span(self):
        text = _compare(_run(ROW, 1000e3, span_rate=500e3), _run(ROW, 800e3, span_rate=600e3))
        line = next(l for l in text.splitlines() if l.startswith(ROW))
        self.assertIn("1.20x", line)
        self.assertNotIn("*", line)


def _threaded_run(cores, mhz=None, threads=(1, 2, 4, 8, 16)):
    """OneShot rows of Classic and Wheel at `threads`, from a machine of
    `cores` cores as Google Benchmark's context records it."""
    runs = []
    for impl in ("Classic", "Wheel"):
        for t in threads:
            name = ("ExecutorPoolFixture<%s>/OneShotScheduleRun_%s/real_time/threads:%d"
                    % (impl, impl, t))
            runs += _run(name, gb_rate=1000.0 * t)["benchmarks"]
    context = {"num_cpus": cores}
    if mhz:
        context["mhz_per_cpu"] = mhz
    return {"context": context, "benchmarks": runs}


class ThreadColumnsAndMachineTest(unittest.TestCase):
    """Issue 25: the 8-thread column, and the machine's cores beside every
    table (8 threads on 2 cores and on 16 are different experiments)."""

    def test_summary_has_the_8_thread_column(self):
        text = tables.summary(results.rows_from(_threaded_run(2)), _threaded_run(2))
        head = next(l for l in text.splitlines() if l.startswith("threads"))
        self.assertEqual(head.split()[1:6], ["1", "2", "4", "8", "16"])

    def test_every_table_title_names_the_machine(self):
        data = _threaded_run(16, mhz=3000)
        text = tables.summary(results.rows_from(data), data)
        titles = [l for l in text.splitlines() if "OneShotScheduleRun:" in l or "CPU per item" in l]
        self.assertEqual(len(titles), 2)
        for title in titles:
            self.assertIn("[machine: 16 cores, 3000 MHz]", title)
        machine = tables.machine_note(tables.machine_of(data))
        seed = tables.seed_table(results.rows_from(data), machine)
        self.assertEqual(seed.splitlines()[0], "machine: 16 cores, 3000 MHz")

    def test_recorded_cores_and_unknown_cores(self):
        recorded = {"machine": {"cores": 4, "usable_cores": 2}, "context": {"num_cpus": 4}}
        self.assertEqual(tables.machine_note(tables.machine_of(recorded)),
                         "machine: 4 cores (2 usable by the run)")
        self.assertEqual(tables.machine_note(tables.machine_of({})), "machine: ? cores")

    def test_runner_records_this_machine(self):
        self.assertEqual(runner.machine()["cores"], os.cpu_count())

    def test_quick_mode_runs_8_threads(self):
        import re
        quick = re.compile(runner.MODES["quick"]["filter"])
        for name in ("ExecutorPoolFixture<Wheel>/OneShotScheduleRun_Wheel/real_time/threads:8",
                     "Peer<TBB>/LongLivedScheduleRun_TBB/Tasks:16/real_time/threads:8",
                     "PingPong/real_time/threads:8"):
            self.assertTrue(quick.search(name), name)

    def test_engine_set_line_shows_every_thread_count(self):
        data = {"benchmarks": []}
        for t in (1, 8, 16):
            data["benchmarks"] += _run("EngineSet/Wheel/real_time/threads:%d" % t,
                                       gb_rate=1000.0 * t)["benchmarks"]
        text = engine_table.engine_block(results.rows_from(data), "machine: 2 cores")
        self.assertIn("[machine: 2 cores]", text.splitlines()[0])
        self.assertIn("1: 1k, 8: 8k, 16: 16k", text)

    def test_engine_get_line_by_document_count(self):
        data = {"benchmarks": []}
        for keys, rate in ((100000, 500e3), (1000, 2e6)):
            data["benchmarks"] += _run("EngineGet/Keys:%d/real_time" % keys,
                                       gb_rate=rate)["benchmarks"]
        text = engine_table.engine_block(results.rows_from(data), "machine: 2 cores")
        self.assertIn("by documents: 1k keys: 2M", text)
        self.assertIn("100k keys: 500k", text)

    def test_engine_streams_lines_per_backend_and_notify(self):
        # Seed 000's rows: Wake rows have no Notify part in their names.
        data = {"benchmarks": []}
        for backend in ("Wheel", "Classic"):
            for suffix in ("", "/Notify:WakeAndWait"):
                for streams in (0, 1, 3):
                    name = "EngineSetWithStreams/%s/Streams:%d%s/real_time" % (backend, streams,
                                                                               suffix)
                    rate = 1000.0 * (4 - streams)
                    run = _run(name, gb_rate=rate, span_rate=rate)
                    run["benchmarks"][0]["notify_share"] = 0.1 * streams
                    data["benchmarks"] += run["benchmarks"]
        text = engine_table.engine_block(results.rows_from(data), "machine: 2 cores")
        lines = [l for l in text.splitlines() if "streams per vBucket" in l]
        self.assertEqual([l.split()[0] for l in lines], ["Wheel"] * 2 + ["Classic"] * 2)
        self.assertIn("Notify:Wake       : 0: 4k (0.0%), 1: 3k (10.0%), 3: 1k (30.0%)", lines[0])
        self.assertIn("Notify:WakeAndWait: 0: 4k (0.0%), 1: 3k (10.0%), 3: 1k (30.0%)", lines[1])

    def test_server_table_names_the_machine(self):
        mix = {"mix": "set", "memcached_tps": 1.0, "kvexec_tps": 1.0, "ratio": 1.0,
               "memcached_cpu_us_per_request": 1.0, "kvexec_cpu_us_per_request": 1.0}
        text = server_bench.table({"rounds": 1, "seconds": 1, "mixes": [mix]}, "machine: 2 cores")
        self.assertIn("[machine: 2 cores]", text.splitlines()[0])

    def test_compare_prints_each_runs_cores_and_warns_when_they_differ(self):
        text = _compare(_threaded_run(2, mhz=2300), _threaded_run(16, mhz=3000))
        self.assertRegex(text, r"A: .*a\.json  \[machine: 2 cores, 2300 MHz\]")
        self.assertRegex(text, r"B: .*b\.json  \[machine: 16 cores, 3000 MHz\]")
        self.assertIn("WARNING: A ran on 2 cores and B on 16", text)
        self.assertIn("threads:8", text)

    def test_compare_of_one_machine_does_not_warn(self):
        text = _compare(_threaded_run(2), _threaded_run(2))
        self.assertNotIn("WARNING", text)


if __name__ == "__main__":
    unittest.main()
