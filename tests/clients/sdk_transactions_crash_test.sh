#!/usr/bin/env bash
# Distributed transactions across a SIGKILL (sdk_transactions_crash_test.js):
# transfers between accounts run until the server is killed at a random
# moment; after a restart on the same directory, the money is all there,
# read in one transaction, and every account can still be written.
# Usage: sdk_transactions_crash_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
ensure_sdk "$here"
data="$(mktemp -d)"
progress="$(mktemp)"
loader=""
trap 'kill_server; [ -z "$loader" ] || kill -KILL "$loader" 2>/dev/null; rm -rf "$data" "$progress"' EXIT
args=(--data-dir "$data" --sync fdatasync --user Administrator --password password)

start_server "${args[@]}"
node "$here/sdk_transactions_crash_test.js" load "$SERVER_PORT" "$progress" &
loader=$!
# Until 20 transfers have committed (one line each), with a deadline.
deadline=$((SECONDS + 90))
while [ "$(wc -l <"$progress")" -lt 20 ]; do
    kill -0 "$loader" 2>/dev/null || { echo "the load stopped before 20 transfers" >&2; exit 1; }
    [ "$SECONDS" -lt "$deadline" ] || { echo "fewer than 20 transfers in 90 s" >&2; exit 1; }
    sleep 0.1
done
sleep "0.$((RANDOM % 1000))"  # a random moment of the load
kill_server
echo "killed the server after $(wc -l <"$progress") committed transfers"
kill -KILL "$loader" 2>/dev/null || true
wait "$loader" 2>/dev/null || true
loader=""
start_server "${args[@]}"
node "$here/sdk_transactions_crash_test.js" verify "$SERVER_PORT"
stop_server
