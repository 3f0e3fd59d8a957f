"""The meta commands, gat and gats sent to memcached 1.6.18 and to
kvexec-server, step by step, on one connection each; the replies must be
the same bytes once the fields that cannot be the same are normalised
(see normalise()). Steps whose answer depends on state kvexec does not keep
are checked against kvexec's documented answer instead. Then the keys it
stored must be listed by stats cachedump, stats conns / settings / items /
slabs must answer.

Usage: meta_side_by_side.py MEMCACHED_PORT KVEXEC_PORT
Prints the keys stored under dump: (one a line) on success, for memcdump.
"""
import re
import socket
import sys
import time

DEADLINE_S = 10


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
        self.buffer = b""

    def exchange(self, request):
        """Sends request and then mn; returns every byte before the last MN.
        The mn marks the end whatever the request answers (or, with q, not);
        mn commands in the request itself answer MN too."""
        self.sock.sendall(request + b"mn\r\n")
        owed = sum(1 for line in request.split(b"\r\n") if line.startswith(b"mn")) + 1
        deadline = time.monotonic() + DEADLINE_S
        at = 0
        while True:
            end = self.buffer.find(b"MN\r\n", at)
            if end != -1 and (end == 0 or self.buffer[end - 2:end] == b"\r\n"):
                owed -= 1
                at = end + 4
                if owed == 0:
                    reply, self.buffer = self.buffer[:end], self.buffer[end + 4:]
                    return reply
                continue
            if time.monotonic() > deadline:
                raise TimeoutError("no MN after %r; got %r" % (request, self.buffer))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed after %r; got %r" % (request, self.buffer))
            self.buffer += chunk

    def lines(self, request, end=b"END\r\n"):
        """For commands that end with END (stats groups)."""
        self.sock.sendall(request)
        deadline = time.monotonic() + DEADLINE_S
        while not self.buffer.endswith(end):
            if time.monotonic() > deadline:
                raise TimeoutError("no END after %r; got %r" % (request, self.buffer))
            self.buffer += self.sock.recv(65536)
        reply, self.buffer = self.buffer, b""
        return reply.decode("latin1").split("\r\n")[:-2]


def normalise(reply):
    """CAS values differ by design: memcached counts from 1, kvexec uses a
    clock. Remaining TTLs are whole seconds measured against each server's
    clock, so one may tick between the store and the fetch: the TTLs the
    steps use are multiples of 100 and are compared to the nearest 100."""
    text = reply.decode("latin1")
    text = re.sub(r"(?<= )c\d+", "c<cas>", text)
    text = re.sub(r"^(VALUE \S+ \d+ \d+) \d+(?=\r$)", r"\1 <cas>", text, flags=re.M)
    text = re.sub(r"(?<= )t(\d+)", lambda m: "t~%d" % round(int(m.group(1)), -2), text)
    return text


