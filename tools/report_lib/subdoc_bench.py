"""Sub-document operations against whole-document get/upsert on
kvexec-server (the SDKs' lookupIn / mutateIn against get / upsert), driven
by kvexec-pillowfight.

One kvexec-server (--sync none, 2 front-end threads, no credentials) is
populated once with JSON documents of 1 KiB (-J: cbc-pillowfight's --json
documents, 16-byte fields padded to the size). Then each round runs, per
mix, a whole-document load (-J: GET and SET of the document) and a --subdoc
load (SUBDOC_MULTI_LOOKUP of one field, SUBDOC_MULTI_MUTATION upserting one
field with a value of the same size) over the same keys, durability none;
the two alternate, and which goes first flips every round, so that a noisy
neighbour or a warming cache hits both.

Mixes: -r 10, get-heavy, the read-mostly traffic lookupIn is meant for
(the server parses the document to send one field instead of sending the
stored bytes as they are); and -r 90, set-heavy, where mutateIn costs most
against a plain store (read, parse, edit and re-serialise the document,
then store it, against storing the bytes sent). Neither is pure (10% of
the other kind): applications' traffic mixes both.

The table gives the medians of the rounds, the ratio subdoc / whole
document, and the server process's CPU time (user + sys, all threads, from
/proc/PID/stat) per op.
"""

import json
import os
import statistics
import subprocess
import tempfile

from report_lib.servers import Server
from report_lib.tables import titled

MIXES = [("get-heavy", 10), ("set-heavy", 90)]
VARIANTS = ("fulldoc", "subdoc")
# mode -> (rounds, seconds per kvexec-pillowfight load)
MODES = {"quick": (1, 2), "full": (3, 5), "smoke": (1, 1)}
SETTINGS = {"threads": 1, "connections": 8, "batch": 16, "items": 10000, "size": 1024}
VARIANT_ARGS = {"fulldoc": ["-J"], "subdoc": ["--subdoc"]}


def available(binaries):
    return "kvexec-server" in binaries and "kvexec-pillowfight" in binaries


def _start_kvexec(binary, data_dir, log_path):
    argv = [binary, "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir,
            "--sync", "none", "--frontend-threads", "2"]
    return Server(argv, log_path, ready_prefix="kvexec-server: ready on ")


def workload_args(settings=SETTINGS):
    """What every kvexec-pillowfight run of the section shares."""
    s = settings
    return ["-t", s["threads"], "--connections", s["connections"], "-B", s["batch"],
            "-I", s["items"], "-m", s["size"], "-M", s["size"], "-d", "none"]


def load_args(variant, set_pct, seconds):
    """One load over the populated documents (-n: no population of its own)."""
    return workload_args() + VARIANT_ARGS[variant] + ["-n", "-r", set_pct,
                                                      "--duration", seconds]


def _pillowfight(binary, port, work, args):
    """Runs kvexec-pillowfight; returns its --json results."""
    json_path = os.path.join(work, "pillowfight.json")
    if os.path.exists(json_path):
        os.unlink(json_path)
    argv = [binary, "--json", json_path, "-q", "-U",
            "couchbase://127.0.0.1:%d/default" % port] + [str(a) for a in args]
    with open(os.path.join(work, "pillowfight.log"), "a") as log:
        log.write("+ " + " ".join(argv) + "\n")
        log.flush()
        rc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=300).returncode
    if not os.path.exists(json_path):
        raise SystemExit("kvexec-pillowfight exited %d without results: %s" % (rc, " ".join(argv)))
    with open(json_path) as f:
        return json.load(f)


def sample_of(result, cpu_seconds):
    """One load's figures from kvexec-pillowfight's JSON and the server's
    CPU seconds over it."""
    load = result["load"]
    ops = load["ops"]
    return {"ops": ops, "ops_per_second": load["opsPerSecond"],
            "cpu_us_per_op": cpu_seconds * 1e6 / ops if ops else 0.0,
            "errors": load["errorCount"], "error_names": load["errors"]}


def _measure(server, binary, work, variant, set_pct, seconds):
    before = server.cpu_seconds()
    result = _pillowfight(binary, server.port, work, load_args(variant, set_pct, seconds))
    return sample_of(result, server.cpu_seconds() - before)


def _populate(server, binary, work):
    result = _pillowfight(binary, server.port, work, workload_args() + ["-J", "-c", "0"])
    population = result["population"]
    if population["errorCount"]:
        raise SystemExit("population of the sub-document section failed: %s"
                         % population["errors"])


