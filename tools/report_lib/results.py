"""Parse executor_bench JSON into rows keyed by (implementation, scenario).

Names follow the seeds:
  ExecutorPoolFixture<Classic>/LongLivedScheduleRun_Classic/Tasks:16/real_time/threads:4
  Peer<Asio>/TimeoutAddCancel_Asio/Timeouts:30000/real_time/threads:1
  Footprint<Classic>/IdleCpu_Classic/Tasks:30000/iterations:1/real_time
  PingPong/real_time/threads:2      Baseline/ClockNow/real_time
Repetitions are folded into their median.
"""

import json
import re
import statistics
from dataclasses import dataclass, field

NAME = re.compile(
    r"^(?P<family>ExecutorPoolFixture|Peer|Footprint)<(?P<impl>[^>]+)>/"
    r"(?P<scenario>[A-Za-z]+)_[A-Za-z]+"
    r"(?:/(?P<param>[A-Za-z]+):(?P<value>\d+))?")
THREADS = re.compile(r"/threads:(\d+)")
ITERATIONS = re.compile(r"/iterations:\d+")

TIME_UNITS_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


@dataclass
class Row:
    name: str              # the run name, without /iterations:N
    family: str            # ExecutorPoolFixture, Peer, Footprint, Floor, Other
    impl: str              # Classic, Wheel, Asio, ..., PingPong, ClockNow
    scenario: str          # OneShotScheduleRun, ..., PingPong, Baseline
    param: str = ""        # Tasks, Timeouts or ""
    value: int = 0
    threads: int = 1
    real_ns: float = 0.0   # medians over repetitions
    cpu_ns: float = 0.0
    iterations: int = 0
    # Items over the run's wall span, first thread's start to last thread's
    # end (counter wall_items_per_second, bench/executor/parallel_run.h);
    # Google Benchmark's own figure for runs that do not measure it.
    items_per_second: float = 0.0
    # Google Benchmark's own: items over the threads' average loop time,
    # which reads higher than the span's rate when threads finish apart.
    gb_items_per_second: float = 0.0
    counters: dict = field(default_factory=dict)
    samples: int = 1


def _classify(name):
    """(family, impl, scenario, param, value, threads) from a run name."""
    threads = int(THREADS.search(name).group(1)) if THREADS.search(name) else 1
    m = NAME.match(name)
    if m:
        return (m["family"], m["impl"], m["scenario"], m["param"] or "",
                int(m["value"] or 0), threads)
    if name.startswith("PingPong"):
        return ("Floor", "PingPong", "PingPong", "", 0, threads)
    if name.startswith("Baseline/"):
        return ("Floor", name.split("/")[1], "Baseline", "", 0, threads)
    return ("Other", name.split("/")[0], name.split("/")[0], "", 0, threads)


STANDARD_KEYS = {"name", "run_name", "run_type", "family_index", "per_family_instance_index",
                 "repetitions", "repetition_index", "threads", "iterations", "real_time",
                 "cpu_time", "time_unit", "items_per_second", "aggregate_name",
                 "aggregate_unit", "error_occurred", "error_message", "label"}


SPAN_RATE = "wall_items_per_second"


def measured_over_span(row):
    """True if row.items_per_second is the wall-span rate."""
    return SPAN_RATE in row.counters


def _median(values):
    return statistics.median(values) if values else 0.0


def rows_from(data):
    """Rows in first-seen order, each the median of its repetitions."""
    groups = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        name = ITERATIONS.sub("", b.get("run_name", b["name"]))
        groups.setdefault(name, []).append(b)
    rows = []
    for name, runs in groups.items():
        unit = TIME_UNITS_NS[runs[0].get("time_unit", "ns")]
        family, impl, scenario, param, value, threads = _classify(name)
        counter_keys = [k for k in runs[0] if k not in STANDARD_KEYS]
        gb_rate = _median([r.get("items_per_second", 0.0) for r in runs])
        span_rates = [r[SPAN_RATE] for r in runs if SPAN_RATE in r]
        rows.append(Row(
            name=name, family=family, impl=impl, scenario=scenario, param=param, value=value,
            threads=threads,
            real_ns=_median([r["real_time"] * unit for r in runs]),
            cpu_ns=_median([r["cpu_time"] * unit for r in runs]),
            iterations=int(_median([r["iterations"] for r in runs])),
            items_per_second=_median(span_rates) if span_rates else gb_rate,
            gb_items_per_second=gb_rate,
            counters={k: _median([r[k] for r in runs if k in r]) for k in counter_keys},
            samples=len(runs)))
    return rows


def errors_from(data):
    return [(b["name"], b.get("error_message", "")) for b in data["benchmarks"]
            if b.get("error_occurred")]


def load(path):
    """Loads a results.json (or a report directory holding one)."""
    if not path.endswith(".json"):
        path = path.rstrip("/") + "/results.json"
    with open(path) as f:
        return json.load(f)
