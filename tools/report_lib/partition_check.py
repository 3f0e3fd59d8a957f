"""The checks of a partition run's history (tools/partition-soak): did the
cluster lose an acknowledged write, or let two writes build on the same
value? Pure functions over plain records; no I/O.

The workload writes each key as a chain: a writer reads the key (value V,
CAS c) and sets it only over c (a CAS update), to a value that names its
own write id, V's id ("parent") and c ("base"). So every value the cluster
returns says which write made it and which value that write replaced, and
the final value of a key, followed back parent by parent, is the key's
history as the cluster kept it: its chain.

History records (dicts):
  write: type "write", key, id, parent (None for an initial SET), base
         (the CAS it was sent over; 0: none), outcome "ok" | "failed" |
         "ambiguous", status, cas (the new CAS, if ok), node, worker,
         start, end (seconds, one monotonic clock)
  read:  type "read", key, id (the value's write id; None: not found),
         cas, node, start, end
Finals: {key: {"id", "cas", "node"}}, read from each key's active once the
cluster has healed and settled.

The checks (check_history returns one Check per name, each with the
violations found, described by key, CAS values and nodes):
  acknowledged-writes-kept  every acknowledged write is on its key's final
      chain, so the final value is the last acknowledged write's or a later
      one's whose outcome was ambiguous
  failed-writes-absent  no write answered with a failure that leaves
      nothing behind (KEY_EEXISTS, NOT_MY_VBUCKET...) is on a chain or was
      ever read
  one-chain-of-cas  per key: no two acknowledged writes share a base CAS
      (two actives, or one twice, accepting a write over the same value);
      each value has one CAS wherever it is read or acknowledged, so each
      write's base is its parent's CAS; CAS grows along the chain; an
      acknowledged write that finished before another started precedes it
  read-values-kept  every value a read returned is on its key's final chain:
      a value that was visible and later vanished was committed and lost
      (stricter than the first check: its write may have been ambiguous)
  not-vacuous  enough acknowledged writes, at least one partition made and
      healed, a final value for every key
"""

from collections import defaultdict


class Check:
    """One check's result: violations (one line each, grouped where many
    writes broke the rule the same way) and details (every write, the
    first MAX_DETAILS)."""

    MAX_DETAILS = 500

    def __init__(self, name, description):
        self.name = name
        self.description = description
        self.violations = []
        self.details = []

    @property
    def passed(self):
        return not self.violations

    def fail(self, text):
        self.violations.append(text)

    def detail(self, text):
        if len(self.details) < self.MAX_DETAILS:
            self.details.append(text)


def _fmt_write(w):
    if w is None:
        return "unknown write"
    text = "%s (base %d -> cas %s, %s" % (w["id"], w.get("base") or 0,
                                          w.get("cas") or "?", w["outcome"])
    if w.get("status") and w["status"] != "SUCCESS":
        text += " %s" % w["status"]
    text += " on %s, t=%.3f..%.3f)" % (w.get("node"), w.get("start", 0), w.get("end", 0))
    return text


def _chain(final_id, writes):
    """The write ids from the final value back to its root (newest
    first), and an error text if the walk leaves the known writes or
    loops."""
    chain, seen = [], set()
    current = final_id
    while current is not None:
        if current in seen:
            return chain, "the chain loops at %s" % current
        seen.add(current)
        w = writes.get(current)
        if w is None:
            return chain, "value %s was written by no known write" % current
        chain.append(current)
        current = w["parent"]
    return chain, None


