"""tools/rebalance-bench's arithmetic and table, apart from the cluster it
runs (no I/O here; tests/tools/rebalance_bench_test.py covers it).

A load's progress is a list of samples (seconds, ops): the bench's clock
when kvexec-pillowfight printed an OPS/SEC line, and the ops done so far
that the line states. Pillowfight prints one a second, so a window's rate
is read from the count interpolated linearly at each end of the window: a
window shorter than a few seconds is smeared over the seconds around it.
"""

import re
import statistics

PROGRESS = re.compile(r"^OPS/SEC: (\d+)\s+\(Load: (\d+) ops, (\d+) errors(?:, (\d+) retried)?\)")


def parse_progress(line):
    """(ops/s of the last second, ops so far, errors, retried) of a load's
    OPS/SEC line; None for any other line (the population's included)."""
    m = PROGRESS.match(line)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4) or 0)


def ops_at(samples, t):
    """The ops done at time t, interpolated between the samples around it
    (clamped to the first and last sample)."""
    if not samples:
        return 0.0
    if t <= samples[0][0]:
        return float(samples[0][1])
    for (t0, n0), (t1, n1) in zip(samples, samples[1:]):
        if t <= t1:
            return n0 + (n1 - n0) * (t - t0) / (t1 - t0) if t1 > t0 else float(n1)
    return float(samples[-1][1])


def window_rate(samples, start, end):
    """Ops per second between `start` and `end`; None when the window is
    empty or not covered by samples on both sides."""
    if end <= start or not samples or start < samples[0][0] or end > samples[-1][0]:
        return None
    return (ops_at(samples, end) - ops_at(samples, start)) / (end - start)


def slowest_second(lines, start, end):
    """The lowest OPS/SEC figure printed within [start, end] (each covers
    the second before it): the deepest dip; None if none was printed."""
    inside = [rate for t, rate in lines if start < t <= end]
    return min(inside) if inside else None


def ratio(a, b):
    return a / b if a is not None and b else None


MEDIAN_KEYS = ("rebalance_s", "ops_before", "ops_during", "ops_after", "during_vs_before",
               "after_vs_before", "slowest_second", "cpu_before", "cpu_during", "cpu_after",
               "cpu_rebalance_s", "map_revisions")


def median_row(runs):
    """Medians over the rounds of one durability whose rebalance finished
    (None where none has the figure: a cancelled rebalance's windows are
    not comparable); errors and retries are summed over every round."""
    finished = [r for r in runs if r["rebalanced"]]
    row = {}
    for key in MEDIAN_KEYS:
        values = [r[key] for r in finished if r.get(key) is not None]
        row[key] = statistics.median(values) if values else None
    row["errors"] = sum(r["errors"] for r in runs)
    row["retries"] = sum(r["retries"] for r in runs)
    row["failed"] = len(runs) - len(finished)
    row["rounds"] = len(runs)
    return row


def _num(value, fmt):
    return fmt % value if value is not None else "-"


def render(results):
    """report.txt: one row per durability, medians over rounds."""
    s = results["settings"]
    lines = ["Rebalance: %d nodes + 1, %d vBuckets, %d replica(s), %d items of %d bytes "
             "(tools/rebalance-bench, %s; medians of %d round(s))"
             % (s["nodes"], s["vbuckets"], s["replicas"], s["items"], s["size"],
                results["machine"], results["rounds"]),
             "load: " + results["load"],
             "windows: before %.0f s, during = the rebalance command's run, after %.0f s"
             % (s["window"], s["window"]),
             "",
             "%-11s %10s %10s %10s %10s %8s %8s %9s %12s %7s %8s" % (
                 "durability", "rebalance", "ops/s bef", "during", "after", "dur/bef",
                 "aft/bef", "worst 1s", "node CPU/s", "errors", "retried")]
    for row in results["rows"]:
        cpu = "%s/%s/%s" % (_num(row["cpu_before"], "%.2f"), _num(row["cpu_during"], "%.2f"),
                            _num(row["cpu_after"], "%.2f"))
        lines.append("%-11s %9ss %10s %10s %10s %8s %8s %9s %12s %7d %8d" % (
            row["durability"], _num(row["rebalance_s"], "%.1f"), _num(row["ops_before"], "%.0f"),
            _num(row["ops_during"], "%.0f"), _num(row["ops_after"], "%.0f"),
            _num(row["during_vs_before"], "%.2f"), _num(row["after_vs_before"], "%.2f"),
            _num(row["slowest_second"], "%.0f"), cpu, row["errors"], row["retries"]))
        if row["failed"]:
            lines.append("  %d of %d rebalance(s) did not finish (exit status not 0; the "
                         "medians leave them out): see results.json"
                         % (row["failed"], row["rounds"]))
    lines += ["",
              "rebalance: wall seconds of `kvexec-cluster rebalance` (request to exit 0); "
              "ops/s: pillowfight's",
              "writes over each window (its 1 s OPS/SEC counts, interpolated at the window's "
              "ends); worst 1s: its",
              "lowest OPS/SEC line during the rebalance; node CPU/s: the nodes' CPU seconds per "
              "wall second",
              "before/during/after; errors and retried: pillowfight's over the whole load, all "
              "rounds."]
    return "\n".join(lines)
