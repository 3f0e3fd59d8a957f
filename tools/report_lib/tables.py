"""The seed-style table and the ten-second summary (tools/report)."""

import math

from report_lib import results

BACKENDS = ("ExecutorPoolFixture",)
PEERS = ("Peer",)


def human_rate(v):
    """55488.7 -> '55.49k'; like Google Benchmark's items_per_second."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return "%.4g%s" % (v / div, suffix)
    return "%.4g" % v


def human_time(ns):
    if ns >= 1e7:
        return "%10.0f ms" % (ns / 1e6)
    return "%10.0f ns" % ns


def machine_of(data):
    """{"cores", "usable", "mhz"} of the machine that ran `data` (None where
    not recorded): the cores tools/report counted when it ran (os.cpu_count()
    and the ones this process may use), else Google Benchmark's context
    (num_cpus), so that a run saved on another machine keeps its own count."""
    ctx = data.get("context", {})
    recorded = data.get("machine", {})
    return {"cores": recorded.get("cores") or ctx.get("num_cpus"),
            "usable": recorded.get("usable_cores"), "mhz": ctx.get("mhz_per_cpu")}


def cores_text(machine):
    """'2 cores, 2300 MHz' ('? cores' where the run did not record them)."""
    text = "%s cores" % (machine.get("cores") or "?")
    if machine.get("usable") and machine["usable"] != machine.get("cores"):
        text += " (%d usable by the run)" % machine["usable"]
    return text + (", %s MHz" % machine["mhz"] if machine.get("mhz") else "")


def machine_note(machine):
    """'machine: 2 cores, 2300 MHz', printed with every table: a row's thread
    count reads differently on 2 cores than on 16 (8 threads oversubscribe
    the one and not the other)."""
    return "machine: " + cores_text(machine)


def titled(title, machine_line):
    """A table's title with the machine beside it, when there is one."""
    return "%s  [%s]" % (title, machine_line) if machine_line else title


def seed_table(rows, machine_line=""):
    """Name, Time, CPU, Iterations, counters: the seeds' layout, under the
    machine's line (where Google Benchmark prints "Run on (N X MHz CPU s)")."""
    width = max([len(r.name) for r in rows] + [40]) + 2
    head = "%-*s %13s %13s %12s %s" % (width, "Benchmark", "Time", "CPU", "Iterations",
                                        "UserCounters...")
    lines = ([machine_line] if machine_line else []) + ["-" * len(head), head, "-" * len(head)]
    for r in rows:
        counters = []
        if r.gb_items_per_second:  # as Google Benchmark printed it
            counters.append("items_per_second=%s/s" % human_rate(r.gb_items_per_second))
        counters += ["%s=%.4g" % (k, v) for k, v in sorted(r.counters.items())]
        lines.append("%-*s %s %s %12d %s" % (width, r.name, human_time(r.real_ns),
                                              human_time(r.cpu_ns), r.iterations,
                                              " ".join(counters)))
    return "\n".join(lines)


def _geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _impls(rows, families):
    seen = []
    for r in rows:
        if r.family in families and r.impl not in seen:
            seen.append(r.impl)
    return seen


def items_per_second(row):
    return row.items_per_second


def cpu_per_item(row):
    """Whole-process CPU ns per item (user + sys, all threads); None if the
    run did not measure it."""
    return row.counters.get("cpu_ns_per_item")


def _grid(rows, scenario, param_value, axis, also=(), metric=items_per_second):
    """{impl: {x: metric}} for one scenario (plus the rows of the scenarios
    in `also`, e.g. the PingPong floor); x is threads or the param."""
    grid = {}
    for r in rows:
        if r.scenario != scenario and r.scenario not in also:
            continue
        if r.scenario in also:
            x = r.threads
        elif axis == "threads" and param_value is not None and r.value != param_value:
            continue
        elif axis == "value" and r.threads != param_value:
            continue
        else:
            x = r.threads if axis == "threads" else r.value
        if metric(r) is not None:
            grid.setdefault(r.impl, {})[x] = metric(r)
    return grid


def _ratio_columns(grid, impl, xs, peers, best_of=max):
    """Geometric means over xs of impl/Classic and impl/(best peer at x)."""
    mine = grid.get(impl, {})
    to_classic, to_peer = [], []
    for x in xs:
        if x not in mine:
            continue
        classic = grid.get("Classic", {}).get(x)
        best = best_of([grid[p][x] for p in peers if x in grid.get(p, {})], default=None)
        if classic:
            to_classic.append(mine[x] / classic)
        if best:
            to_peer.append(mine[x] / best)
    return _geomean(to_classic), _geomean(to_peer)


