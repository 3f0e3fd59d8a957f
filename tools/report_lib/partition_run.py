"""One partition run (tools/partition-soak): etcd and three kvexec-server
nodes on test hosts of their own (testhosts.py), a durable CAS-update
workload from the root namespace, partitions made and healed on a seeded
schedule, then the history checked (partition_check.py).

Steps:
  1. Hosts etcd, n0, n1, n2 on one bridge; etcd, then the nodes (--cluster,
     --replicas 1, few vBuckets, --sync none; with --buckets N, N buckets,
     each a cluster of its own) each in its namespace; wait until every
     bucket's cluster has settled (every node alive and on the map's
     revision, every vBucket with an active, every replica stream open).
  2. Each key (--keys in each bucket) gets an initial value (a durable
     SET); then the workers
     (threads) loop: GET a random key from its active, SET it over the CAS
     read (durability Majority unless asked otherwise); every outcome
     recorded (kvclient.py says which are acknowledged, failed or
     ambiguous). Even workers learn a new map only from NOT_MY_VBUCKET, odd
     ones also from every node every 0.5 s: while two nodes both take
     themselves for a vBucket's active, each half writes to one of them.
  3. The schedule, drawn from --seed before the run (make_schedule; KINDS
     says what each kind of partition cuts): steady load, then a partition,
     held, healed, the cluster let settle; repeated. The same seed gives the
     same sequence of partitions.
  4. A monitor samples `kvexec-cluster status --json` and the nodes' maps
     (the first bucket's: its leader is the one "leader" partitions cut)
     every 0.5 s: leader changes, map revisions, vBuckets whose active
     moved, and for each partition how long until the cut-off node's lease
     was gone, until it held no active vBucket (failover), until the
     cluster settled after the heal.
  5. Workers stopped, the last heal settled, each key read from its active
     (and its replicas, for the summary), the checks run, the summary
     printed, the history and logs kept under --out.

Threads: the caller's thread drives the network and the schedule; the
workers and the monitor only read `self.stopping` and append to their own
lists (list.append is atomic in CPython); a ClusterMap has its own lock.
"""

import json
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter

from report_lib import kvclient, partition_check, testhosts

NODES = ["n0", "n1", "n2"]
KV_PORT = 11210
TLS_PORT = 11207  # Couchbase's TLS data port
ETCD_PORT = 2379
# node: isolate a node drawn by the seed from the other nodes and etcd;
# leader: the same for the node elected when it starts; active: for the node
# then active for the most vBuckets (the map is never rebalanced, so after a
# few failovers one node holds them all); pair: cut two nodes from each
# other, both still reaching etcd; etcd: cut the node with the most actives
# from etcd only (it still reaches its replicas).
KINDS = ("node", "leader", "active", "pair", "etcd")


def make_schedule(seed, kinds, hold, steady, seconds=None, count=None, gap_max=0.2,
                  settle_allowance=2.0):
    """The partitions of a run, drawn from `seed` alone: a list of {kind,
    targets (None: chosen when it starts, by its kind), steady, hold, gap
    (seconds between cutting the target's packets to its peers and theirs
    to it)}; the first `count`, or as many as fit in `seconds` counting at
    least `settle_allowance` after each heal (at least one). The same seed
    draws the same sequence, so a longer plan starts with a shorter one."""
    rng = random.Random(seed)
    steps, planned = [], 0.0
    while True:
        kind = rng.choice(kinds)
        if kind == "pair":
            targets = sorted(rng.sample(NODES, 2))
        elif kind in ("leader", "active", "etcd"):
            targets = None
        else:
            targets = [rng.choice(NODES)]
        step = {"kind": kind, "targets": targets, "steady": round(rng.uniform(*steady), 2),
                "hold": round(rng.uniform(*hold), 2), "gap": round(rng.uniform(0, gap_max), 3)}
        planned += step["steady"] + step["hold"] + settle_allowance
        if steps and (len(steps) == count if count is not None else planned > seconds):
            return steps
        steps.append(step)