def check_history(records, finals, keys, partitions_made, partitions_healed, min_acked):
    """The five Checks, in the order of the module's comment."""
    kept = Check("acknowledged-writes-kept",
                 "every acknowledged write is on its key's final chain")
    absent = Check("failed-writes-absent",
                   "no write answered with a no-effect failure took effect")
    cas_chain = Check("one-chain-of-cas",
                      "one chain of CAS values per key, no two acknowledged writes "
                      "over the same base")
    read_kept = Check("read-values-kept", "every value a read returned is on the final chain")
    vacuous = Check("not-vacuous", "enough acknowledged writes, partitions made and healed")

    writes = {}  # id -> record
    by_key = defaultdict(list)
    reads_by_key = defaultdict(list)
    for r in records:
        if r["type"] == "write":
            if r["id"] in writes:
                cas_chain.fail("write id %s used twice" % r["id"])
            writes[r["id"]] = r
            by_key[r["key"]].append(r)
        elif r["type"] == "read" and r.get("id") is not None:
            reads_by_key[r["key"]].append(r)

    acked_updates = sum(1 for w in writes.values() if w["outcome"] == "ok" and w["parent"])
    if acked_updates < min_acked:
        vacuous.fail("%d acknowledged CAS updates, fewer than the %d required"
                     % (acked_updates, min_acked))
    if partitions_made < 1:
        vacuous.fail("no partition was made")
    if partitions_healed < 1:
        vacuous.fail("no partition was healed")

    for key in keys:
        kw = by_key.get(key, [])
        final = finals.get(key)
        if final is None or final.get("id") is None:
            vacuous.fail("%s: no final value read" % key)
            continue
        chain, error = _chain(final["id"], writes)
        if error:
            kept.fail("%s: final value %s (cas %d from %s): %s"
                      % (key, final["id"], final.get("cas", 0), final.get("node"), error))
        position = {wid: len(chain) - 1 - i for i, wid in enumerate(chain)}  # root = 0

        # The chain member each write off the chain branches from (None:
        # from no chain member), found once per write.
        fork = {}

        def fork_of(wid):
            path, current = [], wid
            while current is not None and current not in position and current not in fork:
                if current in path or current not in writes:
                    current = None
                    break
                path.append(current)
                current = writes[current]["parent"]
            found = current if current in position else fork.get(current)
            for member in path:
                fork[member] = found
            return found

        continued = {writes[c]["parent"]: writes[c] for c in chain if c in writes}

        def branches(lost, check, what):
            """One violation per place the lost writes branch off the
            chain: how many, when, on which nodes, and what the chain did
            there instead."""
            groups = defaultdict(list)
            for w in lost:
                groups[fork_of(w["id"])].append(w)
            for at, group in sorted(groups.items(), key=lambda kv: kv[1][0]["start"]):
                group.sort(key=lambda w: w["start"])
                base = writes.get(at)
                text = ("%s: %d %s off the final chain, branching from value %s (cas %s), "
                        "t=%.3f..%.3f, on %s; first %s" % (
                            key, len(group), what, at, base.get("cas") if base else "?",
                            group[0]["start"], group[-1]["end"],
                            ", ".join(sorted({str(w["node"]) for w in group})),
                            _fmt_write(group[0])))
                if len(group) > 1:
                    text += "; last %s" % _fmt_write(group[-1])
                rival = continued.get(at)
                text += ("; the chain went on from there with %s" % _fmt_write(rival) if rival
                         else "; the chain has nothing after it")
                text += "; final value %s (cas %d, read from %s)" % (
                    final["id"], final.get("cas", 0), final.get("node"))
                check.fail(text)
                for w in group:
                    check.detail("%s: %s" % (key, _fmt_write(w)))

        # acknowledged-writes-kept
        acked = [w for w in kw if w["outcome"] == "ok"]
        branches([w for w in acked if w["id"] not in position], kept,
                 "acknowledged writes")

        # failed-writes-absent
        read_ids = {r["id"] for r in reads_by_key.get(key, [])}
        for w in kw:
            if w["outcome"] != "failed":
                continue
            if w["id"] in position:
                absent.fail("%s: failed write %s is on the final chain" % (key, _fmt_write(w)))
            elif w["id"] in read_ids:
                absent.fail("%s: failed write %s was read" % (key, _fmt_write(w)))

        # one-chain-of-cas: shared bases
        by_base = defaultdict(list)
        for w in acked:
            if w["parent"] is not None:
                by_base[(w["parent"], w["base"])].append(w)
        for (parent, base), group in sorted(by_base.items(), key=lambda kv: kv[0][1]):
            if len(group) > 1:
                cas_chain.fail("%s: %d acknowledged writes over the same base (value %s, cas "
                               "%d): %s" % (key, len(group), parent, base,
                                            "; ".join(_fmt_write(w) for w in group)))
        # one-chain-of-cas: each value has one CAS
        seen_cas = defaultdict(set)  # write id -> {(cas, how)}
        for w in acked:
            seen_cas[w["id"]].add((w["cas"], "acknowledged by %s" % w["node"]))
        for r in reads_by_key.get(key, []):
            seen_cas[r["id"]].add((r["cas"], "read from %s" % r["node"]))
        for w in kw:
            if w["parent"] is not None and w["base"]:
                seen_cas[w["parent"]].add((w["base"], "base of %s" % w["id"]))
        if final.get("id") is not None:
            seen_cas[final["id"]].add((final.get("cas", 0), "final read from %s"
                                       % final.get("node")))
        for wid, observed in seen_cas.items():
            values = sorted({cas for cas, _ in observed})
            if len(values) > 1:
                cas_chain.fail("%s: value %s has %d CAS values: %s" % (
                    key, wid, len(values),
                    "; ".join("%d (%s)" % (cas, ", ".join(sorted(
                        {how for c, how in observed if c == cas})[:3])) for cas in values)))
        # one-chain-of-cas: CAS grows along the chain
        known = {wid: min(c for c, _ in obs) for wid, obs in seen_cas.items()}
        ordered = list(reversed(chain))
        for older, newer in zip(ordered, ordered[1:]):
            if older in known and newer in known and known[newer] <= known[older]:
                cas_chain.fail("%s: cas does not grow along the chain: %s then %s"
                               % (key, _fmt_write(dict(writes[older], cas=known[older])),
                                  _fmt_write(dict(writes[newer], cas=known[newer]))))
        # one-chain-of-cas: real-time order of acknowledged writes on the chain
        on_chain = sorted((w for w in acked if w["id"] in position),
                          key=lambda w: position[w["id"]])
        started_last = None  # the chain's write so far that started last
        for w in on_chain:
            if started_last is not None and w["end"] < started_last["start"]:
                cas_chain.fail("%s: %s finished before %s started, yet follows it on the "
                               "chain" % (key, _fmt_write(w), _fmt_write(started_last)))
            if started_last is None or w["start"] > started_last["start"]:
                started_last = w

        # read-values-kept
        read_lost = {}
        for r in reads_by_key.get(key, []):
            if r["id"] not in position and r["id"] not in read_lost:
                read_lost[r["id"]] = r
        lost_writes = [writes[wid] for wid in read_lost if wid in writes]
        branches(lost_writes, read_kept, "writes whose values were read")
        for wid, r in read_lost.items():
            if wid not in writes:
                read_kept.fail("%s: value %s read from %s (cas %d, t=%.3f) was written by no "
                               "known write" % (key, wid, r["node"], r["cas"], r["start"]))
    return [kept, absent, cas_chain, read_kept, vacuous]


