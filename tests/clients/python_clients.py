#!/usr/bin/python3
"""Debian's Python memcached clients against a running kvexec-server.

  python_clients.py plain PORT        pymemcache (text) and pylibmc (binary)
  python_clients.py sasl PORT USER PW  bmemcached (binary, SASL PLAIN)
  python_clients.py tls PORT TLS_PORT CA_FILE
                                       pymemcache (text) and bmemcached (binary)
                                       over TLS, trusting CA_FILE; what is refused
  python_clients.py tls-sasl TLS_PORT CA_FILE USER PW
                                       bmemcached, SASL PLAIN over TLS
  python_clients.py tls-mgmt MGMT_PORT MGMT_TLS_PORT CA_FILE USER PW
                                       the management REST endpoint over HTTPS
                                       (urllib): listing and creating scopes
  python_clients.py tls-idle TLS_PORT CA_FILE SECONDS
                                       silent connections on the TLS port (no
                                       handshake; handshake and no request) are
                                       closed by the server's idle timeout

Each check says what a user of that client relies on; the first failure
raises with the client's own view of the reply.
"""

import base64
import json
import socket
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import bmemcached
import pylibmc
from pymemcache.client.base import Client as TextClient


def expect(what, got, want):
    if got != want:
        raise AssertionError("%s: got %.200r, want %.200r" % (what, got, want))


def text_protocol(port, tls_context=None):
    c = TextClient(("127.0.0.1", port), connect_timeout=10, timeout=10, tls_context=tls_context)
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


def sasl(port, user, password, tls_context=None):
    server = ["127.0.0.1:%d" % port]
    good = bmemcached.Client(server, user, password, tls_context=tls_context)
    expect("authenticated set", good.set("sasl:k", "v"), True)
    expect("authenticated get", good.get("sasl:k"), "v")
    good.disconnect_all()
    bad = bmemcached.Client(server, user, password + "-wrong", tls_context=tls_context)
    try:
        bad.set("sasl:k", "x")
    except Exception as e:  # bmemcached raises on a refused SASL_AUTH
        print("refused as expected: %s" % e)
    else:
        raise AssertionError("a wrong password was accepted")
    finally:
        bad.disconnect_all()
    good = bmemcached.Client(server, user, password, tls_context=tls_context)
    expect("value unchanged by the refused client", good.get("sasl:k"), "v")
    good.disconnect_all()


def trusting(ca_file):
    """A client's TLS context that trusts only the test's certificate and
    checks that it names the address connected to."""
    context = ssl.create_default_context(cafile=ca_file)
    expect("hostname checked", context.check_hostname, True)
    return context


def binary_over_tls(port, tls_context):
    c = bmemcached.Client(["127.0.0.1:%d" % port], tls_context=tls_context)
    expect("set", c.set("tls:k", b"v"), True)
    expect("get", c.get("tls:k"), b"v")
    big = bytes(range(256)) * 4096  # 1 MiB: many TLS records each way
    expect("set of 1 MiB", c.set("tls:big", big), True)
    expect("get of 1 MiB", c.get("tls:big"), big)
    many = {"tls:m%d" % i: str(i).encode() for i in range(100)}
    for key, value in many.items():
        c.set(key, value)
    expect("get_multi", c.get_multi(list(many) + ["tls:none"]), many)
    c.set("tls:n", b"1")
    expect("incr", c.incr("tls:n", 41), 42)
    expect("delete", c.delete("tls:k"), True)
    expect("get of a deleted key", c.get("tls:k"), None)
    c.disconnect_all()


def refused(what, action):
    try:
        action()
    except Exception as e:  # each client raises its own kind
        print("refused as expected (%s): %r" % (what, e))
    else:
        raise AssertionError("%s: accepted" % what)


