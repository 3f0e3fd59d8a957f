"""The engine block of the report summary (engine_bench rows).

Rows, by name (bench/engine_bench.cc):
  EngineSet/<Backend>/real_time/threads:N   (N: 1, 2, 4 today; every N run is shown)
  EngineGet/Keys:N/real_time                (no backend: the executor takes no part)
  EngineDurable/<Backend>/Sync:<mode>/Cache:<0|1>/real_time
  StreamLatency/<Backend>/real_time
  EngineSetWithStreams/<Backend>/Streams:<0|1|3>[/Notify:WakeAndWait]/real_time
      (seed 000: no Notify part = notified by wake(); counter notify_share)
  Floor/Append4KiBFdatasync/real_time
"""

import re

from report_lib.tables import human_rate, titled

BACKENDS = ("Wheel", "Classic")
# How the rows' stream tasks are notified (BucketConfig::streamNotify), in
# the order printed; a row without a Notify part is Wake (its name from
# before the WakeAndWait rows).
NOTIFIES = ("Wake", "WakeAndWait")
GET_ROW = re.compile(r"^EngineGet/Keys:(?P<keys>\d+)/")
STREAMS_ROW = re.compile(r"^EngineSetWithStreams/(?P<backend>[A-Za-z]+)/Streams:(?P<streams>\d+)"
                         r"(?:/Notify:(?P<notify>[A-Za-z]+))?/")


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


def _get_line(rows):
    """One thread's gets/s by how many documents it reads among (1024 vBuckets)."""
    by_keys = {}
    for r in rows:
        m = GET_ROW.match(r.name)
        if m:
            by_keys[int(m["keys"])] = r
    cells = ["%s keys: %s (%.0f ns each)" % (human_rate(k), human_rate(r.items_per_second),
                                             r.real_ns)
             for k, r in sorted(by_keys.items())]
    return "  gets/s, one thread, 1 KiB values in 1024 vBuckets, by documents: " + ", ".join(
        cells) if cells else ""


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


def _streams_lines(rows, backend):
    """Seed 000: sets/s with 0, 1, 3 streams per vBucket (every count the
    run has), one line per way of notifying, each with its notify_share."""
    by_notify = {}
    for r in rows:
        m = STREAMS_ROW.match(r.name)
        if m and m["backend"] == backend:
            by_notify.setdefault(m["notify"] or "Wake", {})[int(m["streams"])] = r
    lines = []
    for notify in [n for n in NOTIFIES if n in by_notify] + sorted(set(by_notify) - set(NOTIFIES)):
        cells = []
        for n, r in sorted(by_notify[notify].items()):
            cell = "%d: %s" % (n, human_rate(r.items_per_second))
            if "notify_share" in r.counters:  # not in runs older than the counter
                cell += " (%.1f%%)" % (100 * r.counters["notify_share"])
            cells.append(cell)
        lines.append("  %-8s sets/s by streams per vBucket (notify_share), Notify:%-11s: %s" % (
            backend, notify, ", ".join(cells)))
    return lines


def engine_block(rows, machine_line=""):
    """Wheel vs Classic, cache on vs off, seed 000's streams, gets by document
    count, and the fdatasync floor."""
    if not any(r.name.startswith(("EngineSet/", "EngineGet/", "EngineDurable/", "StreamLatency/",
                                  "EngineSetWithStreams/"))
               for r in rows):
        return ""
    lines = [titled("Engine (engine_bench; writes: 64 vBuckets, 4 shards, 512-byte values, "
                    "64 durable writes in flight):", machine_line)]
    for backend in BACKENDS:
        lines += [l for l in [_set_line(rows, backend)] + _durable_lines(rows, backend)
                  + [_stream_line(rows, backend)] + _streams_lines(rows, backend) if l]
    get = _get_line(rows)
    if get:
        lines.append(get)
    floor = _find(rows, "Floor/Append4KiBFdatasync")
    if floor:
        lines.append("  Floor: one 4 KiB append + fdatasync: %s/s (%.0f us each)" % (
            human_rate(floor.items_per_second), floor.real_ns / 1e3))
    return "\n".join(lines)