def stale_reads(records):
    """Reads that returned a value an acknowledged write had already
    replaced before the read was sent (not a check: reads are served by
    whichever node takes itself for the active, and a cut-off one does
    until it learns otherwise). Returns (count, {node: count}, the
    stalest read and how many seconds its value had been replaced)."""
    replaced = {}  # (key, value id) -> when the first acknowledged write over it ended
    for r in records:
        if r["type"] == "write" and r["outcome"] == "ok" and r["parent"] is not None:
            k = (r["key"], r["parent"])
            replaced[k] = min(replaced.get(k, r["end"]), r["end"])
    count, nodes, worst = 0, defaultdict(int), (0.0, None)
    for r in records:
        if r["type"] != "read" or r.get("id") is None:
            continue
        at = replaced.get((r["key"], r["id"]))
        if at is not None and at < r["start"]:
            count += 1
            nodes[r["node"]] += 1
            if r["start"] - at > worst[0]:
                worst = (r["start"] - at, r)
    return count, dict(nodes), worst


# -- self-test -----------------------------------------------------------


def _w(key, wid, parent, base, outcome, cas=None, node="a", start=0.0, end=0.0):
    return {"type": "write", "key": key, "id": wid, "parent": parent, "base": base,
            "outcome": outcome, "status": {"ok": "SUCCESS", "failed": "KEY_EEXISTS",
                                           "ambiguous": "SYNC_WRITE_AMBIGUOUS"}[outcome],
            "cas": cas, "node": node, "worker": 0, "start": start, "end": end}


