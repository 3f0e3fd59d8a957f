"""A small Couchbase binary-protocol client for tests that need to know
exactly what happened to each request: GET, and SET with a CAS and a
durability requirement, routed by the cluster's vBucket map.

  cmap = ClusterMap(["10.213.7.10:11210", ...])
  client = Client(cmap)                     # one per thread
  r = client.get(b"key")                    # Result
  r = client.set(b"key", b"value", cas=r.cas, durability=MAJORITY)
  r.outcome  # OK | FAILED (had no effect) | AMBIGUOUS (may have)

Outcomes. A reply with a status that the server gives before it changes
anything (KEY_EEXISTS, KEY_ENOENT, NOT_MY_VBUCKET, ETMPFAIL,
DURABILITY_IMPOSSIBLE, SYNC_WRITE_IN_PROGRESS, ...) is FAILED. A timeout,
a lost connection, SYNC_WRITE_AMBIGUOUS or any status not known to be
harmless is AMBIGUOUS: the write may or may not take effect, now or later.
A request is retried (on the refreshed map) only after NOT_MY_VBUCKET,
ETMPFAIL or EBUSY, which leave nothing behind, never after an ambiguous
outcome.

Routing. The map is GET_CLUSTER_CONFIG's vBucketServerMap; a key's vBucket
is (crc32(key) >> 16) & 0x7fff modulo the vBucket count (Couchbase's CRC
hashing). A NOT_MY_VBUCKET reply carries the answering node's config,
taken if its rev is newer; if that leaves the request on the node that
refused it, the map is asked of every node and the newest taken.

Wire: requests with a durability requirement use the alternative request
magic (0x08) with a 3-byte durability frame info (level, timeout in ms).
Each connection sends HELLO (XERROR, ALT_REQUEST, SYNC_REPLICATION) so the
node checks the vBucket id it is sent, then SELECT_BUCKET when the map was
made for a bucket (ClusterMap(..., bucket=NAME); default: the node's first
bucket). No authentication (the test's servers have no users).

ClusterMap is shared and thread-safe (one lock); a Client and its
connections belong to one thread.
"""

import json
import socket
import struct
import threading
import time
import zlib

OK, FAILED, AMBIGUOUS = "ok", "failed", "ambiguous"

OP_GET, OP_SET, OP_HELLO, OP_GET_REPLICA, OP_GET_CLUSTER_CONFIG = 0x00, 0x01, 0x1f, 0x83, 0xb5
OP_STAT, OP_SELECT_BUCKET = 0x10, 0x89

STATUS_NAMES = {
    0x00: "SUCCESS", 0x01: "KEY_ENOENT", 0x02: "KEY_EEXISTS", 0x03: "E2BIG", 0x04: "EINVAL",
    0x05: "NOT_STORED", 0x07: "NOT_MY_VBUCKET", 0x08: "NO_BUCKET", 0x20: "AUTH_ERROR",
    0x24: "EACCESS", 0x81: "UNKNOWN_COMMAND", 0x82: "ENOMEM", 0x83: "NOT_SUPPORTED",
    0x84: "EINTERNAL", 0x85: "EBUSY", 0x86: "ETMPFAIL", 0x88: "UNKNOWN_COLLECTION",
    0xa0: "DURABILITY_INVALID_LEVEL", 0xa1: "DURABILITY_IMPOSSIBLE",
    0xa2: "SYNC_WRITE_IN_PROGRESS", 0xa3: "SYNC_WRITE_AMBIGUOUS",
    0xa4: "SYNC_WRITE_RE_COMMIT_IN_PROGRESS",
}
NOT_MY_VBUCKET, KEY_ENOENT = 0x07, 0x01
# Refused before anything changed: the write did not happen.
NO_EFFECT = {0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x08, 0x20, 0x24, 0x81, 0x83, 0x85, 0x86, 0x88,
             0xa0, 0xa1, 0xa2, 0xa4}
