"""Compare two saved runs as ratios, the way the seeds show before/after."""

import math

from report_lib import results
from report_lib.tables import cpu_per_item, human_ns, human_rate


def _by_name(data):
    return {r.name: r for r in results.rows_from(data)}


def _metric(row, like_for_like=False):
    """(value, label, higher_is_better) that best describes a row. With
    like_for_like, items/s is Google Benchmark's own figure, the one both
    runs have when only one measured the wall span."""
    if row.items_per_second:
        rate = row.gb_items_per_second if like_for_like else row.items_per_second
        return rate, "items/s", True
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
    mixed = 0
    for name in common:
        # A run from before the span was measured against one after: compare
        # Google Benchmark's figures, which both have (marked *).
        like = results.measured_over_span(a[name]) != results.measured_over_span(b[name])
        mixed += like
        va, label, higher = _metric(a[name], like)
        vb = _metric(b[name], like)[0]
        if like:
            label += "*"
        ratio = (vb / va) if va else float("nan")
        if ratio == ratio and ratio > 0:
            key = (b[name].impl, b[name].scenario)
            groups.setdefault(key, []).append(ratio if higher else 1 / ratio)
        fmt = human_rate if label.startswith("items/s") else (lambda v: "%.4g" % v)
        ca, cb = cpu_per_item(a[name]), cpu_per_item(b[name])
        cpu = "%9s -> %-9s" % (human_ns(ca), human_ns(cb)) if ca and cb else ""
        lines.append("%-*s %12s %12s %9s  %-8s %21s" % (width, name, fmt(va), fmt(vb),
                                                        _ratio(ratio), label, cpu))
    if mixed:
        lines += ["", "* %d rows: only one run measured items/s over its wall span; these "
                  "compare Google Benchmark's items_per_second (threads' average time); CPU/item\n"
                  "  is over thread 0's loop in a run without the span, over the span in one "
                  "with it" % mixed]
    lines += ["", "Improvement, B over A (geometric mean; > 1 is better):"]
    for (impl, scenario), values in groups.items():
        lines.append("  %-10s %-22s %9s  (%d rows)" % (impl, scenario, _ratio(_geomean(values)),
                                                       len(values)))
    only = sorted(set(a) ^ set(b))
    if only:
        lines.append("%d rows only in one run (not compared)" % len(only))
    return "\n".join(lines)