def _r(key, wid, cas, node="a", t=0.0):
    return {"type": "read", "key": key, "id": wid, "cas": cas, "node": node, "start": t,
            "end": t}


def self_test_cases():
    """(what, records, finals, (partitions made, healed), min_acked, the
    checks that must fail): a good history of one key, and bad ones, each
    made to break one rule."""
    k = "k"
    good = [
        _w(k, "init", None, 0, "ok", 100, start=0, end=1),
        _r(k, "init", 100, t=2),
        _w(k, "w1", "init", 100, "ok", 110, start=2, end=3),
        _r(k, "w1", 110, t=4),
        _w(k, "w2", "w1", 110, "failed", start=4, end=5),      # lost a CAS race
        _w(k, "w3", "w1", 110, "ok", 120, start=4, end=5),
        _r(k, "w3", 120, t=6),
        _w(k, "w4", "w3", 120, "ambiguous", start=6, end=8),  # took effect after all
    ]
    finals = {k: {"id": "w4", "cas": 130, "node": "b"}}
    fork = good[:-1] + [_w(k, "w5", "w1", 110, "ok", 121, node="c", start=4, end=5)]
    backwards = [_w(k, "init", None, 0, "ok", 100, start=0, end=1),
                 _w(k, "a", "init", 100, "ok", 110, start=5, end=6),
                 _w(k, "b", "a", 110, "ok", 120, start=2, end=3)]
    return [
        ("a good history", good, finals, (1, 1), 1, set()),
        ("a good history ending on an acknowledged write", good[:-1],
         {k: {"id": "w3", "cas": 120, "node": "b"}}, (1, 1), 1, set()),
        ("an acknowledged write lost (final value older than it)", good,
         {k: {"id": "w1", "cas": 110, "node": "b"}}, (1, 1), 1,
         {"acknowledged-writes-kept", "read-values-kept"}),
        ("two acknowledged writes over one base CAS", fork, {k: {"id": "w3", "cas": 120}},
         (1, 1), 1, {"acknowledged-writes-kept", "one-chain-of-cas"}),
        ("a write answered KEY_EEXISTS took effect", good[:-1],
         {k: {"id": "w2", "cas": 121}}, (1, 1), 1,
         {"acknowledged-writes-kept", "failed-writes-absent", "read-values-kept"}),
        ("a value read with two CAS values", good + [_r(k, "w3", 125, node="c", t=7)], finals,
         (1, 1), 1, {"one-chain-of-cas"}),
        ("CAS going backwards along the chain", good,
         {k: {"id": "w4", "cas": 115, "node": "b"}}, (1, 1), 1, {"one-chain-of-cas"}),
        ("a final value no write made", good, {k: {"id": "stranger", "cas": 999}}, (1, 1), 1,
         {"acknowledged-writes-kept", "read-values-kept"}),
        ("an ambiguous write's value read, then lost", good + [_r(k, "w4", 130, t=9)],
         {k: {"id": "w3", "cas": 120}}, (1, 1), 1, {"read-values-kept"}),
        ("acknowledged writes on the chain against real time", backwards,
         {k: {"id": "b", "cas": 120}}, (1, 1), 1, {"one-chain-of-cas"}),
        ("too few acknowledged writes", good, finals, (1, 1), 50, {"not-vacuous"}),
        ("no partition made", good, finals, (0, 0), 1, {"not-vacuous"}),
        ("a partition never healed", good, finals, (1, 0), 1, {"not-vacuous"}),
        ("no final value", good, {}, (1, 1), 1, {"not-vacuous"}),
    ]


def failed_checks(records, finals, partitions, min_acked, keys=("k",)):
    checks = check_history(records, finals, list(keys), partitions[0], partitions[1], min_acked)
    return {c.name for c in checks if not c.passed}


def self_test():
    """Every self_test_cases() history checked; returns what went wrong
    (empty: the checker fails exactly the checks each case breaks)."""
    problems = []
    for what, records, finals, partitions, min_acked, want in self_test_cases():
        got = failed_checks(records, finals, partitions, min_acked)
        if got != want:
            problems.append("%s: failed checks %s, want %s" % (what, sorted(got), sorted(want)))
    return problems