# NOT_MY_VBUCKET, EBUSY, ETMPFAIL, SYNC_WRITE_RE_COMMIT_IN_PROGRESS
RETRY = {0x07, 0x85, 0x86, 0xa4}

MAJORITY, MAJORITY_AND_PERSIST_TO_ACTIVE, PERSIST_TO_MAJORITY = 1, 2, 3

FEATURE_XERROR, FEATURE_ALT_REQUEST, FEATURE_SYNC_REPLICATION = 0x07, 0x10, 0x11


def vbucket_of(key, count):
    return ((zlib.crc32(key) >> 16) & 0x7fff) % count


def status_name(status):
    return STATUS_NAMES.get(status, "0x%02x" % status)


class ProtocolError(Exception):
    pass


class Result:
    """What one request came to. outcome: OK, FAILED or AMBIGUOUS;
    status: the last reply's status name, or "timeout" / "connection: ...";
    node: the "host:port" that gave the final answer (or was being asked);
    value and cas: a GET's, or a SET's new CAS; attempts: requests sent."""

    __slots__ = ("outcome", "status", "node", "value", "cas", "attempts", "refreshes")

    def __init__(self, outcome, status, node, value=None, cas=0, attempts=1, refreshes=0):
        self.outcome, self.status, self.node = outcome, status, node
        self.value, self.cas, self.attempts, self.refreshes = value, cas, attempts, refreshes

    def __repr__(self):
        return "Result(%s, %s, %s, cas=%d)" % (self.outcome, self.status, self.node, self.cas)


# -- the wire ------------------------------------------------------------


def encode_request(opcode, key=b"", extras=b"", value=b"", vbucket=0, cas=0, opaque=0,
                   durability=None):
    """One request; `durability` (level, timeout_ms) adds the frame info."""
    if durability is None:
        header = struct.pack(">BBHBBHIIQ", 0x80, opcode, len(key), len(extras), 0, vbucket,
                             len(extras) + len(key) + len(value), opaque, cas)
        return header + extras + key + value
    level, timeout_ms = durability
    frame = bytes([(0x01 << 4) | 3, level]) + struct.pack(">H", timeout_ms)
    header = struct.pack(">BBBBBBHIIQ", 0x08, opcode, len(frame), len(key), len(extras), 0,
                         vbucket, len(frame) + len(extras) + len(key) + len(value), opaque, cas)
    return header + frame + extras + key + value


def decode_header(header):
    """(opcode, status, framing_len, key_len, extras_len, body_len, opaque, cas)"""
    magic = header[0]
    if magic == 0x81:
        _, opcode, key_len, extras_len, _, status, body_len, opaque, cas = struct.unpack(
            ">BBHBBHIIQ", header)
        framing_len = 0
    elif magic == 0x18:
        _, opcode, framing_len, key_len, extras_len, _, status, body_len, opaque, cas = \
            struct.unpack(">BBBBBBHIIQ", header)
    else:
        raise ProtocolError("bad response magic 0x%02x" % magic)
    return opcode, status, framing_len, key_len, extras_len, body_len, opaque, cas


