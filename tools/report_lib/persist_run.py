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

from report_lib.servers import Server, free_port, start_memcached  # noqa: F401 (used by tools/persist-latency)

USER, PASSWORD = "Administrator", "asdasd"


def start_kvexec(server_bin, data_dir, log_path, cache, backend, vbuckets, shards):
    argv = [server_bin, "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir,
            "--vbuckets", str(vbuckets), "--shards", str(shards), "--sync", "fdatasync",
            "--file-cache", "on" if cache else "off", "--backend", backend,
            "--user", USER, "--password", PASSWORD]
    return Server(argv, log_path, ready_prefix="kvexec-server: ready on ")


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


def server_stats(bin_path, port, json_path, log_path):
    """The server's STAT groups, through a zero-op kvexec-pillowfight run."""
    return pillowfight(bin_path, port, json_path, log_path, ["-n", "-c", "0"])["server"]["stats"]


def wait_persisted(bin_path, port, json_path, log_path, deadline=120.0):
    """Waits until the server has no dirty items; returns its stats then."""
    until = time.monotonic() + deadline
    while True:
        stats = server_stats(bin_path, port, json_path, log_path)
        if int(stats.get("ep_dirty_items", "0")) == 0 or time.monotonic() > until:
            return stats
        time.sleep(0.1)


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
