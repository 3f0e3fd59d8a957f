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
# The SDK comes from the lock file; (re)installed when missing or when the
# installed version is not the pinned one (npm's cache serves it offline).
for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "sdk_test: $tool not found (tools/install-deps)" >&2; exit 1; }
done
pinned="$(node -p "require('$here/package.json').dependencies.couchbase")"
installed="$(node -p "require('$here/node_modules/couchbase/package.json').version" 2>/dev/null || true)"
if [ "$installed" != "$pinned" ]; then
    echo "sdk_test: installing couchbase $pinned (npm ci)"
    (cd "$here" && npm ci --prefer-offline --no-audit --no-fund >/dev/null) ||
        { echo "sdk_test: npm ci failed" >&2; exit 1; }
fi
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
