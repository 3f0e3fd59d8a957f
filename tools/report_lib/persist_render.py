"""What tools/persist-latency prints and plots from its results.json, and
the summary the report (tools/report) shows of the latest run.

results.json: {"mode", "machine", "settings",
  "runs": [{"name", "nodes", "cache", "backend", "pillowfight" (its --json),
            "fdatasyncs", "serverCpuSeconds",
            "floor": {"one": F, "parallel": F}}],  F: us_mean, us_p99, syncs_per_second
  "none": [{"name", "pillowfight"}]}
A run on a cluster ("nodes" > 1) has every node's fdatasyncs and CPU summed,
and its pillowfight "server" merged over the nodes (each node's under
"nodes"). Older results have no "nodes": one node."""

import glob
import os

from report_lib import tables

HISTOGRAM = "sync_write_commit_persist_to_majority"


def _fmt_us(ns):
    us = ns / 1e3
    return "%dus" % us if us < 10000 else "%dms" % (us / 1e3)


def server_histogram(run):
    return run["pillowfight"]["server"]["histograms"].get(HISTOGRAM, {"count": 0, "buckets": []})


def client_histogram(run):
    return run["pillowfight"]["load"]["histograms"]["SET"]


def nodes_of(run):
    return run.get("nodes", 1)


def label(run):
    return "%s, %d node%s" % (run["name"], nodes_of(run), "" if nodes_of(run) == 1 else "s")


def by_nodes(runs):
    """The runs grouped by node count, fewest nodes first."""
    counts = sorted({nodes_of(r) for r in runs})
    return [(n, [r for r in runs if nodes_of(r) == n]) for n in counts]


def durable_rate(run):
    return run["pillowfight"]["load"]["opsPerSecond"]


def syncs_per_write(run):
    writes = server_histogram(run)["count"]
    return run["fdatasyncs"] / writes if writes else 0.0


