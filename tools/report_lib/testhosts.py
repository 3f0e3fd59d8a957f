"""Test hosts of the project's own: one network namespace per host on a
private /24, joined by a bridge, so that a test can cut the network between
chosen hosts without touching anyone else's.

  with TestNetwork(["etcd", "n0", "n1", "n2"]) as net:
      proc = net.spawn("n0", [...], log_path)     # runs inside n0's namespace
      net.address("n0")                           # "10.213.X.11"
      net.cut("n0", "n1"); net.heal_all()

Layout (iproute2 only; every name starts with the run's prefix, "kvpt"
and the PID in hex, so concurrent runs never meet and a dead run's
leftovers can be told apart from a live one's):

  <prefix>-hub      a namespace holding the bridge br0, nothing else
  <prefix>-<host>   one namespace per host: lo, and eth0 (a veth whose other
                    end is in the hub, on br0) with 10.213.X.<10 + i>/24
  <prefix>-c        a veth in the root namespace with 10.213.X.1/24, its
                    other end on br0: the test's client, in the root
                    namespace, reaches every host; nothing is ever cut
                    between it and a host.

The /24's third octet is chosen among those no route of the root namespace
covers yet. A cut between hosts A and B is a blackhole route to B's /32 in
A's namespace and to A's in B's (both directions, A's first, optionally a
gap between the two; packets vanish, as on a dead link, so TCP notices only
by its timeouts). close() (also on an
exception in the `with` block) stops every process spawned, then deletes
the namespaces (which takes their veths) and the client's link;
remove_stale() removes what a killed run left behind.

Needs root and `ip netns` (available() says why not). Not thread-safe: one
thread (the test's) drives the network; spawned processes are its own.
"""

import ctypes
import os
import random
import re
import signal
import subprocess
import time

PREFIX_RE = re.compile(r"^kvpt([0-9a-f]+)-")
STOP_DEADLINE = 30.0


def ip(*args, check=True):
    """Runs `ip ARGS...`; raises with ip's message if it fails and `check`."""
    result = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), result.stderr.strip()))
    return result


def available():
    """None if this process can make test hosts, else why not (a sentence)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and veth pairs)"
    try:
        result = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    except OSError as error:
        return "no iproute2 (`ip`): %s" % error
    if result.returncode != 0:
        return "`ip netns` is unavailable: %s" % result.stderr.strip()
    probe = "kvpt%x-probe" % os.getpid()
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return "cannot add a network namespace: %s" % made.stderr.strip()
    ip("netns", "del", probe, check=False)
    return None


def _die_with_parent():
    """In the child: SIGTERM when the test goes, however it goes."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(log=print):
    """Deletes the namespaces and root links of runs whose PID is gone
    (a run killed with SIGKILL cannot clean up). Returns how many."""
    removed = 0
    names = [line.split()[0] for line in ip("netns", "list").stdout.splitlines() if line]
    links = [line.split()[1].rstrip(":").split("@")[0]
             for line in ip("-o", "link", "show").stdout.splitlines()]
    for kind, what, found in (("netns", "namespace", names), ("link", "link", links)):
        for name in found:
            match = PREFIX_RE.match(name)
            if match and not _pid_alive(int(match.group(1), 16)):
                ip(kind, "del", name, check=False)
                log("removed stale %s %s" % (what, name))
                removed += 1
    return removed


def _free_subnet(rng):
    """A third octet for 10.213.X.0/24 that no route of the root namespace
    (and no address) covers."""
    used = ip("-4", "route", "show", "table", "all").stdout + ip("-4", "addr").stdout
    taken = set(int(m) for m in re.findall(r"10\.213\.(\d+)\.", used))
    free = [x for x in range(1, 255) if x not in taken]
    if not free:
        raise RuntimeError("no free /24 in 10.213.0.0/16")
    return rng.choice(free)


