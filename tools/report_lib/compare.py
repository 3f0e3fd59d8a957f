"""Compare two saved runs as ratios, the way the seeds show before/after."""

import math

from report_lib import results
from report_lib.tables import human_rate


def _by_name(data):
    return {r.name: r for r in results.rows_from(data)}


def _metric(row):
    """(value, label, higher_is_better) that best describes a row."""
    if row.items_per_second:
        return row.items_per_second, "items/s", True
    for key in ("idle_cpu_pct", "bytes_per_task"):
        if key in row.counters:
            return row.counters[key], key, False
    return row.real_ns, "ns", False


def compare(path_a, path_b):
    """Rows present in both runs: A, B and B/A. Speed-ups read > 1."""
    a, b = _by_name(results.load(path_a)), _by_name(results.load(path_b))
    common = [n for n in b if n in a]
    width = max([len(n) for n in common] + [40]) + 2
    lines = ["%-*s %12s %12s %9s  %s" % (width, "Benchmark", "before (A)", "after (B)",
                                         "B/A", "metric"), ""]
    speedups = []
    for name in common:
        va, label, higher = _metric(a[name])
        vb = _metric(b[name])[0]
        ratio = (vb / va) if va else float("nan")
        better = ratio if higher else (1 / ratio if ratio else float("nan"))
        if better == better and better > 0:
            speedups.append(better)
        fmt = human_rate if label == "items/s" else (lambda v: "%.4g" % v)
        lines.append("%-*s %12s %12s %8.2fx  %s" % (width, name, fmt(va), fmt(vb), ratio, label))
    if speedups:
        gm = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        lines += ["", "%d rows in both runs; geometric mean of improvement (B over A, "
                      ">1 is better): %.2fx" % (len(speedups), gm)]
    only = sorted(set(a) ^ set(b))
    if only:
        lines.append("%d rows only in one run (not compared)" % len(only))
    return "\n".join(lines)