class Connection:
    """One socket to one node, HELLO sent (and SELECT_BUCKET, given a
    bucket). Any error closes it."""

    def __init__(self, address, connect_timeout, bucket=None):
        host, port = address.rsplit(":", 1)
        self.address = address
        self.sock = socket.create_connection((host, int(port)), timeout=connect_timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.opaque = 0
        features = struct.pack(">HHH", FEATURE_XERROR, FEATURE_ALT_REQUEST,
                               FEATURE_SYNC_REPLICATION)
        status, _, _, _ = self.call(OP_HELLO, key=b"kvexec-partition", value=features,
                                    timeout=connect_timeout)
        if status != 0:
            raise ProtocolError("HELLO: %s" % status_name(status))
        if bucket is not None:
            status, _, _, _ = self.call(OP_SELECT_BUCKET, key=bucket.encode(),
                                        timeout=connect_timeout)
            if status != 0:
                raise ProtocolError("SELECT_BUCKET %s: %s" % (bucket, status_name(status)))

    def _read(self, count):
        chunks = []
        while count:
            chunk = self.sock.recv(count)
            if not chunk:
                raise ConnectionError("closed by the peer")
            chunks.append(chunk)
            count -= len(chunk)
        return b"".join(chunks)

    def call(self, opcode, timeout, **fields):
        """Sends one request, returns (status, extras, value, cas)."""
        self.opaque += 1
        self.sock.settimeout(timeout)
        self.sock.sendall(encode_request(opcode, opaque=self.opaque, **fields))
        while True:
            op, status, framing_len, key_len, extras_len, body_len, opaque, cas = \
                decode_header(self._read(24))
            body = self._read(body_len)
            if opaque != self.opaque or op != opcode:
                continue  # a late reply to an earlier request cannot happen here, but skip it
            extras = body[framing_len:framing_len + extras_len]
            value = body[framing_len + extras_len + key_len:]
            return status, extras, value, cas

    def stats(self, group, timeout):
        """One STAT group as {name: value}: responses until the empty key."""
        self.opaque += 1
        self.sock.settimeout(timeout)
        self.sock.sendall(encode_request(OP_STAT, key=group.encode(), opaque=self.opaque))
        out = {}
        while True:
            _, status, framing_len, key_len, extras_len, body_len, _, _ = \
                decode_header(self._read(24))
            body = self._read(body_len)
            key = body[framing_len + extras_len:framing_len + extras_len + key_len]
            if status != 0 or not key:
                return out
            out[key.decode()] = body[framing_len + extras_len + key_len:].decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# -- the map -------------------------------------------------------------


class ClusterMap:
    """The newest vBucket map seen of one bucket (None: each node's first);
    shared by every Client (thread-safe)."""

    def __init__(self, bootstrap, connect_timeout=1.0, bucket=None):
        self.bootstrap = list(bootstrap)
        self.bucket = bucket
        self.connect_timeout = connect_timeout
        self.lock = threading.Lock()
        self.rev = -1
        self.servers = []
        self.vbmap = []
        self.updates = 0  # maps taken after the first
        if not self.refresh():
            raise RuntimeError("no node answered GET_CLUSTER_CONFIG: %s"
                               % ", ".join(self.bootstrap))

    def offer(self, config_bytes):
        """Takes a config (JSON bytes) if it is newer; True if taken."""
        try:
            config = json.loads(config_bytes)
            rev = int(config["rev"])
            smap = config["vBucketServerMap"]
            servers, vbmap = list(smap["serverList"]), [list(c) for c in smap["vBucketMap"]]
        except (ValueError, KeyError, TypeError):
            return False
        with self.lock:
            if rev <= self.rev or not vbmap:
                return False
            if self.rev >= 0:
                self.updates += 1
            self.rev, self.servers, self.vbmap = rev, servers, vbmap
            for server in servers:
                if server not in self.bootstrap:
                    self.bootstrap.append(server)
            return True

    def refresh(self):
        """Asks every known node for its config; True if any answered."""
        answered = False
        for address in list(self.bootstrap):
            try:
                conn = Connection(address, self.connect_timeout, self.bucket)
                try:
                    status, _, value, _ = conn.call(OP_GET_CLUSTER_CONFIG, timeout=1.0)
                finally:
                    conn.close()
            except (OSError, ProtocolError):
                continue
            if status == 0:
                answered = True
                self.offer(value)
        return answered

    def route(self, key):
        """(vbucket, active "host:port" or None, map rev)"""
        with self.lock:
            vb = vbucket_of(key, len(self.vbmap))
            chain = self.vbmap[vb]
            active = self.servers[chain[0]] if chain and chain[0] >= 0 else None
            return vb, active, self.rev

    def replicas(self, key):
        with self.lock:
            chain = self.vbmap[vbucket_of(key, len(self.vbmap))]
            return [self.servers[i] for i in chain[1:] if i >= 0]

    def snapshot(self):
        with self.lock:
            return self.rev, list(self.servers), [list(c) for c in self.vbmap]


# -- the client ----------------------------------------------------------


class Client:
    """Requests from one thread, each routed to its key's active."""

    def __init__(self, cmap, read_timeout=2.0, connect_timeout=1.0, retry_budget=20.0):
        self.cmap = cmap
        self.read_timeout = read_timeout
        self.connect_timeout = connect_timeout
        self.retry_budget = retry_budget
        self.connections = {}

    def close(self):
        for conn in self.connections.values():
            conn.close()
        self.connections = {}

    def _connection(self, address):
        conn = self.connections.get(address)
        if conn is None:
            conn = Connection(address, self.connect_timeout, self.cmap.bucket)
            self.connections[address] = conn
        return conn

    def _drop(self, address):
        conn = self.connections.pop(address, None)
        if conn is not None:
            conn.close()

    def _request(self, key, opcode, timeout, is_write, target=None, **fields):
        """Sends until an answer that is not in RETRY (NOT_MY_VBUCKET, ETMPFAIL, ...),
        or the retry budget runs out. A read that times out is FAILED (it
        changed nothing); a write's is AMBIGUOUS. `target`: a function of
        the key giving the address to ask (default: the active)."""
        deadline = time.monotonic() + self.retry_budget
        attempts = refreshes = 0
        address = None
        while True:
            vb, active, rev = self.cmap.route(key)
            address = target(key) if target else active
            if address is None:
                status = "no node for vBucket %d" % vb
            else:
                attempts += 1
                try:
                    conn = self._connection(address)
                except (OSError, ProtocolError) as error:
                    # Nothing was sent: a refused or unreachable node changes nothing.
                    self._drop(address)
                    status = "connect: %s" % (error.__class__.__name__,)
                else:
                    try:
                        status_code, extras, value, cas = conn.call(
                            opcode, timeout, key=key, vbucket=vb, **fields)
                    except socket.timeout:
                        self._drop(address)
                        return Result(AMBIGUOUS if is_write else FAILED, "timeout", address,
                                      attempts=attempts, refreshes=refreshes)
                    except (OSError, ProtocolError) as error:
                        self._drop(address)
                        return Result(AMBIGUOUS if is_write else FAILED,
                                      "connection: %s" % error.__class__.__name__, address,
                                      attempts=attempts, refreshes=refreshes)
                    if status_code == 0:
                        return Result(OK, "SUCCESS", address, value=value, cas=cas,
                                      attempts=attempts, refreshes=refreshes)
                    status = status_name(status_code)
                    if status_code not in RETRY:
                        outcome = FAILED if (status_code in NO_EFFECT or not is_write) \
                            else AMBIGUOUS
                        return Result(outcome, status, address, attempts=attempts,
                                      refreshes=refreshes)
                    if status_code == NOT_MY_VBUCKET and value:
                        self.cmap.offer(value)
            if time.monotonic() >= deadline:
                return Result(FAILED, status, address, attempts=attempts, refreshes=refreshes)
            if self.cmap.route(key)[1] == address or address is None:
                time.sleep(0.1)
                self.cmap.refresh()
            refreshes += 1

    def get(self, key):
        return self._request(key, OP_GET, self.read_timeout, is_write=False)

    def get_replica(self, key, address):
        return self._request(key, OP_GET_REPLICA, self.read_timeout, is_write=False,
                             target=lambda _: address)

    def set(self, key, value, cas=0, durability=MAJORITY, durability_timeout_ms=2000,
            flags=0, expiry=0):
        """SET (with `cas` != 0: only over that CAS). The reply waits for
        the durability timeout at most, plus a few seconds' margin."""
        extras = struct.pack(">II", flags, expiry)
        level = (durability, durability_timeout_ms) if durability else None
        return self._request(key, OP_SET, durability_timeout_ms / 1000.0 + 3.0, is_write=True,
                             extras=extras, value=value, cas=cas, durability=level)
