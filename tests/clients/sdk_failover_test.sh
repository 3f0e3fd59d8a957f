#!/usr/bin/env bash
# The Couchbase Node.js SDK keeps a durable (Majority) write load on a
# three-node cluster with one replica (tools/cluster-run --nodes 3
# --replicas 1, 64 vBuckets, the default 5 s failover timeout) while node
# n0 is killed (SIGKILL), failed over, restarted and rebalanced back, a
# fourth node joins and is rebalanced in, and n1 is rebalanced out
# (sdk_failover_test.js). cluster-run is stopped at the end; it reports the
# killed node as not stopped cleanly, so its exit status is not checked
# here (sdk_cluster_test.sh checks a clean stop).
# Usage: sdk_failover_test.sh KVEXEC_SERVER KVEXEC_CLUSTER
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/sdk_lib.sh"
source "$here/cluster_lib.sh"
ensure_sdk "$here"
dir="$(mktemp -d)"
trap 'kill_cluster; rm -rf "$dir"' EXIT

start_cluster --nodes 3 --replicas 1 --dir "$dir" --user Administrator --password password \
    --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" -- --sync none --vbuckets 64
cat "$CLUSTER_LOG"
[ ${#CLUSTER_NODE_PIDS[@]} -eq 3 ] || { echo "expected 3 node PIDs" >&2; exit 1; }

node "$here/sdk_failover_test.js" "$KVEXEC_CLUSTER" "$CLUSTER_ETCD" "$dir" "${CLUSTER_NODE_PIDS[0]}" \
    "${CLUSTER_PORTS[@]}"
