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
source "$here/sdk_lib.sh"
source "$here/cluster_lib.sh"
ensure_sdk "$here"
trap kill_cluster EXIT

start_cluster --nodes 3 --replicas 1 --user Administrator --password password \
    --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" -- --sync none
cat "$CLUSTER_LOG"
[ ${#CLUSTER_PORTS[@]} -eq 3 ] || { echo "expected 3 nodes, got: ${CLUSTER_PORTS[*]}" >&2; exit 1; }

node "$here/sdk_cluster_test.js" "${CLUSTER_PORTS[@]}"
stop_cluster