def describe_step(step):
    who = {"leader": "the leader", "active": "the node with the most actives",
           "etcd": "the node with the most actives"}.get(step["kind"]) or " and ".join(
        step["targets"])
    what = "cut %s" if step["kind"] == "pair" else (
        "cut %s from etcd" if step["kind"] == "etcd" else "isolate %s")
    return "after %.1f s, %s for %.1f s (the other way %.0f ms later)" % (
        step["steady"], what % who, step["hold"], step["gap"] * 1000)


def settled(status, names=NODES, replicas=1):
    """As tools/cluster-run: every node alive, in the map and on its
    revision, every vBucket with an active, every replica stream open."""
    if status is None or status.get("mapRevision", 0) == 0:
        return False
    nodes = {node["name"]: node for node in status["nodes"]}
    if sorted(nodes) != sorted(names) or status["vbucketsWithoutActive"] != 0:
        return False
    if status["numReplicas"] != replicas:
        return False
    return all(node["alive"] and node["inMap"] and node["appliedRevision"] == status["mapRevision"]
               and node.get("streamsOpen") is not None
               and node["replicaVBucketsApplied"] == node["replica"]
               and node["streamsOpen"] == node["replicaVBucketsApplied"]
               for node in nodes.values())


class PartitionRun:
    def __init__(self, args, out_dir, log):
        self.args = args
        self.out = out_dir
        self.log_line = log
        self.t0 = time.monotonic()
        self.stopping = threading.Event()
        self.records = []      # the workers' history
        self.samples = []      # the monitor's
        self.partitions = []   # one dict per partition made
        self.node_procs = {}
        self.exited = {}       # node -> exit code, for those that exited during the run
        self.problems = []     # (what, text): what went wrong besides the checks
        self.net = None
        # The buckets the nodes serve (--buckets): "default", then b1, b2...
        self.buckets = ["default"] + ["b%d" % i for i in range(1, args.buckets)]
        # Per bucket: the map the even workers route by (NOT_MY_VBUCKET-driven)
        # and the odd workers' (also refreshed by the monitor).
        self.cmaps = {}
        self.fresh_maps = {}
        self.cmap = None        # the first bucket's, which the monitor samples
        self.fresh_map = None

    def now(self):
        return time.monotonic() - self.t0

    def log(self, text):
        self.log_line("[%7.1fs] %s" % (self.now(), text))

    # -- the cluster ------------------------------------------------------

    def etcd_url(self):
        scheme = "https" if self.args.tls else "http"
        return "%s://%s:%d" % (scheme, self.net.address("etcd"), ETCD_PORT)

    def node_address(self, name):
        return "%s:%d" % (self.net.address(name), KV_PORT)

    def status(self, bucket=None):
        """`kvexec-cluster status --json` of `bucket`'s cluster (default: the
        first bucket's, whose leader and map the monitor follows)."""
        root = "/kvexec/" + (bucket or self.buckets[0])
        ca = ["--etcd-ca", self.cert] if self.args.tls else []
        try:
            result = subprocess.run([self.args.cluster_tool, "--etcd", self.etcd_url()] + ca +
                                    ["--root", root, "status", "--json"],
                                    capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            return None
        if result.returncode != 0:
            return None
        try:
            return json.loads(result.stdout)
        except ValueError:
            return None

    def statuses(self):
        """Every bucket's cluster status, by bucket."""
        return {b: self.status(b) for b in self.buckets}

    def start_cluster(self, data):
        a = self.args
        etcd_address = self.net.address("etcd")
        url = self.etcd_url()
        peer = "http://127.0.0.1:2380"
        tls = self.tls_flags(data) if a.tls else []
        served = ["--cert-file", self.cert, "--key-file", self.key] if a.tls else []
        self.etcd = self.net.spawn("etcd", [a.etcd] + served + [
            "--name", "kvexec", "--data-dir", os.path.join(data, "etcd"),
            "--listen-client-urls", url, "--advertise-client-urls", url,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", "kvexec=" + peer,
            "--heartbeat-interval", "50", "--election-timeout", "500"],
            os.path.join(self.out, "etcd.log"))
        until = time.monotonic() + 30
        while self.status() is None:
            if self.etcd.poll() is not None or time.monotonic() > until:
                raise RuntimeError("etcd did not start at %s; see %s/etcd.log"
                                   % (etcd_address, self.out))
            time.sleep(0.1)
        for name in NODES:
            argv = [a.server, "--host", self.net.address(name), "--port", str(KV_PORT),
                    "--data-dir", os.path.join(data, name), "--cluster", url, "--node", name,
                    "--replicas", "1", "--vbuckets", str(a.vbuckets), "--sync", "none"]
            if len(self.buckets) > 1:
                argv += [flag for b in self.buckets for flag in ("--bucket", b)]
            self.node_procs[name] = self.net.spawn(name, argv + tls + list(a.server_flag),
                                                   os.path.join(self.out, name + ".log"))
        for name in NODES:
            self.wait_log_line(name, "kvexec-server: ready on ", 60)
        self.log("etcd at %s, nodes %s" % (url, ", ".join(
            "%s %s (pid %d)" % (n, self.node_address(n), self.node_procs[n].pid)
            for n in NODES)))
        took = self.wait_settled(a.settle_deadline)
        if took is None:
            raise RuntimeError("the cluster did not settle within %.0f s: %s"
                               % (a.settle_deadline, json.dumps(self.statuses())))
        self.log("cluster settled after %.1f s" % took)

    def tls_flags(self, data):
        """--tls: one self-signed certificate issued to every node's address
        and etcd's, which each node serves on its TLS port, etcd serves to
        its clients, and the nodes (and status()) trust as their CA, so that
        replication between the nodes and every request to etcd go over TLS
        (the workers stay plain). The nodes' flags."""
        cert, key = os.path.join(data, "nodes.pem"), os.path.join(data, "nodes.key")
        self.cert, self.key = cert, key
        names = ",".join("IP:" + self.net.address(n) for n in ["etcd"] + NODES)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=kvexec partition soak", "-addext",
                        "subjectAltName=" + names, "-keyout", key, "-out", cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return ["--tls-port", str(TLS_PORT), "--tls-cert", cert, "--tls-key", key,
                "--cluster-tls-ca", cert, "--etcd-ca", cert]

    def wait_log_line(self, name, prefix, deadline):
        path = os.path.join(self.out, name + ".log")
        until = time.monotonic() + deadline
        while time.monotonic() < until:
            with open(path, errors="replace") as f:
                if any(line.startswith(prefix) for line in f):
                    return
            if self.node_procs[name].poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("node %s did not become ready; its log ends:\n%s"
                           % (name, log_tail(path)))

    def wait_settled(self, deadline, stable=3.0):
        """Seconds until the cluster settled and then stayed settled, on one
        map revision, for `stable` seconds (a node cut for less than its
        lease may join again a moment after the heal); None if not within
        deadline."""
        start = time.monotonic()
        since = revision = None
        while time.monotonic() - start < deadline + stable and not self.stopping.is_set():
            self.check_nodes_running()
            statuses = self.statuses()
            now = time.monotonic()
            if all(settled(status) for status in statuses.values()):
                revisions = [status["mapRevision"] for status in statuses.values()]
                if since is None or revisions != revision:
                    since, revision = now, revisions
                    if since - start > deadline:
                        break
                elif now - since >= stable:
                    return since - start
            else:
                since = None
            time.sleep(0.25)
        return None

    def check_nodes_running(self):
        for name, proc in self.node_procs.items():
            if proc.poll() is not None and name not in self.exited:
                self.exited[name] = proc.returncode
                self.problems.append(("crash", "node %s exited with %s during the run; see "
                                                "%s.log" % (name, proc.returncode, name)))
                self.log("node %s EXITED with %s" % (name, proc.returncode))

    # -- the workload -----------------------------------------------------

    def keys(self):
        """The history's keys: --keys in each bucket; with several buckets,
        each named "BUCKET/KEY"."""
        keys = ["pt-key-%02d" % i for i in range(self.args.keys)]
        if len(self.buckets) == 1:
            return keys
        return ["%s/%s" % (b, k) for b in self.buckets for k in keys]

    def split_key(self, key):
        """(bucket, key in it) of a history key."""
        if "/" in key:
            return tuple(key.split("/", 1))
        return self.buckets[0], key

    def clients(self, maps, **options):
        """One kvclient.Client per bucket, routed by `maps`."""
        return {b: kvclient.Client(maps[b], **options) for b in self.buckets}

    @staticmethod
    def close_clients(clients):
        for client in clients.values():
            client.close()

    def initialize_keys(self):
        clients = self.clients(self.cmaps)
        try:
            for key in self.keys():
                bucket, doc = self.split_key(key)
                client = clients[bucket]
                for attempt in range(20):
                    wid = "init-%s-%d" % (key, attempt)
                    value = json.dumps({"id": wid, "parent": None, "base": 0}).encode()
                    start = self.now()
                    r = client.set(doc.encode(), value, cas=0,
                                   durability=self.args.durability_level,
                                   durability_timeout_ms=self.args.durability_timeout_ms)
                    self.records.append(self.write_record(key, wid, None, 0, r, start, -1))
                    if r.outcome == kvclient.OK:
                        break
                    time.sleep(0.2)
                else:
                    raise RuntimeError("could not write %s's initial value: %s" % (key, r))
        finally:
            self.close_clients(clients)

    def write_record(self, key, wid, parent, base, r, start, worker):
        return {"type": "write", "key": key, "id": wid, "parent": parent, "base": base,
                "outcome": r.outcome, "status": r.status, "cas": r.cas if r.outcome == "ok"
                else None, "node": r.node, "worker": worker, "start": start, "end": self.now(),
                "attempts": r.attempts}

    def worker(self, index):
        rng = random.Random("%d/%d" % (self.args.seed, index))
        # Even workers learn a new map only from NOT_MY_VBUCKET, as an SDK
        # does; odd ones from every node every 0.5 s. While two nodes both
        # take themselves for a vBucket's active, the two halves write to
        # both, and the checks see it.
        maps = self.cmaps if index % 2 == 0 else self.fresh_maps
        clients = self.clients(maps, retry_budget=self.args.retry_budget)
        keys = self.keys()
        seq = 0
        try:
            while not self.stopping.is_set():
                key = rng.choice(keys)
                bucket, doc = self.split_key(key)
                client = clients[bucket]
                start = self.now()
                r = client.get(doc.encode())
                if r.outcome != kvclient.OK:
                    self.records.append({"type": "read", "key": key, "id": None, "cas": 0,
                                         "node": r.node, "start": start, "end": self.now(),
                                         "status": r.status})
                    time.sleep(0.05)
                    continue
                try:
                    parent = json.loads(r.value)["id"]
                except (ValueError, KeyError, TypeError):
                    parent = "<unparsable %r>" % r.value[:40]
                self.records.append({"type": "read", "key": key, "id": parent, "cas": r.cas,
                                     "node": r.node, "start": start, "end": self.now(),
                                     "status": r.status})
                seq += 1
                wid = "w%d-%d" % (index, seq)
                value = json.dumps({"id": wid, "parent": parent, "base": r.cas}).encode()
                start = self.now()
                w = client.set(doc.encode(), value, cas=r.cas,
                               durability=self.args.durability_level,
                               durability_timeout_ms=self.args.durability_timeout_ms)
                self.records.append(self.write_record(key, wid, parent, r.cas, w, start, index))
                if self.args.think:
                    time.sleep(self.args.think)
        finally:
            self.close_clients(clients)

    # -- the monitor ------------------------------------------------------

    def monitor(self):
        mon_map = self.fresh_map
        last_actives = None
        while not self.stopping.wait(0.5):
            status = self.status()
            for fresh in self.fresh_maps.values():  # the odd workers' maps
                fresh.refresh()
            sample = {"t": self.now(), "leader": None, "revision": None, "alive": {},
                      "actives": {}, "settled": False, "moved": 0}
            if status is not None:
                sample["leader"] = status.get("leader")
                sample["revision"] = status.get("mapRevision")
                sample["alive"] = {n["name"]: n["alive"] for n in status["nodes"]}
                sample["settled"] = settled(status)
            rev, servers, vbmap = mon_map.snapshot()
            owner = {self.node_address(name): name for name in NODES}
            actives = [owner.get(servers[c[0]]) if c and c[0] >= 0 else None for c in vbmap]
            sample["map_rev"] = rev
            sample["actives"] = dict(Counter(a for a in actives if a))
            if last_actives is not None and len(last_actives) == len(actives):
                sample["moved"] = sum(1 for a, b in zip(last_actives, actives) if a != b)
            last_actives = actives
            self.samples.append(sample)

    def latest(self):
        return self.samples[-1] if self.samples else None

    # -- the schedule -----------------------------------------------------

    def partition(self, step, index):
        status = self.status()
        leader = status.get("leader") if status else None
        kind, targets = step["kind"], step["targets"]
        sample = self.latest() or {}
        before = dict(sample.get("actives", {}))
        if kind == "leader":
            targets = [leader] if leader in NODES else [NODES[index % 3]]
        elif kind in ("active", "etcd"):
            targets = [max(NODES, key=lambda n: (before.get(n, 0), -NODES.index(n)))]
        p = {"index": index, "kind": kind, "targets": targets, "leader_before": leader,
             "actives_before": before, "hold": step["hold"], "start": self.now()}
        first_record = len(self.records)
        if kind == "pair":
            self.net.cut(targets[0], targets[1], step["gap"])
            self.log("partition %d: cut %s from %s (leader %s; actives %s)"
                     % (index, targets[0], targets[1], leader, before))
        elif kind == "etcd":
            self.net.cut(targets[0], "etcd", step["gap"])
            self.log("partition %d: cut %s from etcd (leader %s; actives %s)"
                     % (index, targets[0], leader, before))
        else:
            self.net.isolate(targets[0], step["gap"])
            self.log("partition %d: isolate %s%s from the other nodes and etcd (leader %s; "
                     "actives %s)" % (index, targets[0], {"leader": " (the leader)", "active": (
                         " (most actives)")}.get(kind, ""), leader, before))
        self.partitions.append(p)
        self.sleep(step["hold"])
        p["heal"] = self.now()
        self.net.heal_all()
        window = [s for s in self.samples if p["start"] <= s["t"] <= p["heal"]]
        if kind != "pair":
            t = targets[0]
            p["target_actives"] = before.get(t, 0)
            gone = [s for s in window if s.get("actives") and s["actives"].get(t, 0) == 0]
            p["failover_after"] = (round(gone[0]["t"] - p["start"], 2)
                                   if gone and before.get(t, 0) > 0 else None)
            p["lease_lost_after"] = next((round(s["t"] - p["start"], 2) for s in window
                                          if s["alive"] and not s["alive"].get(t, False)), None)
            # Writes the cut-off node acknowledged although they started after
            # etcd had let its lease expire (and another node took over).
            lost = p["lease_lost_after"]
            p["acked_after_lease_lost"] = 0 if lost is None else sum(
                1 for r in self.records[first_record:]
                if r["type"] == "write" and r["outcome"] == "ok"
                and r["node"] == self.node_address(t) and r["start"] > p["start"] + lost)
        new_leaders = [s for s in window if s["leader"] not in (None, leader)]
        p["new_leader_after"] = (round(new_leaders[0]["t"] - p["start"], 2)
                                 if new_leaders else None)
        p["leader_after"] = window[-1]["leader"] if window else None
        p["vbuckets_moved"] = sum(s["moved"] for s in window)
        if kind == "pair":
            self.log("partition %d healed after %.1f s: new leader after %s s, %d vBucket "
                     "active moves" % (index, p["heal"] - p["start"], p["new_leader_after"],
                                       p["vbuckets_moved"]))
        else:
            self.log("partition %d healed after %.1f s: lease lost after %s s, failover (no "
                     "active left on it) after %s s, new leader after %s s, %d vBucket active "
                     "moves, %s writes acknowledged by %s after its lease was lost"
                     % (index, p["heal"] - p["start"], p.get("lease_lost_after"),
                        p.get("failover_after") if p.get("target_actives") else "(none active)",
                        p["new_leader_after"], p["vbuckets_moved"],
                        p.get("acked_after_lease_lost"), targets[0]))
        took = self.wait_settled(self.args.settle_deadline)
        p["settled_after"] = round(took, 2) if took is not None else None
        if took is None:
            self.problems.append(("settle", "partition %d (%s %s): the cluster did not settle "
                                            "within %.0f s of the heal" % (
                                                index, kind, "/".join(targets),
                                                self.args.settle_deadline)))
            self.log("partition %d: NOT settled %.0f s after the heal; status %s"
                     % (index, self.args.settle_deadline, json.dumps(self.statuses())))
        else:
            self.log("partition %d: settled %.1f s after the heal (actives %s)"
                     % (index, took, (self.latest() or {}).get("actives")))

    def sleep(self, seconds):
        if self.stopping.wait(seconds):
            raise KeyboardInterrupt()

    # -- the run ----------------------------------------------------------

    def run(self, schedule):
        a = self.args
        data = tempfile.mkdtemp(prefix="kvexec-partition-")
        try:
            with testhosts.TestNetwork(["etcd"] + NODES, log=self.log) as net:
                self.net = net
                self.log("test hosts on %s.0/24 (namespaces %s-*, client link %s-c at %s)"
                         % (net.subnet, net.prefix, net.prefix, net.client_address))
                self.start_cluster(data)
                addresses = [self.node_address(n) for n in NODES]
                for b in self.buckets:
                    self.cmaps[b] = kvclient.ClusterMap(addresses, bucket=b)
                    self.fresh_maps[b] = kvclient.ClusterMap(addresses, bucket=b)
                self.cmap = self.cmaps[self.buckets[0]]
                self.fresh_map = self.fresh_maps[self.buckets[0]]
                self.initialize_keys()
                self.log("%d keys initialized in %s (map rev %d)"
                         % (a.keys, ", ".join(self.buckets), self.cmap.rev))
                threads = [threading.Thread(target=self.monitor, daemon=True)]
                threads += [threading.Thread(target=self.worker, args=(i,), daemon=True)
                            for i in range(a.workers)]
                for t in threads:
                    t.start()
                # With --partitions every step runs; else none starts after --seconds.
                deadline = self.now() + a.seconds if a.partitions is None else None
                try:
                    for index, step in enumerate(schedule):
                        if deadline is not None and self.now() > deadline:
                            self.log("planned time used: %d of %d planned partitions made"
                                     % (index, len(schedule)))
                            break
                        self.sleep(step["steady"])
                        self.partition(step, index)
                        self.check_nodes_running()
                    self.sleep(a.tail)
                finally:
                    net.heal_all()
                    self.stopping.set()
                    for t in threads:
                        t.join(a.retry_budget + a.durability_timeout_ms / 1000 + 10)
                    self.stopping.clear()
                self.log("workers stopped; %d records" % len(self.records))
                took = self.wait_settled(a.settle_deadline)
                self.final_settled = took
                if took is None:
                    self.problems.append(("settle", "the cluster did not settle within %.0f s "
                                              "of the last heal" % a.settle_deadline))
                    self.log("NOT settled after the last heal: %s"
                             % json.dumps(self.statuses()))
                self.final_status = self.status()
                self.finals, self.replica_mismatches = self.final_reads()
                self.node_stats = self.collect_node_stats()
                self.stop_cluster()
        finally:
            self.net = None
            shutil.rmtree(data, ignore_errors=True)

    def collect_node_stats(self):
        """What each node did besides answering: its compactions and its
        replication links (kvexec's stats groups file_cache and replication)."""
        out = {}
        for name in NODES:
            try:
                conn = kvclient.Connection(self.node_address(name), 2.0)
                try:
                    stats = conn.stats("file_cache", 5.0)
                    stats.update(conn.stats("replication", 5.0))
                finally:
                    conn.close()
            except (OSError, kvclient.ProtocolError) as error:
                stats = {"error": str(error)}
            out[name] = {k: stats.get(k) for k in (
                "compactions", "auto_compactions", "compaction_bytes_reclaimed",
                "replication_tls", "replication_connections", "replication_breaks", "error")
                if k in stats}
        return out

    def final_reads(self):
        """Each key from its active (retried for up to 10 s), then from
        each replica the map names (retried until it agrees, 10 s)."""
        for cmap in self.cmaps.values():
            cmap.refresh()
        clients = self.clients(self.cmaps, retry_budget=10.0)
        finals, mismatches = {}, []
        try:
            for key in self.keys():
                bucket, doc = self.split_key(key)
                client, cmap = clients[bucket], self.cmaps[bucket]
                until = time.monotonic() + 10
                while True:
                    r = client.get(doc.encode())
                    if r.outcome == kvclient.OK or time.monotonic() > until:
                        break
                    time.sleep(0.2)
                if r.outcome != kvclient.OK:
                    self.problems.append(("final-read", "final read of %s failed: %s from %s"
                                          % (key, r.status, r.node)))
                    continue
                final_id = json.loads(r.value)["id"]
                finals[key] = {"id": final_id, "cas": r.cas, "node": r.node}
                for replica in cmap.replicas(doc.encode()):
                    until = time.monotonic() + 10
                    while True:
                        rr = client.get_replica(doc.encode(), replica)
                        got = (json.loads(rr.value)["id"], rr.cas) if rr.outcome == "ok" \
                            else (rr.status, 0)
                        if got == (final_id, r.cas) or time.monotonic() > until:
                            break
                        time.sleep(0.2)
                    if got != (final_id, r.cas):
                        mismatches.append("%s: active %s has %s cas %d, replica %s has %s cas %d"
                                          % (key, r.node, final_id, r.cas, replica, got[0],
                                             got[1]))
        finally:
            self.close_clients(clients)
        return finals, mismatches

    def stop_cluster(self):
        """SIGTERM to every node at once (they leave the cluster), then
        etcd; a node that does not exit 0 is a problem."""
        self.stop_codes = {}
        for name, proc in self.node_procs.items():
            if proc.poll() is None:
                proc.terminate()
        for name, proc in self.node_procs.items():
            rc = self.net.stop(proc, 60, ask=False)
            self.stop_codes[name] = rc
            if rc != 0 and name not in self.exited:
                self.problems.append(("stop", "node %s exited with %s after SIGTERM"
                                      % (name, rc)))
        self.net.stop(self.etcd, 30)

    # -- results ----------------------------------------------------------

    def summary(self, schedule):
        a = self.args
        writes = [r for r in self.records if r["type"] == "write" and r["worker"] >= 0]
        reads = [r for r in self.records if r["type"] == "read"]
        outcomes = Counter(w["outcome"] for w in writes)
        statuses = Counter("%s %s" % (w["outcome"], w["status"]) for w in writes
                           if w["outcome"] != "ok")
        checks = partition_check.check_history(
            self.records, getattr(self, "finals", {}), self.keys(), len(self.partitions),
            sum(1 for p in self.partitions if "heal" in p), a.min_acked)
        liveness = partition_check.Check(
            "nodes-up-and-settled", "every node ran to the end, the cluster settled after "
            "the last heal, every node stopped cleanly")
        for what, problem in self.problems:
            if what != "final-read":  # a missing final value fails not-vacuous
                liveness.fail(problem)
        checks.append(liveness)
        failovers = [p for p in self.partitions if p.get("failover_after") is not None]
        stale, stale_nodes, (stalest, stalest_read) = partition_check.stale_reads(self.records)
        return {
            "seed": a.seed, "seconds": a.seconds, "tls": bool(a.tls), "schedule": schedule,
            "node_stats": getattr(self, "node_stats", {}),
            "partitions": self.partitions,
            "partitions_by_kind": dict(Counter(p["kind"] for p in self.partitions)),
            "failovers_observed": len(failovers),
            "leader_changes": sum(1 for x, y in zip(self.samples, self.samples[1:])
                                  if x["leader"] != y["leader"] and y["leader"]),
            "vbucket_active_moves": sum(s["moved"] for s in self.samples),
            "writes": {"acknowledged": outcomes.get("ok", 0),
                       "ambiguous": outcomes.get("ambiguous", 0),
                       "failed": outcomes.get("failed", 0)},
            "not_acknowledged_by_status": dict(statuses),
            "reads": len(reads), "reads_failed": sum(1 for r in reads if r["id"] is None),
            "stale_reads": {"count": stale, "by_node": stale_nodes,
                            "stalest_seconds": round(stalest, 3), "stalest": stalest_read},
            "buckets": self.buckets,
            "map_updates_seen_by_clients": sum(m.updates for m in self.cmaps.values()),
            "replica_mismatches": getattr(self, "replica_mismatches", []),
            "problems": [text for _, text in self.problems],
            "stop_codes": getattr(self, "stop_codes", {}),
            "final_status": getattr(self, "final_status", None),
            "checks": [{"name": c.name, "description": c.description, "passed": c.passed,
                        "violations": c.violations, "details": c.details} for c in checks],
            "finals": getattr(self, "finals", {}),
        }


def log_tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def render(summary, max_violations=10):
    def cell(value):
        return "-" if value is None else str(value)

    lines = ["partition-soak seed %d%s: %d partitions (%s), %d healed"
             % (summary["seed"], ", replication and etcd over TLS" if summary.get("tls") else "",
                len(summary["partitions"]),
                ", ".join("%s %d" % kv for kv in sorted(summary["partitions_by_kind"].items())),
                sum(1 for p in summary["partitions"] if "heal" in p)),
             "  (at: the cut, seconds into the run (the history's clock); actives: the "
             "target's before the cut; lease, failover, leader: seconds from the cut until its "
             "lease was gone from etcd, no vBucket was active on it any more, another node "
             "led; settled: seconds from the heal; late ok: writes the target acknowledged "
             "that it was sent after its lease was gone)",
             "  %-3s %7s %-6s %-6s %5s %7s %6s %8s %6s %7s %7s" % (
                 "#", "at", "kind", "target", "held", "actives", "lease", "failover", "leader",
                 "settled", "late ok")]
    for p in summary["partitions"]:
        failover = p.get("failover_after")
        if p["kind"] == "pair":
            failover = "n/a"
        elif not p.get("target_actives"):
            failover = "none"
        lines.append("  %-3d %7.1f %-6s %-6s %5.1f %7s %6s %8s %6s %7s %7s" % (
            p["index"], p["start"], p["kind"], "/".join(p["targets"]), p["hold"],
            cell(p.get("target_actives")), cell(p.get("lease_lost_after")), cell(failover),
            cell(p.get("new_leader_after")), cell(p.get("settled_after")),
            cell(p.get("acked_after_lease_lost"))))
    w = summary["writes"]
    lines.append("writes: %d acknowledged, %d ambiguous, %d failed; reads %d (%d failed); "
                 "failovers observed %d, leader changes %d, vBucket active moves %d, client "
                 "map updates %d" % (w["acknowledged"], w["ambiguous"], w["failed"],
                                     summary["reads"], summary["reads_failed"],
                                     summary["failovers_observed"], summary["leader_changes"],
                                     summary["vbucket_active_moves"],
                                     summary["map_updates_seen_by_clients"]))
    nodes = summary.get("node_stats", {})
    if nodes:
        lines.append("nodes at the end: " + "; ".join(
            "%s %s compactions (%s automatic, %s bytes back), replication tls %s, %s "
            "connections, %s breaks" % (name, n.get("compactions", "?"),
                                        n.get("auto_compactions", "?"),
                                        n.get("compaction_bytes_reclaimed", "?"),
                                        n.get("replication_tls", "?"),
                                        n.get("replication_connections", "?"),
                                        n.get("replication_breaks", "?"))
            for name, n in sorted(nodes.items())))
    stale = summary["stale_reads"]
    if stale["count"]:
        r = stale["stalest"]
        lines.append("stale reads (a value read after an acknowledged write had replaced it; not "
                     "a check): %d, by node %s; the stalest %.3f s behind: %s from %s at t=%.3f"
                     % (stale["count"], ", ".join("%s %d" % kv for kv in sorted(
                         stale["by_node"].items())), stale["stalest_seconds"], r["key"],
                        r["node"], r["start"]))
    if summary["not_acknowledged_by_status"]:
        lines.append("not acknowledged: " + ", ".join(
            "%s %d" % kv for kv in sorted(summary["not_acknowledged_by_status"].items())))
    for m in summary["replica_mismatches"]:
        lines.append("replica disagrees after settling: " + m)
    for problem in summary["problems"]:
        lines.append("problem: " + problem)
    lines.append("checks:")
    for c in summary["checks"]:
        lines.append("  %-26s %s  (%s)" % (c["name"], "pass" if c["passed"] else
                                           "FAIL (%d)" % len(c["violations"]), c["description"]))
        for v in c["violations"][:max_violations]:
            lines.append("      " + v)
        if len(c["violations"]) > max_violations:
            lines.append("      ... %d more in summary.json" % (len(c["violations"])
                                                              - max_violations))
    return "\n".join(lines)
