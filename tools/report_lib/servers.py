"""Servers the report's tools start and stop: kvexec-server or memcached on
a free loopback port, output to a log, stopped by PID (SIGTERM, then SIGKILL
after a deadline); nothing is looked up by name."""

import os
import select
import signal
import socket
import subprocess
import threading
import time


class Server:
    """kvexec-server (or memcached) on a free loopback port, output to a log."""

    def __init__(self, argv, log_path, ready_prefix=None, port=None):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.port = port
        if ready_prefix:
            self.port = self._wait_ready(ready_prefix)
        else:
            self._wait_listening()

    def _wait_ready(self, prefix, deadline=60.0):
        """Reads the log until `prefix`...:PORT appears; returns PORT."""
        until = time.monotonic() + deadline
        while time.monotonic() < until:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if not ready:
                if self.proc.poll() is not None:
                    break
                continue
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.write(line)
            if line.startswith(prefix):
                threading.Thread(target=self._drain, daemon=True).start()
                return int(line.strip().rsplit(":", 1)[1])
        self.stop()
        raise RuntimeError("server did not become ready; log: %s" % self.log_path)

    def _wait_listening(self, deadline=30.0):
        """memcached prints nothing: wait until its port accepts."""
        threading.Thread(target=self._drain, daemon=True).start()
        until = time.monotonic() + deadline
        while time.monotonic() < until:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("memcached did not listen on %d" % self.port)

    def _drain(self):
        for line in self.proc.stdout:
            self.log.write(line)
            self.log.flush()  # readable while the server runs

    def cpu_seconds(self):
        """utime + stime of the server so far."""
        return cpu_seconds(self.proc.pid)

    def stop(self, deadline=60.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(deadline)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def cpu_seconds(pid):
    """utime + stime of process `pid` so far (from /proc)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_memcached(log_path, threads=2):
    port = free_port()
    argv = ["memcached", "-p", str(port), "-l", "127.0.0.1", "-t", str(threads), "-m", "1024",
            "-U", "0"]
    if os.geteuid() == 0:
        argv += ["-u", "nobody"]  # memcached refuses to run as root without -u
    return Server(argv, log_path, port=port)