class TestNetwork:
    """Hosts `names` (each its own namespace and address) on one bridge,
    and the root namespace's client link; see the module's comment."""

    def __init__(self, names, log=print):
        self.log = log
        self.prefix = "kvpt%x" % os.getpid()
        self.names = list(names)
        self.processes = []  # (host, Popen), in spawn order
        self.cuts = set()  # frozenset({a, b})
        self._namespaces = []
        self._client_link = None
        self._setup()

    # -- set-up and tear-down -------------------------------------------

    def _setup(self):
        try:
            octet = _free_subnet(random.SystemRandom())
            self.subnet = "10.213.%d" % octet
            self.client_address = self.subnet + ".1"
            self._addresses = {name: "%s.%d" % (self.subnet, 10 + i)
                               for i, name in enumerate(self.names)}
            hub = self.namespace("hub")
            self._add_namespace(hub)
            ip("-n", hub, "link", "add", "br0", "type", "bridge")
            ip("-n", hub, "link", "set", "dev", "br0", "up")
            for i, name in enumerate(self.names):
                ns = self.namespace(name)
                self._add_namespace(ns)
                port = "p%d" % i
                ip("link", "add", "eth0", "netns", ns, "type", "veth",
                   "peer", "name", port, "netns", hub)
                ip("-n", hub, "link", "set", "dev", port, "master", "br0", "up")
                ip("-n", ns, "addr", "add", self._addresses[name] + "/24", "dev", "eth0")
                ip("-n", ns, "link", "set", "dev", "eth0", "up")
                ip("-n", ns, "link", "set", "dev", "lo", "up")
            self._client_link = self.prefix + "-c"
            ip("link", "add", self._client_link, "type", "veth", "peer", "name", "client",
               "netns", hub)
            ip("-n", hub, "link", "set", "dev", "client", "master", "br0", "up")
            ip("addr", "add", self.client_address + "/24", "dev", self._client_link)
            ip("link", "set", "dev", self._client_link, "up")
            self._wait_reachable()
        except BaseException:
            self.close()
            raise

    def _add_namespace(self, ns):
        ip("netns", "add", ns)
        self._namespaces.append(ns)

    def _wait_reachable(self, deadline=10.0):
        """Until every host's address answers ARP from the root (the bridge
        forwards once its ports are up; a TCP connect to a closed port is
        refused at once when it does)."""
        import socket
        until = time.monotonic() + deadline
        pending = list(self.names)
        while pending and time.monotonic() < until:
            name = pending[0]
            s = socket.socket()
            s.settimeout(0.5)
            try:
                s.connect((self._addresses[name], 9))
                pending.pop(0)
            except ConnectionRefusedError:
                pending.pop(0)
            except OSError:
                time.sleep(0.05)
            finally:
                s.close()
        if pending:
            raise RuntimeError("test hosts not reachable from the root namespace: %s"
                               % ", ".join(pending))

    def close(self):
        """Heals every cut (a node stops faster when it can reach etcd to
        leave), stops every spawned process (SIGTERM by PID, SIGKILL after
        a deadline), then deletes the namespaces and the client link.
        Idempotent; never raises."""
        self.heal_all()
        for _, proc in reversed(self.processes):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in reversed(self.processes):
            try:
                proc.wait(STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.processes = []
        for ns in reversed(self._namespaces):
            ip("netns", "del", ns, check=False)
        self._namespaces = []
        if self._client_link is not None:
            # Usually gone already: deleting the hub took its peer.
            ip("link", "del", self._client_link, check=False)
            self._client_link = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- hosts ----------------------------------------------------------

    def namespace(self, name):
        return "%s-%s" % (self.prefix, name)

    def address(self, name):
        return self._addresses[name]

    def spawn(self, host, argv, log_path):
        """Starts `argv` inside `host`'s namespace, output to log_path, in a
        session of its own (a terminal's Ctrl-C reaches the test only) and
        SIGTERMed if the test dies. `ip netns exec` execs argv in place, so
        the Popen's PID is argv's."""
        out = open(log_path, "w")
        try:
            proc = subprocess.Popen(["ip", "netns", "exec", self.namespace(host)] + list(argv),
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            out.close()
        self.processes.append((host, proc))
        return proc

    def stop(self, proc, deadline=STOP_DEADLINE, ask=True):
        """SIGTERM to one spawned process (unless not `ask`: it was asked
        already, and a second SIGTERM could cut its graceful stop short),
        SIGKILL after the deadline; returns its exit code."""
        if ask and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(deadline)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self.processes = [(h, p) for h, p in self.processes if p is not proc]
        return proc.returncode

    # -- partitions -----------------------------------------------------

    def _route(self, verb, host, peer):
        ip("-n", self.namespace(host), "route", verb, "blackhole",
           self._addresses[peer] + "/32", check=(verb == "add"))

    def cut(self, a, b, gap=0.0):
        """No packet between hosts a and b, either way, until healed: first
        none from a to b, then, `gap` seconds later, none from b to a."""
        self.cut_many(a, [b], gap)

    def cut_many(self, host, peers, gap=0.0):
        """Cuts `host` from each of `peers`: first every packet from host
        to them, then, `gap` seconds later, every packet from them to host
        (meanwhile, what host is sent still arrives and its answers do not
        leave)."""
        peers = [p for p in peers if p != host and frozenset((host, p)) not in self.cuts]
        for peer in peers:
            self._route("add", host, peer)
            self.cuts.add(frozenset((host, peer)))
        if gap > 0 and peers:
            time.sleep(gap)
        for peer in peers:
            self._route("add", peer, host)

    def heal(self, a, b):
        pair = frozenset((a, b))
        if pair not in self.cuts:
            return
        self._route("del", a, b)
        self._route("del", b, a)
        self.cuts.discard(pair)

    def isolate(self, host, gap=0.0):
        """Cuts `host` from every other host (the client still reaches it);
        `gap` as in cut_many."""
        self.cut_many(host, self.names, gap)

    def heal_all(self):
        for pair in list(self.cuts):
            a, b = sorted(pair)
            self.heal(a, b)
