"""Running the seed 002 experiment (tools/persist-latency): servers,
kvexec-pillowfight invocations and the fdatasync floor.

Every process this module starts is stopped by its PID (SIGTERM, then
SIGKILL after a deadline); nothing is looked up by name."""

import json
import os
import statistics
import subprocess
import threading
import time

from report_lib.cluster import Cluster
from report_lib.servers import Server, free_port, start_memcached  # noqa: F401 (used by tools/persist-latency)

USER, PASSWORD = "Administrator", "asdasd"


def server_flags(cache, backend, vbuckets, shards):
    """A configuration's kvexec-server flags, for one node or every node."""
    return ["--vbuckets", str(vbuckets), "--shards", str(shards), "--sync", "fdatasync",
            "--file-cache", "on" if cache else "off", "--backend", backend]


def start_kvexec(server_bin, data_dir, log_path, flags):
    argv = [server_bin, "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir,
            "--user", USER, "--password", PASSWORD] + flags
    return Server(argv, log_path, ready_prefix="kvexec-server: ready on ")


def start_cluster(bins, directory, nodes, flags):
    """tools/cluster-run: `nodes` nodes, each vBucket on all of them (nodes
    - 1 replicas), every node with `flags` and the one user."""
    return Cluster(directory, nodes, nodes - 1, bins["server"], bins["cluster"], flags,
                   credentials=(USER, PASSWORD))


def pillowfight(bin_path, port, json_path, log_path, args, couchbase=True, deadline=900):
    """Runs kvexec-pillowfight; returns its JSON (raises if it produced none)."""
    argv = [bin_path, "--json", json_path, "-q"]
    if couchbase:
        argv += ["-U", "couchbase://127.0.0.1:%d/default" % port, "-u", USER, "-P", PASSWORD]
    else:
        argv += ["-U", "couchbase://127.0.0.1:%d" % port, "--protocol", "memcached"]
    argv += [str(a) for a in args]
    with open(log_path, "a") as log:
        log.write("+ " + " ".join(argv) + "\n")
        log.flush()
        rc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=deadline).returncode
    if not os.path.exists(json_path):
        raise RuntimeError("kvexec-pillowfight exited %d without JSON; see %s" % (rc, log_path))
    with open(json_path) as f:
        result = json.load(f)
    result["exitCode"] = rc
    return result


def server_block(bin_path, port, json_path, log_path):
    """The server's STAT groups and histograms (pillowfight's "server"),
    through a zero-op kvexec-pillowfight run."""
    return pillowfight(bin_path, port, json_path, log_path, ["-n", "-c", "0"])["server"]


def wait_persisted(bin_path, ports, json_path, log_path, cluster=None, deadline=120.0):
    """Waits until no node has dirty items and, on a cluster, every replica
    has caught up with its active; returns each node's stats then. The lag
    counts only from 1 s after the call: the nodes publish their seqnos
    every 0.5 s, so an earlier 0 may predate the load's end."""
    start = time.monotonic()
    while True:
        # The lag before the dirty items: a replica that has everything
        # and has persisted it is done; the other order could see a
        # replica clean just before the last items reach it.
        caught_up = cluster is None or (time.monotonic() - start >= 1.0 and
                                        cluster.lags() == [0] * len(ports))
        stats = [server_block(bin_path, port, json_path, log_path)["stats"] for port in ports]
        clean = all(int(s.get("ep_dirty_items", "0")) == 0 for s in stats)
        if (caught_up and clean) or time.monotonic() > start + deadline:
            return stats
        time.sleep(0.1)


PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


def _cdf_points(h):
    """A node's histogram as (value, fraction at or below it) points: its
    power-of-two bucket edges, which are exact, and its own percentiles
    and max, which are finer in the tail than the buckets."""
    points, seen = [(0, 0.0)], 0
    for upper, n in h["buckets"]:
        seen += n
        points.append((upper, seen / h["count"]))
    points += [(h[key], fraction) for key, fraction in PERCENTILES] + [(h["max"], 1.0)]
    out, level = [], 0.0
    for value, fraction in sorted(points):  # the two sources may disagree by a rounding
        level = max(level, fraction)
        out.append((value, level))
    return out


