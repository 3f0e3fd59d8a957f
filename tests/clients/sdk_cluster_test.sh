#!/usr/bin/env bash
# The Couchbase Node.js SDK against a three-node cluster with one replica
# (tools/cluster-run --nodes 3 --replicas 1, its own etcd on free ports):
# bootstrap from one node, CRUD of 200 keys routed by the map
# (sdk_cluster_test.js). cluster-run is stopped by its PID (SIGTERM: the
# nodes, then etcd) and must exit 0.
# Usage: sdk_cluster_test.sh KVEXEC_SERVER KVEXEC_CLUSTER
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$here/sdk_lib.sh"
ensure_sdk "$here"

log="$(mktemp)"
run_pid=""
cleanup() {
    if [ -n "$run_pid" ]; then
        kill -TERM "$run_pid" 2>/dev/null || true
        wait "$run_pid" 2>/dev/null || true
    fi
    rm -f "$log"
}
trap cleanup EXIT

"$repo/tools/cluster-run" --nodes 3 --replicas 1 --user Administrator --password password \
    --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" -- --sync none >"$log" 2>&1 &
run_pid=$!
deadline=$((SECONDS + 90))
while ! grep -q '^cluster-run: etcd ' "$log"; do
    if ! kill -0 "$run_pid" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
        echo "cluster-run did not become ready:" >&2
        cat "$log" >&2
        exit 1
    fi
    sleep 0.1
done
cat "$log"
ports=($(sed -n 's/^cluster-run: node n[0-9]* port \([0-9]*\) pid .*/\1/p' "$log"))
[ ${#ports[@]} -eq 3 ] || { echo "expected 3 nodes, got: ${ports[*]}" >&2; exit 1; }

node "$here/sdk_cluster_test.js" "${ports[@]}"

kill -TERM "$run_pid"
rc=0
wait "$run_pid" || rc=$?
run_pid=""
if [ $rc -ne 0 ]; then
    echo "cluster-run exited with $rc after SIGTERM:" >&2
    cat "$log" >&2
    exit 1
fi