K = "a" * 251
# (request, None) is compared with memcached; (request, expected) is
# checked against kvexec's own answer (memcached's depends on state kvexec
# does not keep, or on its internals). {cas} is the server's last c token.
STEPS = [
    # mg / ms basics: flag order, q, O, k, sizes, TTLs
    (b"ms mk 2 T0 F5 c k O123\r\nhi\r\n", None),
    (b"mg mk v f t s k c O1 q\r\n", None),
    (b"mg mk\r\nmg mk q\r\n", None),
    (b"mg nokey v k O9 q\r\n", None),
    (b"mg nokey v k O9\r\nmg nokey\r\n", None),
    (b"mg mk v u\r\n", None),
    (b"mg mk s T300 t\r\n", None),
    (b"mg mk t v\r\n", None),
    (b"mg mk T0 t\r\n", None),
    (b"ms ttl 3 T1000\r\nabc\r\nmg ttl t s f\r\n", None),
    # base64 keys
    (b"ms YmluAA== 2 b k c\r\nyo\r\n", None),
    (b"mg YmluAA== b k v\r\nmg bin v\r\n", None),
    (b"mg !!!! b k\r\nmg abc b k\r\nmg a=== b k\r\nmg YQ b\r\n", None),
    (b"mg YW=j b k\r\nmg YQ==YQ== b k\r\nmd Y25= b k\r\n", None),
    (b"ms !!!! 1 b\r\nx\r\nmd !!!! b\r\nma !!!! b\r\n", None),
    # ms modes and CAS
    (b"ms new 2 ME q\r\nab\r\nms new 2 ME q c k O1\r\nab\r\n", None),
    (b"ms nope 2 MR\r\nab\r\nms nope 2 MA\r\nab\r\nms nope 2 MP N0\r\nab\r\n", None),
    (b"ms new 2 MA s c\r\ncd\r\nms new 1 MP\r\nx\r\nmg new v s\r\n", None),
    (b"ms new 1 MR F7\r\nr\r\nmg new v f\r\nms new 1 MS\r\ns\r\nmg new v f\r\n", None),
    (b"ms new 2 C1 c k\r\nxx\r\nms none 2 C1 O2\r\nxx\r\nms none 2 C1 q\r\nxx\r\n", None),
    (b"mg new c\r\n", None),
    (b"ms new 2 C{cas} c\r\nzz\r\nmg new v\r\n", None),
    (b"mg new c\r\n", None),
    (b"ms new 2 MA C{cas}\r\n!!\r\nmg new v\r\nms new 2 ME C1\r\nxx\r\n", None),
    (b"ms new 2 I\r\nii\r\nmg new v\r\n", None),
    # ms errors: with and without the data block swallowed
    (b"ms\r\nms k\r\nms k x\r\nms k -1\r\nms " + K.encode() + b" 1\r\n", None),
    (b"ms k 2 Z\r\nab\r\nms k 2 MX\r\nab\r\nms k 2 MEE\r\nab\r\n", None),
    (b"ms k 2 F-1\r\nab\r\nms k 2 Fx\r\nab\r\nms k 2 T\r\nab\r\nms k 2 C-1\r\nab\r\n", None),
    (b"ms k 2 q q\r\nab\r\nms k 2 E5\r\nab\r\nms k 2 " + b"O" + b"9" * 32 + b"\r\nab\r\n", None),
    (b"ms k 2\r\nabc\r\n", None),
    (b"ms k 1 " + b" ".join(b"P%d" % i for i in range(16)) + b"\r\nx\r\n", None),
    (b"ms k 1 " + b" ".join(b"P%d" % i for i in range(17)) + b"\r\n", None),
    # md
    (b"ms del 1\r\nd\r\nmd del q\r\nmd del q\r\nmd del k O5\r\n", None),
    (b"ms del 1\r\nd\r\nmd del C1 k O3\r\nmd del T5\r\nmg del\r\n", None),
    (b"md\r\nmd del x\r\nmd del Cx\r\nmd " + K.encode() + b"\r\n", None),
    # ma
    (b"ma cnt\r\nma cnt q\r\nma cnt k O7\r\n", None),
    (b"ma cnt N0 J10 v t\r\nma cnt v D5\r\nma cnt v MD D100\r\n", None),
    (b"ma cnt MI q\r\nma cnt M+ v\r\nma cnt M- v\r\nma cnt v s\r\n", None),
    (b"ma cnt Mx\r\nma cnt DX\r\nma cnt Jx\r\nma cnt D-1\r\nma cnt M\r\n", None),
    (b"ma cnt C1 v\r\nma mk v\r\nma\r\n", None),
    (b"ma cnt T300 t v\r\nma cnt t\r\nma cnt T0 t\r\n", None),
    (b"ma viv2 N300 J5 q v t k\r\nma Y250 N50 v k O4 b\r\n", None),
    (b"ma cnt 18446744073709551615\r\nma big N0 J18446744073709551615 v\r\nma big v\r\n", None),
    # mg errors
    (b"mg\r\nmg k b b\r\nmg k v v\r\nmg k z\r\nmg k Nx\r\nmg k Tx Fx\r\n", None),
    (b"mg k " + b" ".join(b"P%d" % i for i in range(17)) + b"\r\n", None),
    (b"mg k " + b" ".join(b"P%d" % i for i in range(18)) + b"\r\n", None),
    (b"mg mk O" + b"1" * 31 + b" k\r\nmg mk O" + b"1" * 32 + b"\r\nmg " + K.encode() + b"\r\n", None),
    (b"mg mk E5\r\nmg mk S1\r\nmg mk x\r\n", None),
    # mn, me
    (b"mn extra\r\n", None),
    (b"me nokey\r\nme\r\nme k b\r\nme a b c\r\nme aaaa b\r\n", None),
    # vivify on miss: the creator wins, as in memcached
    (b"mg viv N300 s v t c\r\n", None),
    (b"mg viv2 N300 t\r\n", None),
    # gat / gats
    (b"ms g1 2 F7\r\nab\r\nms g2 1 F8\r\nc\r\n", None),
    (b"gat 100 g1 nokey g2\r\ngats 0 g1\r\n", None),
    (b"gat\r\ngat 10\r\ngat x g1\r\n", None),
    # alone: memcached drops the replies queued before a too-long key's error,
    # and touches the keys before it (kvexec checks them all first)
    (b"gat 10 nokey " + K.encode() + b"\r\n", None),
    (b"gats -1 g2\r\nget g2\r\nmg g1 t\r\ngat 1000 g1\r\nmg g1 t\r\n", None),
    # stats cachedump's argument checks
    (b"stats cachedump\r\nstats cachedump x 0\r\nstats cachedump 64 0\r\n", None),
    (b"stats cachedump 2 0\r\nstats cachedump 63 0\r\nstats cachedump 0 0\r\n", None),
    # kvexec refuses what needs state it does not keep
    (b"mg mk h\r\n", b"SERVER_ERROR mg flags h and l are not supported: kvexec keeps no access "
     b"history\r\n"),
    (b"mg mk l v\r\n", b"SERVER_ERROR mg flags h and l are not supported: kvexec keeps no access "
     b"history\r\n"),
    (b"mg mk R30\r\n", b"SERVER_ERROR stale items (flags I, R) are not supported\r\n"),
    (b"md mk I\r\n", b"SERVER_ERROR stale items (flags I, R) are not supported\r\n"),
    (b"ms mk 2 I C1\r\nab\r\n", b"SERVER_ERROR stale items (flags I, R) are not supported\r\n"),
    # the stub mg N made: memcached adds Z (a win was sent), kvexec cannot
    (b"mg viv s\r\n", b"HD s0\r\n"),
]


