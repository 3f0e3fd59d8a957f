#!/usr/bin/python3
"""Debian's Python memcached clients against a running kvexec-server.

  python_clients.py plain PORT        pymemcache (text) and pylibmc (binary)
  python_clients.py sasl PORT USER PW  bmemcached (binary, SASL PLAIN)

Each check says what a user of that client relies on; the first failure
raises with the client's own view of the reply.
"""

import sys

import bmemcached
import pylibmc
from pymemcache.client.base import Client as TextClient


def expect(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def text_protocol(port):
    c = TextClient(("127.0.0.1", port), connect_timeout=10, timeout=10)
    expect("version", c.version().startswith(b"1."), True)
    expect("set", c.set("py:k", b"v1", noreply=False), True)
    expect("get", c.get("py:k"), b"v1")
    expect("add of an existing key", c.add("py:k", b"x", noreply=False), False)
    expect("add of a new key", c.add("py:new", b"n", noreply=False), True)
    expect("replace", c.replace("py:k", b"v2", noreply=False), True)
    expect("replace of a missing key", c.replace("py:missing", b"x", noreply=False), False)
    value, cas = c.gets("py:k")
    expect("gets", value, b"v2")
    expect("cas with the current token", c.cas("py:k", b"v3", cas, noreply=False), True)
    expect("cas with a stale token", c.cas("py:k", b"v4", cas, noreply=False), False)
    expect("append", c.append("py:k", b"+", noreply=False), True)
    expect("prepend", c.prepend("py:k", b"-", noreply=False), True)
    expect("get after append and prepend", c.get("py:k"), b"-v3+")
    c.set("py:n", b"10", noreply=False)
    expect("incr", c.incr("py:n", 5), 15)
    expect("decr below zero stops at 0", c.decr("py:n", 100), 0)
    expect("incr of a missing key", c.incr("py:none", 1), None)
    expect("get_many", c.get_many(["py:k", "py:new", "py:missing"]),
           {"py:k": b"-v3+", "py:new": b"n"})
    c.set("py:quiet", b"q")  # noreply: the next command must still line up
    expect("get after noreply set", c.get("py:quiet"), b"q")
    expect("touch", c.touch("py:k", 100, noreply=False), True)
    expect("delete", c.delete("py:k", noreply=False), True)
    expect("delete of a missing key", c.delete("py:k", noreply=False), False)
    expect("get of a deleted key", c.get("py:k"), None)
    stats = c.stats()
    expect("stats has curr_connections", b"curr_connections" in stats, True)
    expect("flush_all", c.flush_all(noreply=False), True)
    expect("get after flush_all", c.get("py:new"), None)
    c.close()


def binary_protocol(port):
    c = pylibmc.Client(["127.0.0.1:%d" % port], binary=True, behaviors={"cas": True})
    expect("set", c.set("lib:k", b"v"), True)
    expect("get", c.get("lib:k"), b"v")
    big = bytes(range(256)) * 4096  # 1 MiB
    expect("set of 1 MiB", c.set("lib:big", big), True)
    expect("get of 1 MiB", c.get("lib:big"), big)
    many = {"lib:m%d" % i: str(i).encode() for i in range(100)}
    expect("set_multi (quiet sets)", c.set_multi(many), [])
    expect("get_multi (quiet gets)", c.get_multi(list(many) + ["lib:none"]), many)
    value, cas = c.gets("lib:k")
    expect("cas", c.cas("lib:k", b"w", cas), True)
    expect("stale cas", c.cas("lib:k", b"x", cas), False)
    c.set("lib:n", b"1")
    expect("incr", c.incr("lib:n", 41), 42)
    expect("delete", c.delete("lib:k"), True)
    expect("delete of a missing key", c.delete("lib:k"), False)
    c.disconnect_all()


def sasl(port, user, password):
    good = bmemcached.Client(["127.0.0.1:%d" % port], user, password)
    expect("authenticated set", good.set("sasl:k", "v"), True)
    expect("authenticated get", good.get("sasl:k"), "v")
    good.disconnect_all()
    bad = bmemcached.Client(["127.0.0.1:%d" % port], user, password + "-wrong")
    try:
        bad.set("sasl:k", "x")
    except Exception as e:  # bmemcached raises on a refused SASL_AUTH
        print("refused as expected: %s" % e)
    else:
        raise AssertionError("a wrong password was accepted")
    finally:
        bad.disconnect_all()
    good = bmemcached.Client(["127.0.0.1:%d" % port], user, password)
    expect("value unchanged by the refused client", good.get("sasl:k"), "v")
    good.disconnect_all()


def main():
    if sys.argv[1] == "plain":
        text_protocol(int(sys.argv[2]))
        binary_protocol(int(sys.argv[2]))
    else:
        sasl(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    print("python clients: %s checks passed" % sys.argv[1])


if __name__ == "__main__":
    main()
