#!/usr/bin/env bash
# Debian's Python memcached clients (python3-pymemcache, python3-pylibmc,
# python3-binary-memcached) against kvexec-server: the text and binary
# protocols without auth, then SASL PLAIN. Usage: python_clients_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
data="$(mktemp -d)"
trap 'kill_server; rm -rf "$data"' EXIT

start_server --data-dir "$data/plain" --sync none --vbuckets 64
/usr/bin/python3 "$here/python_clients.py" plain "$SERVER_PORT"
stop_server

start_server --data-dir "$data/sasl" --sync none --vbuckets 64 --user alice --password s3cret
/usr/bin/python3 "$here/python_clients.py" sasl "$SERVER_PORT" alice s3cret
stop_server
