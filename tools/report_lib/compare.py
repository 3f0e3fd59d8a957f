"""Compare two saved runs as ratios, the way the seeds show before/after."""

import math

from report_lib import results
from report_lib.tables import cpu_per_item, human_ns, human_rate


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


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _ratio(v):
    return "%.2fx" % v if v >= 0.1 else "%.2gx" % v


def compare(path_a, path_b):
    """Rows present in both runs: A, B and B/A, then the geometric mean of
    the improvement per implementation and scenario (> 1: B is better)."""
    a, b = _by_name(results.load(path_a)), _by_name(results.load(path_b))
    common = [n for n in b if n in a]
    width = max([len(n) for n in common] + [40]) + 2
    lines = ["%-*s %12s %12s %9s  %-8s %21s" % (width, "Benchmark", "before (A)", "after (B)",
                                                "B/A", "metric", "CPU/item A -> B"), ""]
    groups = {}
    for name in common:
        va, label, higher = _metric(a[name])
        vb = _metric(b[name])[0]
        ratio = (vb / va) if va else float("nan")
        if ratio == ratio and ratio > 0:
            key = (b[name].impl, b[name].scenario)
            groups.setdefault(key, []).append(ratio if higher else 1 / ratio)
        fmt = human_rate if label == "items/s" else (lambda v: "%.4g" % v)
        ca, cb = cpu_per_item(a[name]), cpu_per_item(b[name])
        cpu = "%9s -> %-9s" % (human_ns(ca), human_ns(cb)) if ca and cb else ""
        lines.append("%-*s %12s %12s %9s  %-8s %21s" % (width, name, fmt(va), fmt(vb),
                                                        _ratio(ratio), label, cpu))
    lines += ["", "Improvement, B over A (geometric mean; > 1 is better):"]
    for (impl, scenario), values in groups.items():
        lines.append("  %-10s %-22s %9s  (%d rows)" % (impl, scenario, _ratio(_geomean(values)),
                                                       len(values)))
    only = sorted(set(a) ^ set(b))
    if only:
        lines.append("%d rows only in one run (not compared)" % len(only))
    return "\n".join(lines)