def human_ns(ns):
    """12345.6 -> '12.3us'."""
    for div, suffix in ((1e6, "ms"), (1e3, "us")):
        if ns >= div:
            return "%.3g%s" % (ns / div, suffix)
    return "%.3gns" % ns


def scenario_block(rows, title, scenario, param_value=None, axis="threads", extra=(),
                   metric=items_per_second, machine_line=""):
    """One summary table: implementations down, thread counts (or timeout
    counts) across, every one the rows have (1, 2, 4, 8, 16 in a full run),
    items/s (or, with metric=cpu_per_item, CPU per item: the best peer is
    then the cheapest) in the cells, ratio columns at the right."""
    grid = _grid(rows, scenario, param_value, axis, also=extra, metric=metric)
    if not grid:
        return ""
    cpu = metric is cpu_per_item
    backends, peers = _impls(rows, BACKENDS), _impls(rows, PEERS)
    order = [i for i in backends + peers + list(extra) if i in grid]
    xs = sorted({x for cells in grid.values() for x in cells})
    label = "threads" if axis == "threads" else "timeouts"
    head = "%-10s" % label + "".join("%10s" % x for x in xs) + "   x Classic  x best peer"
    lines = [titled(title, machine_line), head]
    for impl in order:
        cells = "".join("%10s" % ((human_ns if cpu else human_rate)(grid[impl][x])
                                  if x in grid[impl] else "-") for x in xs)
        c, p = _ratio_columns(grid, impl, xs, peers, best_of=min if cpu else max)
        lines.append("%-10s%s   %9s  %11s" % (impl, cells, _fmt_ratio(c), _fmt_ratio(p)))
    return "\n".join(lines)


def throughput_and_cpu(rows, title, scenario, param_value=None, axis="threads", extra=(),
                       machine_line=""):
    """The items/s table of a scenario, then its CPU-per-item table."""
    rate = scenario_block(rows, title, scenario, param_value, axis, extra,
                          machine_line=machine_line)
    cpu = scenario_block(rows, "  ... CPU per item (whole process, user + sys; lower is "
                         "better)", scenario, param_value, axis, extra, metric=cpu_per_item,
                         machine_line=machine_line)
    return "\n".join(b for b in (rate, cpu) if b)


def _fmt_ratio(v):
    if v != v:  # NaN: no Classic or no peer in this table
        return "-"
    return "%.2fx" % v if v >= 0.1 else "%.2gx" % v


def timeout_slowdown(rows, impl="Classic", threads=1, small=1000, large=30000):
    """Per-op cost at `large` timeouts divided by that at `small`."""
    grid = _grid(rows, "TimeoutAddCancel", threads, "value").get(impl, {})
    if grid.get(small) and grid.get(large):
        return grid[small] / grid[large]
    return None


def footprint_block(rows, machine_line=""):
    fp = [r for r in rows if r.family == "Footprint"]
    if not fp:
        return ""
    lines = [titled("Idle pool and memory (per backend)", machine_line),
             "%-10s %22s %18s %18s" % ("backend", "idle CPU, % of a core", "bytes/task (RSS)",
                                        "bytes/task (heap)")]
    for impl in _impls(fp, ("Footprint",)):
        idle = next((r.counters.get("idle_cpu_pct") for r in fp
                     if r.impl == impl and r.scenario == "IdleCpu"), None)
        mem = next((r for r in fp if r.impl == impl and r.scenario == "MemoryPerTask"), None)
        lines.append("%-10s %22s %18s %18s" % (
            impl, "-" if idle is None else "%.3g" % idle,
            "-" if mem is None else "%.0f" % mem.counters.get("bytes_per_task", 0),
            "-" if mem is None else "%.0f" % mem.counters.get("heap_bytes_per_task", 0)))
    window = max([r.real_ns for r in fp if r.scenario == "IdleCpu"] + [0]) / 1e9
    lines.append("(idle: 30,000 tasks snoozed 10-30 s ahead, getrusage over %.1f s; "
                 "memory: 1,000,000 such tasks)" % window)
    return "\n".join(lines)


