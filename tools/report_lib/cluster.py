"""A kvexec cluster for the report's tools (tools/replication-bench,
tools/persist-latency): tools/cluster-run in the background, its own etcd
and nodes on free loopback ports, stopped by its PID (SIGTERM: it stops the
nodes, then etcd); nothing is looked up by name."""

import json
import os
import shutil
import subprocess
import time

from report_lib.servers import cpu_seconds

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Cluster:
    """tools/cluster-run --nodes N --replicas R in the background, until
    stop(). Its log is DIRECTORY/cluster-run.log; the nodes' data and logs
    are under DIRECTORY/cluster. ports and pids: the nodes', n0 first;
    etcd: etcd's URL."""

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

    def cpu_seconds(self):
        """utime + stime of every node so far."""
        return sum(cpu_seconds(pid) for pid in self.pids)

    def stop(self, deadline=150.0):
        """SIGTERM to cluster-run; returns its exit code (0: every node
        stopped cleanly)."""
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
