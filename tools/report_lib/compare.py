"""Compare two saved runs as ratios, the way the seeds show before/after."""

import math

from report_lib import results
from report_lib.tables import (cpu_per_item, cores_text, human_ns, human_rate, machine_note,
                               machine_of)


def _by_name(data):
    return {r.name: r for r in results.rows_from(data)}


def _machine_lines(path_a, path_b, data_a, data_b):
    """Each run's machine, from its own JSON (the runs may come from two
    machines), and a warning when their core counts differ: a row with more
    threads than cores oversubscribes one run and not the other, so its B/A
    measures the machines as much as the code."""
    ma, mb = machine_of(data_a), machine_of(data_b)
    lines = ["A: %s  [%s]" % (path_a, machine_note(ma)),
             "B: %s  [%s]" % (path_b, machine_note(mb))]
    if ma["cores"] and mb["cores"] and ma["cores"] != mb["cores"]:
        lines.append("WARNING: A ran on %s cores and B on %s: the ratios compare the machines "
                     "as well as the code, most of all in rows with more than %s threads"
                     % (ma["cores"], mb["cores"], min(ma["cores"], mb["cores"])))
    return lines


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
    data_a, data_b = results.load(path_a), results.load(path_b)
    a, b = _by_name(data_a), _by_name(data_b)
    common = [n for n in b if n in a]
    width = max([len(n) for n in common] + [40]) + 2
    machines = _machine_lines(path_a, path_b, data_a, data_b)
    lines = machines + ["", "%-*s %12s %12s %9s  %-8s %21s" % (
        width, "Benchmark", "before (A)", "after (B)", "B/A", "metric", "CPU/item A -> B"), ""]
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
    lines += ["", "Improvement, B over A (geometric mean; > 1 is better):  [A: %s; B: %s]" % (
        cores_text(machine_of(data_a)), cores_text(machine_of(data_b)))]
    for (impl, scenario), values in groups.items():
        lines.append("  %-10s %-22s %9s  (%d rows)" % (impl, scenario, _ratio(_geomean(values)),
                                                       len(values)))
    only = sorted(set(a) ^ set(b))
    if only:
        lines.append("%d rows only in one run (not compared)" % len(only))
    return "\n".join(lines)