def representative_runs(data):
    """One run per configuration, in the order first run: the one with the
    median durable throughput of its rounds (the disk is shared: a single
    round can land on someone else's burst of fsyncs)."""
    configurations = []
    for r in data["runs"]:
        if label(r) not in configurations:
            configurations.append(label(r))
    chosen = []
    for configuration in configurations:
        rounds = sorted((r for r in data["runs"] if label(r) == configuration),
                        key=durable_rate)
        chosen.append(rounds[(len(rounds) - 1) // 2])
    return chosen


def rounds_lines(data):
    """Every round's throughput and commit mean, per configuration."""
    lines = []
    for rep in representative_runs(data):
        rounds = [r for r in data["runs"] if label(r) == label(rep)]
        if len(rounds) > 1:
            lines.append("  %-28s %s" % (label(rep), ", ".join(
                "%.0f/s (mean %s)" % (durable_rate(r), _fmt_us(server_histogram(r)["mean"]))
                for r in rounds)))
    if not lines:
        return ""
    return "\n".join(["Every round, in the order run (the tables above show each "
                       "configuration's median round):"] + lines)


def side_by_side(runs):
    """The server's commit histograms of every run, one column each, on the
    server's (power-of-two) bucket edges: count and cumulative percent."""
    uppers = sorted({b[0] for r in runs for b in server_histogram(r)["buckets"]})
    counts = [{b[0]: b[1] for b in server_histogram(r)["buckets"]} for r in runs]
    totals = [max(1, server_histogram(r)["count"]) for r in runs]
    width = 24
    lines = ["  %s: %s" % (HISTOGRAM, ", ".join(
        "%s %d total" % (r["name"], server_histogram(r)["count"]) for r in runs)),
        "  %-19s" % "range" + "".join(("%*s" % (width, r["name"])) for r in runs)]
    seen = [0] * len(runs)
    low = 0
    for upper in uppers:
        cells = []
        for i, c in enumerate(counts):
            n = c.get(upper, 0)
            seen[i] += n
            cells.append("%*s" % (width, "%d (%8.4f%%)" % (n, 100.0 * seen[i] / totals[i])))
        lines.append("  %8s - %-8s" % (_fmt_us(low), _fmt_us(upper)) + "".join(cells))
        low = upper + 1
    lines.append("  %-19s" % "Avg" + "".join(
        "%*s" % (width, _fmt_us(server_histogram(r).get("mean", 0))) for r in runs))
    return "\n".join(lines)


def _ratio(a, b):
    return "%.2fx" % (a / b) if a and b else "-"


def comparison_table(runs):
    """Throughput, means and p99s of every run, with the ratios the seed
    reports: cache off / cache on, and Classic / Wheel (both cache on)."""
    def row(label, values, fmt):
        return "  %-38s" % label + "".join("%20s" % fmt(v) for v in values)
    sh = [server_histogram(r) for r in runs]
    ch = [client_histogram(r) for r in runs]
    lines = ["  %-38s" % "" + "".join("%20s" % r["name"] for r in runs),
             row("durable writes/s", [durable_rate(r) for r in runs], lambda v: "%.0f" % v),
             row("server commit mean", [h.get("mean", 0) for h in sh], _fmt_us),
             row("server commit p50", [h.get("p50", 0) for h in sh], _fmt_us),
             row("server commit p99", [h.get("p99", 0) for h in sh], _fmt_us),
             row("client latency mean", [h.get("mean", 0) for h in ch], _fmt_us),
             row("client latency p99", [h.get("p99", 0) for h in ch], _fmt_us),
             row("client latency p99.9 / max",
                 [(h.get("p999", 0), h.get("max", 0)) for h in ch],
                 lambda v: "%s / %s" % (_fmt_us(v[0]), _fmt_us(v[1]))),
             row("fdatasyncs (flusher batches) per write", [syncs_per_write(r) for r in runs],
                 lambda v: "%.3f" % v),
             row("server CPU us per durable write",
                 [1e6 * r["serverCpuSeconds"] / max(1, server_histogram(r)["count"])
                  for r in runs], lambda v: "%.0f" % v),
             row("errors", [r["pillowfight"]["load"]["errorCount"] for r in runs], str)]
    return "\n".join(lines + ratio_lines(runs))


def ratio_lines(runs):
    """The ratios the seed reports: cache off / cache on, and Classic /
    Wheel (both cache on)."""
    lines = []
    by_name = {(r["cache"], r["backend"]): r for r in runs}
    off, on = by_name.get((False, "wheel")), by_name.get((True, "wheel"))
    classic = by_name.get((True, "classic"))
    if off and on:
        lines.append("  cache off / cache on (Wheel): mean %s, p99 %s, throughput %s "
                     "(the seed: mean 1.06x)" % (
                         _ratio(server_histogram(off)["mean"], server_histogram(on)["mean"]),
                         _ratio(server_histogram(off)["p99"], server_histogram(on)["p99"]),
                         _ratio(durable_rate(off), durable_rate(on))))
    if classic and on:
        lines.append("  Classic / Wheel (cache on): mean %s, p99 %s, throughput %s" % (
            _ratio(server_histogram(classic)["mean"], server_histogram(on)["mean"]),
            _ratio(server_histogram(classic)["p99"], server_histogram(on)["p99"]),
            _ratio(durable_rate(classic), durable_rate(on))))
    return lines


def nodes_table(runs):
    """Each configuration on one node and on N nodes, row under row, with
    the N-node row's ratios to the one-node row: throughput, the server's
    commit mean and p99 (the seed's figures)."""
    def cells(r):
        sh, ch = server_histogram(r), client_histogram(r)
        return "  %-20s %5d %10.0f %12s %12s %12s" % (
            r["name"], nodes_of(r), durable_rate(r), _fmt_us(sh.get("mean", 0)),
            _fmt_us(sh.get("p99", 0)), _fmt_us(ch.get("p99", 0)))
    lines = ["  %-20s %5s %10s %12s %12s %12s   %s" % (
        "configuration", "nodes", "writes/s", "commit mean", "commit p99", "client p99",
        "vs 1 node: writes/s, mean, p99")]
    names = list(dict.fromkeys(r["name"] for r in runs))
    for r in sorted(runs, key=lambda r: (names.index(r["name"]), nodes_of(r))):
        one = next((o for o in runs if o["name"] == r["name"] and nodes_of(o) == 1), None)
        if one is None or r is one:
            lines.append(cells(r))
            continue
        lines.append(cells(r) + "   %s, %s, %s" % (
            _ratio(durable_rate(r), durable_rate(one)),
            _ratio(server_histogram(r)["mean"], server_histogram(one)["mean"]),
            _ratio(server_histogram(r)["p99"], server_histogram(one)["p99"])))
    return "\n".join(lines)


def bound_lines(data):
    """What the fdatasync floor allows for the flushers, and how close each
    run came: bound = parallel syncs/s (as many files as flushers) x durable
    writes per fdatasync measured in that run. Each run has its own floor,
    the better of two measured just before and after its load (older results:
    one for all)."""
    lines = ["  floor: 4 KiB append + fdatasync on the data directory's file system, on one "
             "file and on one file per flusher in parallel, the better of just before and just "
             "after each load"]
    for r in representative_runs(data):
        floor = r.get("floor", data.get("floor"))
        one, par = floor["one"], floor["parallel"]
        spw = syncs_per_write(r)
        lines.append("  %-28s floor: one file %.0f us mean (p99 %.0f us) = %.0f/s, %d files "
                     "%.0f/s" % (label(r), one["us_mean"], one["us_p99"],
                                 one["syncs_per_second"], par["files"], par["syncs_per_second"]))
        if not spw:
            continue
        bound = par["syncs_per_second"] / spw
        lines.append("  %-28s %.0f durable writes/s = %.0f%% of the floor's bound %.0f/s "
                     "(%.0f fdatasyncs/s, %.2f writes per fdatasync)" % (
                         "", durable_rate(r), 100.0 * durable_rate(r) / bound, bound,
                         durable_rate(r) * spw, 1 / spw))
    return "\n".join(lines)


def none_lines(data):
    if not data.get("none"):
        return ""
    out = []
    for r in data["none"]:
        load = r["pillowfight"]["load"]
        h = load["histograms"]["SET"]
        out.append("  %-20s %9.0f sets/s  p50 %s  p99 %s  max %s  errors %d" % (
            r["name"], load["opsPerSecond"], _fmt_us(h.get("p50", 0)), _fmt_us(h.get("p99", 0)),
            _fmt_us(h.get("max", 0)), load["errorCount"]))
    if len(data["none"]) == 2:
        a, b = (r["pillowfight"]["load"]["opsPerSecond"] for r in data["none"])
        out.append("  %s / %s: %s" % (data["none"][0]["name"], data["none"][1]["name"],
                                      _ratio(a, b)))
    return "\n".join(out)


def render(data):
    s = data["settings"]
    m = data["machine"]
    head = ("== Seed 002 experiment: PersistToMajority writes, %d clients, batch %d, %d-byte "
            "random bodies, set 100%%, sequential keys over %d items, %d cycles per client, "
            "%d vBuckets, %d shards, --sync fdatasync, %d round(s) (%s mode)" % (
                s["clients"], s["batch"], s["size"], s["items"], s["cycles"], s["vbuckets"],
                s["shards"], s.get("rounds", 1), data["mode"]))
    machine = "machine: %s CPUs, %s, data on %s (%s)" % (
        m.get("cpus"), m.get("kernel"), m.get("filesystem"), m.get("device"))
    runs = representative_runs(data)
    groups = by_nodes(runs)
    parts = [head, machine]
    for nodes, group in groups:
        if len(groups) > 1:
            parts += ["", "One node:" if nodes == 1 else (
                "%d nodes (tools/cluster-run, %d replica%s: PersistToMajority waits for every "
                "node; the histogram merges each node's, which counts its active vBuckets' "
                "writes; fdatasyncs and CPU: all nodes):" % (
                    nodes, nodes - 1, "" if nodes == 2 else "s"))]
        parts += ["", side_by_side(group), "", comparison_table(group)]
    if len(groups) > 1:
        parts += ["", "The same configurations on one node and on %s nodes (each one's median "
                      "round; server commit = sync_write_commit_persist_to_majority):" %
                  " and ".join(str(n) for n, _ in groups[1:]), nodes_table(runs)]
    parts += ["", "What bounds durable throughput:", bound_lines(data)]
    if rounds_lines(data):
        parts += ["", rounds_lines(data)]
    none = none_lines(data)
    if none:
        parts += ["", "Durability none, the same load over the memcached binary protocol "
                      "(%d clients, batch 1, %d sets each):" % (s["clients"], s["noneCycles"]),
                  none]
    return "\n".join(parts)


def plot(data, outdir):
    """CDFs of the server's commit latency and of the client's latency,
    one line per run; returns the PNG path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    for ax, getter, title in ((axes[0], server_histogram, "server: " + HISTOGRAM),
                              (axes[1], client_histogram, "client: SET send to answer")):
        for r in representative_runs(data):
            h = getter(r)
            total = max(1, h["count"])
            xs, ys, seen = [], [], 0
            for upper, count in h["buckets"]:
                seen += count
                xs.append(max(upper, 1) / 1e6)
                ys.append(100.0 * seen / total)
            ax.step(xs, ys, where="post", linestyle="-" if nodes_of(r) == 1 else "--",
                    label="%s (mean %s)" % (label(r), _fmt_us(h.get("mean", 0))))
        ax.set_xscale("log")
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("cumulative %")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    path = os.path.join(outdir, "persist_latency.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def latest_results(repo):
    runs = sorted(glob.glob(os.path.join(repo, "out", "persist-latency", "*", "results.json")))
    return runs[-1] if runs else None


def report_block(repo):
    """A few lines for tools/report's summary from the latest saved run."""
    import json
    path = latest_results(repo)
    if not path:
        return ""
    with open(path) as f:
        data = json.load(f)
    # Its own machine, not the report's: the saved run may be older, or
    # copied from another machine.
    machine = tables.machine_note({"cores": data.get("machine", {}).get("cpus")})
    lines = [tables.titled("Seed 002 persistence latency (tools/persist-latency, %s, %s mode):"
                           % (os.path.basename(os.path.dirname(path)), data["mode"]), machine)]
    groups = by_nodes(representative_runs(data))
    for nodes, group in groups:
        prefix = "%d node%s: " % (nodes, "" if nodes == 1 else "s") if len(groups) > 1 else ""
        lines += ["  " + prefix + line.strip() for line in ratio_lines(group)]
    if len(groups) > 1:
        lines += nodes_table(representative_runs(data)).splitlines()
    lines += bound_lines(data).splitlines()
    none = none_lines(data).splitlines()
    if none:
        lines.append("  durability none: " + none[-1].strip())
    return "\n".join(lines)