def sparse_wake_block(rows, machine_line=""):
    sparse = [r for r in rows if r.scenario == "SparseWakeCpu" and "cpu_pct" in r.counters]
    if not sparse:
        return ""
    lines = [titled("Sparse wakes: 16 threads wake their tasks at 1,000 wakes/s in all, pool "
                    "at 2 workers: process CPU, % of a core", machine_line)]
    lines += ["%-10s %8.3g" % (r.impl, r.counters["cpu_pct"]) for r in sparse]
    return "\n".join(lines)


def floor_block(rows, machine_line=""):
    pp = {r.threads: r for r in rows if r.scenario == "PingPong"}
    base = [r for r in rows if r.scenario == "Baseline"]
    lines = []
    if pp:
        rates = ", ".join("%d: %s" % (t, human_rate(pp[t].items_per_second)) for t in sorted(pp))
        lines.append(titled("Floor: PingPong round trips/s (atomic wait/notify_one), by "
                            "threads: " + rates, machine_line))
    notes = {"ClockNow": "steady_clock::now(), paid inside every re-arm",
             "RandomDelay": "a 10-30 s random draw, made before timing (not in any row)"}
    for r in base:
        lines.append("Baseline %s: %.1f ns (%s)" % (r.impl, r.real_ns, notes.get(r.impl, "")))
    return "\n".join(lines)


def _rate_definition(rows):
    if any(results.measured_over_span(r) for r in rows):
        return ("items/s: items over each run's wall span, first thread's start to last "
                "thread's end (wall_items_per_second; Google Benchmark's items_per_second "
                "divides by the threads' average time and reads higher when threads finish "
                "apart)")
    return ("items/s: Google Benchmark's items_per_second (items over the threads' average "
            "loop time; this run predates the wall-span rate)")


def summary(rows, data):
    ctx = data.get("context", {})
    load = ctx.get("load_avg", [])
    machine = machine_note(machine_of(data))  # beside every table's title
    out = ["== Summary: items/s (medians of %s repetitions); ratios are geometric means "
           "across the columns ==" % max([r.samples for r in rows] + [1]),
           _rate_definition(rows),
           "%s; load average at start %s, at end %s" % (
               machine, ", ".join("%.2f" % x for x in load),
               ", ".join("%.2f" % x for x in data.get("load_avg_at_end", [])))]
    blocks = [throughput_and_cpu(rows, "OneShotScheduleRun: round trips/s",
                                 "OneShotScheduleRun", extra=("PingPong",),
                                 machine_line=machine)]
    for tasks in sorted({r.value for r in rows if r.scenario == "LongLivedScheduleRun"}):
        blocks.append(throughput_and_cpu(rows, "LongLivedScheduleRun, Tasks:%d: wakes/s" % tasks,
                                         "LongLivedScheduleRun", tasks, extra=("PingPong",),
                                         machine_line=machine))
    blocks.append(throughput_and_cpu(
        rows, "OneShotScheduleRun oversubscribed (pool at 2 workers): round trips/s",
        "OneShotOversubscribed", machine_line=machine))
    for tasks in sorted({r.value for r in rows if r.scenario == "LongLivedOversubscribed"}):
        blocks.append(throughput_and_cpu(
            rows, "LongLivedScheduleRun oversubscribed (pool at 2 workers), Tasks:%d: wakes/s"
            % tasks, "LongLivedOversubscribed", tasks, machine_line=machine))
    blocks.append(sparse_wake_block(rows, machine))
    for threads in sorted({r.threads for r in rows if r.scenario == "TimeoutAddCancel"}):
        blocks.append(throughput_and_cpu(
            rows, "TimeoutAddCancel, threads:%d: re-arms/s by timeouts in flight" % threads,
            "TimeoutAddCancel", threads, axis="value", machine_line=machine))
    blocks += [footprint_block(rows, machine), floor_block(rows, machine), shape_line(rows)]
    from report_lib.engine_table import engine_block  # engine_table imports this module
    blocks.append(engine_block(rows, machine))
    out += [b for b in blocks if b]
    return "\n\n".join(out)


def shape_line(rows):
    lines = []
    for impl in _impls(rows, BACKENDS):
        f = timeout_slowdown(rows, impl)
        if f is not None:
            lines.append("%s TimeoutAddCancel threads:1: per-op cost at 30,000 timeouts is "
                         "%s that at 1,000 (the seeds' CB3: ~11x)" % (impl, _fmt_ratio(f)))
    return "\n".join(lines)
