"""kvexec-server against memcached 1.6.18 (Debian), driven by memcaslap.

Both servers run on loopback with 2 front-end threads (kvexec-server with
--sync none: the load measures the front end and the engine, not the disk).
memcaslap runs in binary mode, 2 threads, 16 connections, 64-byte keys and
1 KiB values, for the 90/10 get/set mix, set-only and get-only. Rounds
alternate memcached and kvexec-server so that a noisy neighbour hits both;
the table gives medians of the rounds, the ratio kvexec / memcached, and the
server process's CPU time (user + sys, all threads) per request.
"""

import os
import re
import shutil
import statistics
import subprocess
import tempfile

from report_lib.servers import Server, start_memcached
from report_lib.tables import titled

MIXES = [("90/10", 0.1, 0.9), ("set", 1.0, 0.0), ("get", 0.0, 1.0)]
# mode -> (rounds, seconds per memcaslap run)
MODES = {"quick": (3, 4), "full": (5, 10), "smoke": (1, 1)}
CLIENTS = ("memcaslap", "memcached")


def available():
    """The tools this comparison needs are installed (tools/install-deps)."""
    return all(shutil.which(tool) for tool in CLIENTS)


def _start_kvexec(binary, data_dir, log_path):
    argv = [binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir,
            "--sync", "none", "--frontend-threads", "2"]
    return Server(argv, log_path, ready_prefix="kvexec-server: ready on ")


def _write_cfg(path, set_share, get_share):
    with open(path, "w") as f:
        f.write("key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 %s\n1 %s\n" % (set_share, get_share))


def _load(server, cfg, seconds):
    """One memcaslap run: {"tps", "ops", "cpu_us_per_request"}."""
    port = server.port
    before = server.cpu_seconds()
    out = subprocess.run(["memcaslap", "--servers=127.0.0.1:%d" % port, "--binary",
                          "--threads=2", "--concurrency=16", "--time=%ds" % seconds,
                          "--cfg_cmd=" + cfg], capture_output=True, text=True, check=False)
    used = server.cpu_seconds() - before
    # memcslap exits 0 even when nothing answered: the counts decide.
    runs = re.findall(r"^Run time: \S+ Ops: (\d+) TPS: (\d+)", out.stdout, re.M)
    if not runs or int(runs[-1][0]) == 0:
        raise SystemExit("memcaslap did no operation against port %d:\n%s%s"
                         % (port, out.stdout, out.stderr))
    ops, tps = int(runs[-1][0]), int(runs[-1][1])
    return {"tps": tps, "ops": ops, "cpu_us_per_request": used * 1e6 / ops}


def run(server_binary, mode, rounds=None, seconds=None):
    """Runs the comparison; returns the data the table and the JSON hold."""
    default_rounds, default_seconds = MODES[mode]
    rounds = rounds or default_rounds
    seconds = seconds or default_seconds
    with tempfile.TemporaryDirectory(prefix="kvexec-server-bench-") as work:
        mc = start_memcached(os.path.join(work, "memcached.log"))
        kv = _start_kvexec(server_binary, os.path.join(work, "data"),
                           os.path.join(work, "kvexec-server.log"))
        try:
            samples = {mix: {"memcached": [], "kvexec": []} for mix, _, _ in MIXES}
            for _ in range(rounds):
                for mix, set_share, get_share in MIXES:
                    cfg = os.path.join(work, "mix.cfg")
                    _write_cfg(cfg, set_share, get_share)
                    samples[mix]["memcached"].append(_load(mc, cfg, seconds))
                    samples[mix]["kvexec"].append(_load(kv, cfg, seconds))
        finally:
            code = kv.stop()
            mc.stop()
        if code != 0:  # the log goes with the temporary directory: show it now
            with open(kv.log_path) as log:
                raise SystemExit("kvexec-server exited with %d after SIGTERM:\n%s"
                                 % (code, log.read()))
    return {"rounds": rounds, "seconds": seconds, "load_avg_at_end": list(os.getloadavg()),
            "mixes": [_summary(mix, samples[mix]) for mix, _, _ in MIXES]}


def _summary(mix, runs):
    def median(server, key):
        return statistics.median(r[key] for r in runs[server])
    out = {"mix": mix, "runs": runs}
    for server in ("memcached", "kvexec"):
        out[server + "_tps"] = median(server, "tps")
        out[server + "_cpu_us_per_request"] = median(server, "cpu_us_per_request")
    out["ratio"] = out["kvexec_tps"] / out["memcached_tps"]
    return out


def table(data, machine_line=""):
    """The seed-style block the report prints; machine_line (the machine the
    run was on) goes beside its title."""
    title = ("kvexec-server vs memcached 1.6.18 (memcaslap binary, 2 threads, 16 connections,"
             " median of %d x %d s rounds; CPU = server process per request)"
             % (data["rounds"], data["seconds"]))
    lines = [titled(title, machine_line),
             "%-6s %14s %12s %7s %15s %13s" % ("mix", "memcached TPS", "kvexec TPS", "ratio",
                                               "memcached us/rq", "kvexec us/rq")]
    for m in data["mixes"]:
        lines.append("%-6s %14.0f %12.0f %6.2fx %15.2f %13.2f"
                     % (m["mix"], m["memcached_tps"], m["kvexec_tps"], m["ratio"],
                        m["memcached_cpu_us_per_request"], m["kvexec_cpu_us_per_request"]))
    return "\n".join(lines)
