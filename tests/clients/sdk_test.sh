#!/usr/bin/env bash
# The Couchbase Node.js SDK (tests/clients/package-lock.json, installed with
# `npm ci`) against kvexec-server with SCRAM auth: CRUD and durable writes,
# then SIGKILL, restart on the same directory, read back every acknowledged
# persisted durable write (a Majority write may be lost, never changed).
# Usage: sdk_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
ensure_sdk "$here"
data="$(mktemp -d)"
acks="$(mktemp)"
trap 'kill_server; rm -rf "$data" "$acks"' EXIT
args=(--data-dir "$data" --sync fdatasync --user Administrator --password password)

start_server "${args[@]}"
node "$here/sdk_test.js" write "$SERVER_PORT" "$acks"
kill_server  # SIGKILL: no graceful flush
start_server "${args[@]}"
node "$here/sdk_test.js" verify "$SERVER_PORT" "$acks"
stop_server
