#!/usr/bin/env bash
# kvexec-server's TLS port (--tls-port) with Debian's Python clients:
# pymemcache (text) and python3-binary-memcached (binary, SASL PLAIN) over
# TLS, trusting a certificate made here for 127.0.0.1, and the management
# endpoint over HTTPS (--mgmt-tls-port) with urllib. Refused: plain bytes
# on the TLS port, TLS on the plain port, a client that does not trust the
# certificate. Silent connections are dropped at the idle timeout, before
# and after their handshake. A server given a key that is not its
# certificate's, or no certificate, does not start.
# Usage: tls_clients_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
data="$(mktemp -d)"
trap 'kill_server; rm -rf "$data"' EXIT

make_certificate "$data" server
make_certificate "$data" other

tls_options=(--tls-port 0 --tls-cert "$data/server.pem" --tls-key "$data/server.key")
start_server --data-dir "$data/plain" --sync none --vbuckets 64 "${tls_options[@]}"
[ -n "$SERVER_TLS_PORT" ] || { echo "no 'tls on' line:" >&2; cat "$SERVER_LOG" >&2; exit 1; }
/usr/bin/python3 "$here/python_clients.py" tls "$SERVER_PORT" "$SERVER_TLS_PORT" "$data/server.pem"
stop_server

start_server --data-dir "$data/sasl" --sync none --vbuckets 64 --user alice --password s3cret \
    --mgmt-port 0 --mgmt-tls-port 0 "${tls_options[@]}"
/usr/bin/python3 "$here/python_clients.py" tls-sasl "$SERVER_TLS_PORT" "$data/server.pem" \
    alice s3cret
/usr/bin/python3 "$here/python_clients.py" tls-mgmt "$SERVER_MGMT_PORT" "$SERVER_MGMT_TLS_PORT" \
    "$data/server.pem" alice s3cret
stop_server

start_server --data-dir "$data/idle" --sync none --vbuckets 64 --idle-timeout 1 "${tls_options[@]}"
/usr/bin/python3 "$here/python_clients.py" tls-idle "$SERVER_TLS_PORT" "$data/server.pem" 1
stop_server

# A key that is not the certificate's, or a certificate file that is not
# there: the server names the file, says why, and exits.
refused_start() {  # EXPECTED_TEXT SERVER_ARGS...
    local expected=$1 rc=0 out
    shift
    out="$("$KVEXEC_SERVER" --host 127.0.0.1 --port 0 --data-dir "$data/bad" --sync none \
        --vbuckets 64 --tls-port 0 "$@" 2>&1)" || rc=$?
    if [ $rc -eq 0 ] || ! grep -qF -- "$expected" <<<"$out"; then
        echo "expected a refusal saying '$expected' (exit $rc):" >&2
        echo "$out" >&2
        exit 1
    fi
}
refused_start "--tls-key $data/other.key: " --tls-cert "$data/server.pem" --tls-key "$data/other.key"
refused_start "key values mismatch" --tls-cert "$data/server.pem" --tls-key "$data/other.key"
refused_start "--tls-cert $data/missing.pem: " --tls-cert "$data/missing.pem" \
    --tls-key "$data/server.key"
echo "tls clients: passed"
