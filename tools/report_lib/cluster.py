"""A kvexec cluster for the report's tools (tools/replication-bench,
tools/persist-latency, tools/rebalance-bench): tools/cluster-run in the
background, its own etcd and nodes on free loopback ports, stopped by its
PID (SIGTERM: it stops the nodes, then etcd); nodes added later are
started and stopped by this class, by PID; nothing is looked up by name."""

import json
import os
import shutil
import subprocess
import time

from report_lib.servers import Server, cpu_seconds

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Cluster:
    """tools/cluster-run --nodes N --replicas R in the background, until
    stop(). Its log is DIRECTORY/cluster-run.log; the nodes' data and logs
    are under DIRECTORY/cluster. ports and pids: the nodes', n0 first;
    etcd: etcd's URL; added: the nodes add_node() started."""

    def __init__(self, directory, nodes, replicas, server, cluster_tool, server_flags=(),
                 credentials=None, deadline=120.0):
        self.cluster_tool = cluster_tool
        self.data = os.path.join(directory, "cluster")
        self.log_path = os.path.join(directory, "cluster-run.log")
        os.makedirs(directory, exist_ok=True)
        self.log = open(self.log_path, "w")
        argv = [os.path.join(REPO, "tools", "cluster-run"), "--nodes", str(nodes),
                "--replicas", str(replicas), "--dir", self.data, "--server", server,
                "--cluster-tool", cluster_tool]
        if credentials:
            argv += ["--user", credentials[0], "--password", credentials[1]]
        self.proc = subprocess.Popen(argv + ["--"] + list(server_flags), stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.ports, self.pids, self.etcd = [], [], None
        self.added = []
        until = time.monotonic() + deadline
        while time.monotonic() < until and self.proc.poll() is None:
            with open(self.log_path) as f:
                text = f.read()
            if "cluster-run: etcd " in text:  # its last ready line
                for line in text.splitlines():
                    if line.startswith("cluster-run: node "):
                        fields = line.split()  # cluster-run: node n0 port P pid PID
                        self.ports.append(int(fields[4]))
                        self.pids.append(int(fields[6]))
                    if line.startswith("cluster-run: etcd "):
                        self.etcd = line.split()[2]
                return
            time.sleep(0.1)
        self.stop()
        with open(self.log_path) as f:
            raise RuntimeError("cluster-run did not become ready:\n" + f.read())

    @property
    def port(self):
        """n0's port, to bootstrap from."""
        return self.ports[0]

    def status(self):
        """kvexec-cluster status --json, parsed; None if etcd did not answer."""
        result = subprocess.run([self.cluster_tool, "--etcd", self.etcd, "status", "--json"],
                                capture_output=True, text=True)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def lags(self):
        """Each node's replication lag in seqnos (a node's is None while
        unknown); None if etcd did not answer."""
        status = self.status()
        return [n.get("replicationLag") for n in status["nodes"]] if status else None

    def add_node(self, name):
        """Starts node `name` with n0's command line (DIRECTORY/cluster/n0.argv)
        but its own name and data directory, on a free port; it joins the
        cluster (the map gives it only empty replica slots until a
        rebalance). Returns its Server (port, cpu_seconds()); stop() stops
        it before the others."""
        with open(os.path.join(self.data, "n0.argv")) as f:
            argv = json.load(f)
        argv[argv.index("--node") + 1] = name
        argv[argv.index("--data-dir") + 1] = os.path.join(self.data, name)
        argv[argv.index("--port") + 1] = "0"
        node = Server(argv, os.path.join(self.data, name + ".log"),
                      ready_prefix="kvexec-server: ready on ")
        self.added.append(node)
        return node

    def wait_in_map(self, name, deadline=60.0):
        """Waits until the map names node `name` and it has applied the
        map's revision; returns the status then."""
        until = time.monotonic() + deadline
        while time.monotonic() < until:
            status = self.status()
            if status and any(n["name"] == name and n["alive"] and n["inMap"] and
                              n["appliedRevision"] == status["mapRevision"]
                              for n in status["nodes"]):
                return status
            time.sleep(0.1)
        raise RuntimeError("node %s is not in the map after %.0f s; status: %s"
                           % (name, deadline, json.dumps(self.status())))

    def cpu_seconds(self):
        """utime + stime of every node so far (added ones included)."""
        return (sum(cpu_seconds(pid) for pid in self.pids) +
                sum(node.cpu_seconds() for node in self.added if node.proc.poll() is None))

    def stop(self, deadline=150.0):
        """Stops the added nodes, then SIGTERM to cluster-run; returns
        cluster-run's exit code (0: every node it started stopped
        cleanly)."""
        for node in self.added:
            node.stop()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=deadline)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # its nodes get SIGTERM when it dies (PR_SET_PDEATHSIG)
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def remove_data(self):
        """The nodes' and etcd's data directories; their logs stay."""
        for entry in os.scandir(self.data):
            if entry.is_dir():
                shutil.rmtree(entry.path, ignore_errors=True)