def run_steps(memcached, kvexec):
    cas = {id(memcached): b"0", id(kvexec): b"0"}
    failures = 0
    for number, (template, expected) in enumerate(STEPS):
        replies = []
        for client in (memcached, kvexec):
            request = template.replace(b"{cas}", cas[id(client)])
            reply = client.exchange(request)
            found = re.findall(rb"(?<= )c(\d+)", reply)
            if found:
                cas[id(client)] = found[-1]
            replies.append(reply)
        if expected is not None:
            ok = replies[1] == expected
            want = expected.decode("latin1")
        else:
            ok = normalise(replies[0]) == normalise(replies[1])
            want = normalise(replies[0])
        if not ok:
            failures += 1
            print("step %d %r:\n  memcached/expected: %r\n  kvexec:             %r"
                  % (number, template, want, normalise(replies[1])), file=sys.stderr)
    return failures


def check_kvexec_groups(kvexec):
    failures = 0
    dump_keys = ["dump:%d" % i for i in range(20)]
    for key in dump_keys:
        kvexec.exchange(b"ms %s 3 T1000\r\nval\r\n" % key.encode())
    listed = kvexec.lines(b"stats cachedump 1 0\r\n")
    items = {}
    for line in listed:
        m = re.fullmatch(r"ITEM (\S+) \[(\d+) b; (\d+) s\]", line)
        if not m:
            print("bad cachedump line %r" % line, file=sys.stderr)
            return 1, dump_keys
        items[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    for key in dump_keys:
        size, expiry = items.get(key, (None, None))
        if size != 3 or abs(expiry - (time.time() + 1000)) > 5:
            print("cachedump: %s listed as %r" % (key, items.get(key)), file=sys.stderr)
            failures += 1
    if len(kvexec.lines(b"stats cachedump 1 5\r\n")) != 5:
        print("cachedump ignored its limit", file=sys.stderr)
        failures += 1
    conns = kvexec.lines(b"stats conns\r\n")
    fields = {}
    for line in conns:
        m = re.fullmatch(r"STAT (\d+):(\w+) (.+)", line)
        if not m:
            print("bad stats conns line %r" % line, file=sys.stderr)
            return failures + 1, dump_keys
        fields.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    me = "tcp:127.0.0.1:%d" % kvexec.sock.getsockname()[1]
    mine = [f for f in fields.values() if f.get("addr") == me]
    if len(mine) != 1 or mine[0].get("state") != "conn_parse_cmd" or \
            not mine[0].get("secs_since_last_cmd", "").isdigit() or \
            not mine[0].get("listen_addr", "").startswith("tcp:127.0.0.1:"):
        print("stats conns does not show this connection: %r" % conns, file=sys.stderr)
        failures += 1
    settings = dict(line.split(" ")[1:3] for line in kvexec.lines(b"stats settings\r\n"))
    if settings.get("tcpport") != str(kvexec.sock.getpeername()[1]) or "maxbytes" not in settings:
        print("stats settings: %r" % settings, file=sys.stderr)
        failures += 1
    items_stats = dict(line.split(" ")[1:3] for line in kvexec.lines(b"stats items\r\n"))
    slabs = dict(line.split(" ")[1:3] for line in kvexec.lines(b"stats slabs\r\n"))
    if int(items_stats.get("items:1:number", 0)) < len(dump_keys) or \
            slabs.get("active_slabs") != "1":
        print("stats items / slabs: %r %r" % (items_stats, slabs), file=sys.stderr)
        failures += 1
    return failures, dump_keys


def main():
    memcached = Client(int(sys.argv[1]))
    kvexec = Client(int(sys.argv[2]))
    failures = run_steps(memcached, kvexec)
    print("side by side: %d steps, %d differ" % (len(STEPS), failures), file=sys.stderr)
    group_failures, dump_keys = check_kvexec_groups(kvexec)
    if failures or group_failures:
        sys.exit(1)
    for key in dump_keys:
        print(key)


if __name__ == "__main__":
    main()
