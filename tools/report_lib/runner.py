"""Run the benchmark binaries for one report mode and merge their JSON."""

import json
import os
import subprocess
import sys

from report_lib import server_bench, subdoc_bench

# Modes: which rows, how long each, how many repetitions (medians are taken
# over the repetitions). Footprint rows measure for a fixed time and always
# run once, in a fresh process, before anything else has used memory.
# Quick mode runs every thread count of the hand-off rows (the summary's
# columns; 8 adds ~11 rows, ~10 s on 2 cores) but fewer timeout grids.
SCENARIOS_QUICK = "|".join([
    "OneShotScheduleRun_[A-Za-z]+/real_time/threads:(1|2|4|8|16)$",
    "LongLivedScheduleRun_[A-Za-z]+/Tasks:16/real_time/threads:(1|2|4|8|16)$",
    "TimeoutAddCancel_[A-Za-z]+/Timeouts:(1000|4096|30000)/real_time/threads:(1|4)$",
    "TimeoutAddCancel_[A-Za-z]+/Timeouts:1000000/real_time/threads:1$",
    "OneShotOversubscribed_[A-Za-z]+/real_time/threads:16$",
    "LongLivedOversubscribed_[A-Za-z]+/Tasks:16/real_time/threads:16$",
    "SparseWakeCpu_",
    "^PingPong/real_time/threads:(1|2|4|8|16)$",
    "^Baseline",
])
SCENARIOS_ALL = "^(ExecutorPoolFixture|Peer|PingPong|Baseline)"

# engine_args: engine_bench (when built), likewise unfiltered.
# storage_args: storage_bench (when built) runs once, unfiltered; its setup
# dominates (~30 s on 2 cores), so quick mode keeps its runs short; smoke
# mode uses its own --smoke (a few iterations each).
MODES = {
    "quick": {"filter": SCENARIOS_QUICK, "min_time": "0.15", "repetitions": 3,
              "storage_args": ["--benchmark_min_time=0.05"],
              "engine_args": ["--benchmark_min_time=0.2"]},
    "full": {"filter": SCENARIOS_ALL, "min_time": "0.5", "repetitions": 3,
             "storage_args": ["--benchmark_min_time=0.5"],
             "engine_args": ["--benchmark_min_time=0.5", "--benchmark_repetitions=3"]},
    "smoke": {"filter": SCENARIOS_ALL, "min_time": None, "repetitions": 1,
              "storage_args": ["--smoke"], "engine_args": ["--smoke"]},
}


def _invoke(binary, args, json_path, console):
    cmd = [binary] + args + ["--benchmark_out=" + json_path, "--benchmark_out_format=json"]
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=console, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        raise SystemExit("benchmark failed (exit %d): %s; see %s"
                         % (proc.returncode, binary, console.name))
    with open(json_path) as f:
        return json.load(f)


def _scenario_args(mode):
    spec = MODES[mode]
    args = ["--benchmark_filter=" + spec["filter"]]
    if mode == "smoke":
        args.append("--smoke")
    else:
        args.append("--benchmark_min_time=" + spec["min_time"])
    if spec["repetitions"] > 1:
        args.append("--benchmark_repetitions=%d" % spec["repetitions"])
    return args


def machine():
    """The cores of the machine running the report, saved with its results:
    every table prints them, and --compare warns when two runs differ.
    usable: the cores this process may run on (taskset, cpusets)."""
    return {"cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0))}


# Sections tools/report --only can run alone (without the executor
# benchmarks).
SECTIONS = ("server", "subdoc")


def _benchmarks(binaries, mode, outdir):
    """Runs the benchmark binaries of `mode`; returns (context, benchmarks)."""
    console_path = os.path.join(outdir, "console.txt")
    with open(console_path, "w") as console:
        exe = binaries["executor_bench"]
        footprint_args = ["--benchmark_filter=^Footprint"] + (["--smoke"] if mode == "smoke" else [])
        parts = [_invoke(exe, footprint_args, os.path.join(outdir, "footprint.json"), console),
                 _invoke(exe, _scenario_args(mode), os.path.join(outdir, "scenarios.json"), console)]
        if "storage_bench" in binaries:
            parts.append(_invoke(binaries["storage_bench"], MODES[mode]["storage_args"],
                                 os.path.join(outdir, "storage.json"), console))
        if "engine_bench" in binaries:
            parts.append(_invoke(binaries["engine_bench"], MODES[mode]["engine_args"],
                                 os.path.join(outdir, "engine.json"), console))
    return parts[1]["context"], [b for p in parts for b in p["benchmarks"]]


def run(binaries, mode, outdir, only=None):
    """Runs every benchmark of `mode` (or only the section named, one of
    SECTIONS); writes and returns the merged JSON."""
    merged = {"context": {}, "machine": machine(), "mode": mode, "benchmarks": []}
    if only is None:
        merged["context"], merged["benchmarks"] = _benchmarks(binaries, mode, outdir)
    merged["load_avg_at_end"] = list(os.getloadavg())
    if only in (None, "server") and "kvexec-server" in binaries and server_bench.available():
        print("+ kvexec-server vs memcached (memcaslap)", file=sys.stderr, flush=True)
        merged["server_bench"] = server_bench.run(binaries["kvexec-server"], mode)
    if only in (None, "subdoc") and subdoc_bench.available(binaries):
        print("+ sub-document ops vs whole document (kvexec-pillowfight)", file=sys.stderr,
              flush=True)
        merged["subdoc_bench"] = subdoc_bench.run(binaries["kvexec-server"],
                                                  binaries["kvexec-pillowfight"], mode)
    path = os.path.join(outdir, "results.json")
    with open(path, "w") as f:
        json.dump(merged, f, indent=1)
    return merged, path
