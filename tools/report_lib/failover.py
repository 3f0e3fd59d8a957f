"""tools/failover-bench's arithmetic: from one round's writes (each key's
list of (start, end, outcome) seconds) and the moment of the kill, how
long the victim's vBuckets took writes no more; medians over rounds; the
table. Pure: no cluster, no clock."""

import statistics

from report_lib.kvclient import AMBIGUOUS, OK


def first_acknowledged_after(writes, kill_t):
    """The end of the first write acknowledged (OK) that started at or
    after kill_t, or None."""
    ends = [end for start, end, outcome in writes if outcome == OK and start >= kill_t]
    return min(ends) if ends else None


def summarize(kill_t, writes_by_key):
    """One round: first_s (kill to the first key written again: the first
    promoted vBucket that takes writes), all_s (to the last: every vBucket
    the victim led takes writes; None if one never did), each key's
    seconds, and the writes acknowledged before the kill and ambiguous
    after it."""
    back = {key: first_acknowledged_after(writes, kill_t) for key, writes in writes_by_key.items()}
    seconds = {key: (t - kill_t if t is not None else None) for key, t in back.items()}
    known = [s for s in seconds.values() if s is not None]
    every_key = bool(seconds) and len(known) == len(seconds)
    return {
        "first_s": min(known) if known else None,
        "all_s": max(known) if every_key else None,
        "keys_back": len(known), "keys": len(seconds),
        "per_key_s": seconds,
        "acked_before": sum(1 for writes in writes_by_key.values()
                            for start, _, outcome in writes if outcome == OK and start < kill_t),
        "ambiguous_after": sum(1 for writes in writes_by_key.values()
                               for _, end, outcome in writes
                               if outcome == AMBIGUOUS and end >= kill_t),
    }


def median_row(runs):
    """Medians of first_s and all_s over the rounds where every key came
    back; the rounds where one did not are counted apart."""
    whole = [r for r in runs if r["all_s"] is not None]
    row = {}
    for key in ("first_s", "all_s", "map_s"):
        values = [r[key] for r in whole if r.get(key) is not None]
        row[key] = statistics.median(values) if values else None
        row[key + "_range"] = (min(values), max(values)) if values else None
    row["rounds"], row["incomplete"] = len(runs), len(runs) - len(whole)
    row["ambiguous_after"] = sum(r["ambiguous_after"] for r in runs)
    return row


def _seconds(value):
    return "%.2f s" % value if value is not None else "-"


def _range(values):
    return "%.2f-%.2f" % values if values else "-"


def render(results):
    """report.txt: the medians, then one line per round."""
    s = results["settings"]
    row = results["row"]
    lines = ["Failover: SIGKILL of one of %d nodes (%d replica(s), %d vBuckets, "
             "--failover-timeout %s s), %d keys on the killed node's vBuckets written with "
             "durability Majority, one writer each (tools/failover-bench, %s; medians of %d "
             "round(s))" % (s["nodes"], s["replicas"], s["vbuckets"], s["failover_timeout"],
                            s["keys"], results["machine"], row["rounds"]),
             "",
             "%-34s %10s %14s" % ("", "median", "range"),
             "%-34s %10s %14s" % ("kill to the first key written again", _seconds(row["first_s"]),
                                  _range(row["first_s_range"])),
             "%-34s %10s %14s" % ("kill to every key written again", _seconds(row["all_s"]),
                                  _range(row["all_s_range"])),
             "%-34s %10s %14s" % ("kill to the map without the node", _seconds(row["map_s"]),
                                  _range(row["map_s_range"])),
             ""]
    if row["incomplete"]:
        lines.append("%d of %d round(s): a key was not written again before the deadline "
                     "(left out of the medians)" % (row["incomplete"], row["rounds"]))
    for i, run in enumerate(results["runs"]):
        lines.append("round %d: victim %s, first %s, all %s, map %s; %d acknowledged before "
                     "the kill, %d ambiguous after it" % (
                         i + 1, run["victim"], _seconds(run["first_s"]), _seconds(run["all_s"]),
                         _seconds(run["map_s"]), run["acked_before"], run["ambiguous_after"]))
    lines += ["",
              "A write counts when it started after the kill and was acknowledged (SUCCESS); "
              "the writers retry",
              "NOT_MY_VBUCKET and TMPFAIL on the refreshed map and start a new write after a "
              "lost connection."]
    return "\n".join(lines)
