"""The engine block of the report summary (engine_bench rows).

Rows, by name (bench/engine_bench.cc):
  EngineSet/<Backend>/real_time/threads:N   (N: 1, 2, 4 today; every N run is shown)
  EngineDurable/<Backend>/Sync:<mode>/Cache:<0|1>/real_time
  StreamLatency/<Backend>/real_time
  Floor/Append4KiBFdatasync/real_time
"""

from report_lib.tables import human_rate, titled

BACKENDS = ("Wheel", "Classic")


def _find(rows, prefix):
    return next((r for r in rows if r.name.startswith(prefix)), None)


def _set_line(rows, backend):
    # Every thread count the run has, not a fixed list: a prefix such as
    # "threads:1" would also match threads:16, and a count added to
    # engine_bench (8) shows without a change here.
    prefix = "EngineSet/%s/real_time/threads:" % backend
    by_threads = {r.threads: r for r in rows if r.name.startswith(prefix)}
    cells = ["%d: %s" % (t, human_rate(by_threads[t].items_per_second))
             for t in sorted(by_threads)]
    return "  %-8s sets/s by front-end threads: %s" % (backend, ", ".join(cells)) if cells else ""


def _durable_lines(rows, backend):
    lines = []
    for sync in ("none", "fdatasync"):
        cells = []
        for cache in (0, 1):
            r = _find(rows, "EngineDurable/%s/Sync:%s/Cache:%d/" % (backend, sync, cache))
            if r:
                cells.append("cache %s %s/s p50 %.0f us p99 %.0f us" % (
                    "on " if cache else "off", human_rate(r.items_per_second),
                    r.counters.get("p50_us", 0), r.counters.get("p99_us", 0)))
        if cells:
            lines.append("  %-8s PersistToMajority, sync %-9s: %s" % (backend, sync,
                                                                     " | ".join(cells)))
    return lines


def _stream_line(rows, backend):
    r = _find(rows, "StreamLatency/%s/" % backend)
    if not r:
        return ""
    return "  %-8s stream notification (set -> callback): p50 %.1f us, p99 %.1f us" % (
        backend, r.counters.get("p50_us", 0), r.counters.get("p99_us", 0))


def engine_block(rows, machine_line=""):
    """Wheel vs Classic, cache on vs off, and the fdatasync floor."""
    if not any(r.name.startswith(("EngineSet/", "EngineDurable/", "StreamLatency/"))
               for r in rows):
        return ""
    lines = [titled("Engine (engine_bench; 64 vBuckets, 4 shards, 512-byte values, "
                    "64 durable writes in flight):", machine_line)]
    for backend in BACKENDS:
        lines += [l for l in [_set_line(rows, backend)] + _durable_lines(rows, backend)
                  + [_stream_line(rows, backend)] if l]
    floor = _find(rows, "Floor/Append4KiBFdatasync")
    if floor:
        lines.append("  Floor: one 4 KiB append + fdatasync: %s/s (%.0f us each)" % (
            human_rate(floor.items_per_second), floor.real_ns / 1e3))
    return "\n".join(lines)
