#!/usr/bin/env bash
# memccapable (Debian's libmemcached-tools) against kvexec-server: every
# binary and text test must pass. Usage: memccapable_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
source "$(dirname "$0")/server_lib.sh"
data="$(mktemp -d)"
trap 'kill_server; rm -rf "$data"' EXIT

start_server --data-dir "$data" --sync none --vbuckets 64
out="$(mktemp)"
rc=0
memccapable -h 127.0.0.1 -p "$SERVER_PORT" -t 10 >"$out" 2>&1 || rc=$?
cat "$out"
stop_server
passed=$(grep -c '\[pass\]' "$out" || true)
failed=$(grep -Ec '\[(FAIL|fail)\]' "$out" || true)
echo "memccapable: $passed passed, $failed failed (exit $rc)"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -ge 54 ]