def round_order(index):
    """Which variant runs first in round `index`: flips every round."""
    return VARIANTS if index % 2 == 0 else VARIANTS[::-1]


def run(server_binary, pillowfight_binary, mode, rounds=None, seconds=None):
    """Runs the section; returns the data the table and results.json hold."""
    default_rounds, default_seconds = MODES[mode]
    rounds = rounds or default_rounds
    seconds = seconds or default_seconds
    with tempfile.TemporaryDirectory(prefix="kvexec-subdoc-bench-") as work:
        server = _start_kvexec(server_binary, os.path.join(work, "data"),
                               os.path.join(work, "kvexec-server.log"))
        try:
            _populate(server, pillowfight_binary, work)
            samples = {mix: {v: [] for v in VARIANTS} for mix, _ in MIXES}
            for index in range(rounds):
                for mix, set_pct in MIXES:
                    for variant in round_order(index):
                        samples[mix][variant].append(_measure(
                            server, pillowfight_binary, work, variant, set_pct, seconds))
        finally:
            code = server.stop()
        if code != 0:  # the log goes with the temporary directory: show it now
            with open(server.log_path) as log:
                raise SystemExit("kvexec-server exited with %d after SIGTERM:\n%s"
                                 % (code, log.read()))
    return {"rounds": rounds, "seconds": seconds, "settings": dict(SETTINGS),
            "load_avg_at_end": list(os.getloadavg()),
            "mixes": [summary(mix, set_pct, samples[mix]) for mix, set_pct in MIXES]}


def summary(mix, set_pct, runs):
    """Medians of a mix's rounds, per variant, and subdoc / fulldoc."""
    out = {"mix": mix, "set_pct": set_pct, "runs": runs}
    for variant in VARIANTS:
        for key in ("ops_per_second", "cpu_us_per_op"):
            out["%s_%s" % (variant, key)] = statistics.median(r[key] for r in runs[variant])
        out[variant + "_errors"] = sum(r["errors"] for r in runs[variant])
    out["ratio"] = _ratio(out["subdoc_ops_per_second"], out["fulldoc_ops_per_second"])
    out["cpu_ratio"] = _ratio(out["subdoc_cpu_us_per_op"], out["fulldoc_cpu_us_per_op"])
    return out


def _ratio(a, b):
    return a / b if b else None


def _fmt_ratio(v):
    return "-" if v is None else "%.2fx" % v


def table(data, machine_line=""):
    """The block the report prints; machine_line (the machine the run was
    on) goes beside its title."""
    s = data["settings"]
    title = ("Sub-document ops vs whole document (kvexec-pillowfight: %d thread, %d connections,"
             " batch %d, %d JSON documents of %d bytes, durability none; median of %d x %d s"
             " rounds; CPU = server process per op)"
             % (s["threads"], s["connections"], s["batch"], s["items"], s["size"],
                data["rounds"], data["seconds"]))
    lines = [titled(title, machine_line),
             "%-16s %14s %13s %8s %15s %14s %10s %7s"
             % ("mix", "fulldoc ops/s", "subdoc ops/s", "sub/full", "fulldoc us/op",
                "subdoc us/op", "CPU s/f", "errors")]
    for m in data["mixes"]:
        lines.append("%-16s %14.0f %13.0f %8s %15.2f %14.2f %10s %7d"
                     % ("%s -r %d" % (m["mix"], m["set_pct"]), m["fulldoc_ops_per_second"],
                        m["subdoc_ops_per_second"], _fmt_ratio(m["ratio"]),
                        m["fulldoc_cpu_us_per_op"], m["subdoc_cpu_us_per_op"],
                        _fmt_ratio(m["cpu_ratio"]),
                        m["fulldoc_errors"] + m["subdoc_errors"]))
    lines.append("fulldoc: GET / SET of the whole document (-J); subdoc: SUBDOC_MULTI_LOOKUP "
                 "of one field / SUBDOC_MULTI_MUTATION upserting one field (--subdoc)")
    lines += error_lines(data)
    return "\n".join(lines)


def error_lines(data):
    """A line per failed status, so that a broken run does not pass as a slow one."""
    lines = []
    for m in data["mixes"]:
        for variant in VARIANTS:
            names = {}
            for r in m["runs"][variant]:
                for name, count in r.get("error_names", {}).items():
                    names[name] = names.get(name, 0) + count
            lines += ["WARNING %s %s: %d x %s" % (m["mix"], variant, count, name)
                      for name, count in sorted(names.items())]
    return lines