def _cdf_at(points, value):
    """The fraction at or below `value`, linear between the points."""
    for (x0, f0), (x1, f1) in zip(points, points[1:]):
        if value <= x1:
            return f1 if x1 == x0 else f0 + (f1 - f0) * (value - x0) / (x1 - x0)
    return 1.0


def merge_histograms(histograms):
    """One histogram of several nodes' (each the actives of its vBuckets):
    counts and buckets summed, the mean weighted by count, the max the
    largest. A percentile of the merged writes lies between the nodes' own;
    it is where the count-weighted sum of the nodes' distributions (each
    linear between its bucket edges, percentiles and max) reaches it."""
    parts = [h for h in histograms if h.get("count")]
    count = sum(h["count"] for h in parts)
    if not count:
        return {"count": 0, "buckets": []}
    sums = {}
    for h in parts:
        for upper, n in h["buckets"]:
            sums[upper] = sums.get(upper, 0) + n
    out = {"count": count, "mean": sum(h["mean"] * h["count"] for h in parts) / count,
           "max": max(h["max"] for h in parts), "buckets": sorted([u, n] for u, n in sums.items()),
           "nodes": len(histograms)}
    cdfs = [(h["count"], _cdf_points(h)) for h in parts]
    for key, fraction in PERCENTILES:
        low, high = min(h[key] for h in parts), max(h[key] for h in parts)
        for _ in range(40):  # bisection: to well under a microsecond
            middle = (low + high) / 2
            if sum(n * _cdf_at(points, middle) for n, points in cdfs) >= fraction * count:
                high = middle
            else:
                low = middle
        out[key] = round(high)
    return out


def merge_servers(blocks):
    """Pillowfight's "server" of a cluster from each node's: every histogram
    merged (each node counts the SyncWrites of its active vBuckets), the
    nodes' own blocks kept under "nodes"."""
    names = sorted({name for b in blocks for name in b["histograms"]})
    return {"stats": {}, "error": "; ".join(b["error"] for b in blocks if b.get("error")),
            "histograms": {name: merge_histograms([b["histograms"].get(name, {})
                                                   for b in blocks]) for name in names},
            "nodes": blocks}


def _sync_loop(path, seconds, latencies):
    block = os.urandom(4096)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            start = time.perf_counter()
            os.write(fd, block)
            os.fdatasync(fd)
            latencies.append(time.perf_counter() - start)
    finally:
        os.close(fd)
        os.unlink(path)


def fdatasync_floor(directory, seconds, parallel):
    """One 4 KiB append + fdatasync in a loop on `directory`'s file system:
    on one file, then on `parallel` files at once (as many as flushers).
    Returns {"one": {...}, "parallel": {...}} with us_mean, us_p50, us_p99
    and syncs_per_second."""
    def measure(files):
        lists = [[] for _ in range(files)]
        threads = [threading.Thread(target=_sync_loop,
                                    args=(os.path.join(directory, "floor.%d" % i), seconds,
                                          lists[i])) for i in range(files)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        all_latencies = sorted(x for l in lists for x in l)
        count = len(all_latencies)
        return {"files": files, "count": count,
                "us_mean": statistics.fmean(all_latencies) * 1e6,
                "us_p50": all_latencies[count // 2] * 1e6,
                "us_p99": all_latencies[min(count - 1, int(count * 0.99))] * 1e6,
                "syncs_per_second": count / seconds}
    os.makedirs(directory, exist_ok=True)
    return {"one": measure(1), "parallel": measure(parallel)}


def best_floor(floors):
    """Of several fdatasync_floor() results, the fastest one and the fastest
    parallel one: the floor is what the device allows when nobody else is
    flushing, so the best sample estimates it best."""
    return {"one": max((f["one"] for f in floors), key=lambda m: m["syncs_per_second"]),
            "parallel": max((f["parallel"] for f in floors),
                            key=lambda m: m["syncs_per_second"])}