def tls(port, tls_port, ca_file):
    context = trusting(ca_file)
    text_protocol(tls_port, context)
    binary_over_tls(tls_port, context)
    # What went in over TLS is the same data the plain port serves
    # (bmemcached compresses big values: read them back with it).
    plain_binary = bmemcached.Client(["127.0.0.1:%d" % port])
    expect("plain get of a TLS set", plain_binary.get("tls:big"), bytes(range(256)) * 4096)
    plain_binary.disconnect_all()
    plain = TextClient(("127.0.0.1", port), connect_timeout=10, timeout=10)

    def plain_on_tls_port():
        TextClient(("127.0.0.1", tls_port), connect_timeout=5, timeout=5).version()

    def tls_on_plain_port():
        TextClient(("127.0.0.1", port), connect_timeout=5, timeout=5,
                   tls_context=context).version()

    def untrusted():
        TextClient(("127.0.0.1", tls_port), connect_timeout=5, timeout=5,
                   tls_context=ssl.create_default_context()).version()

    refused("plain text on the TLS port", plain_on_tls_port)
    refused("TLS on the plain port", tls_on_plain_port)
    refused("a client that does not trust the certificate", untrusted)
    # Neither port is the worse for it.
    expect("plain after the refusals", plain.get("tls:n"), b"42")
    expect("TLS after the refusals",
           TextClient(("127.0.0.1", tls_port), tls_context=context).get("tls:n"), b"42")
    plain.close()


def closed_by_server(sock, within):
    """Whether the server closes `sock` (which sends nothing) within
    `within` seconds: a read then ends, or fails as reset."""
    sock.settimeout(within)
    started = time.monotonic()
    try:
        data = sock.recv(1)
    except socket.timeout:
        return False
    except (ConnectionResetError, ssl.SSLError):
        data = b""
    print("closed after %.1f s" % (time.monotonic() - started))
    return data == b""


def tls_idle(tls_port, ca_file, idle_seconds):
    deadline = idle_seconds * 5 + 10  # generous: sanitizer builds are slow
    raw = socket.create_connection(("127.0.0.1", tls_port), timeout=10)
    expect("no handshake: closed", closed_by_server(raw, deadline), True)
    raw.close()
    handshaken = trusting(ca_file).wrap_socket(
        socket.create_connection(("127.0.0.1", tls_port), timeout=10),
        server_hostname="127.0.0.1")
    expect("a handshake, then no request: closed", closed_by_server(handshaken, deadline), True)
    handshaken.close()


def rest(port, path, user, password, context=None, form=None):
    """A management request; (status, body). HTTPS when `context`."""
    scheme = "https" if context else "http"
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request("%s://127.0.0.1:%d%s" % (scheme, port, path), data=data)
    token = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
    request.add_header("Authorization", "Basic " + token)
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def scope_names(body):
    return sorted(scope["name"] for scope in json.loads(body)["scopes"])


def tls_mgmt(port, tls_port, ca_file, user, password):
    context = trusting(ca_file)
    scopes = "/pools/default/buckets/default/scopes"
    status, body = rest(tls_port, scopes, user, password, context)
    expect("HTTPS list of scopes", (status, scope_names(body)), (200, ["_default"]))
    status, _ = rest(tls_port, scopes, user, password, context, {"name": "over_tls"})
    expect("HTTPS create a scope", status, 200)
    status, body = rest(port, scopes, user, password)  # the same manifest, plain
    expect("plain HTTP sees it", (status, scope_names(body)), (200, ["_default", "over_tls"]))
    status, _ = rest(tls_port, scopes, user, password + "-wrong", context)
    expect("HTTPS with a wrong password", status, 401)
    refused("plain HTTP on the HTTPS port", lambda: rest(tls_port, scopes, user, password))
    refused("HTTPS with a client that does not trust the certificate",
            lambda: rest(tls_port, scopes, user, password, ssl.create_default_context()))
    status, _ = rest(tls_port, scopes, user, password, context)
    expect("HTTPS after the refusals", status, 200)


def main():
    mode = sys.argv[1]
    if mode == "plain":
        text_protocol(int(sys.argv[2]))
        binary_protocol(int(sys.argv[2]))
    elif mode == "sasl":
        sasl(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif mode == "tls":
        tls(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif mode == "tls-sasl":
        sasl(int(sys.argv[2]), sys.argv[4], sys.argv[5], trusting(sys.argv[3]))
    elif mode == "tls-mgmt":
        tls_mgmt(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
    elif mode == "tls-idle":
        tls_idle(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit("unknown mode %r" % mode)
    print("python clients: %s checks passed" % sys.argv[1])


if __name__ == "__main__":
    main()
