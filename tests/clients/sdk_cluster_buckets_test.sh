#!/usr/bin/env bash
# Two buckets on a two-node cluster with one replica (tools/cluster-run
# --bucket default --bucket travel-sample: each bucket a cluster of its
# own on the same nodes) with the Couchbase SDK: the checks of
# sdk_buckets_test.js's first phase, routed by each bucket's map, durable
# writes replicated, flush and collections cluster-wide per bucket.
# cluster-run is stopped by its PID (SIGTERM) and must exit 0.
# Usage: sdk_cluster_buckets_test.sh KVEXEC_SERVER KVEXEC_CLUSTER
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/sdk_lib.sh"
source "$here/cluster_lib.sh"
ensure_sdk "$here"
trap kill_cluster EXIT

start_cluster --nodes 2 --replicas 1 --user Administrator --password password \
    --bucket default --bucket travel-sample \
    --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" -- --sync none --mgmt-port 0
[ ${#CLUSTER_PORTS[@]} -eq 2 ] || { echo "expected 2 nodes, got: ${CLUSTER_PORTS[*]}" >&2; exit 1; }
node "$here/sdk_buckets_test.js" "${CLUSTER_PORTS[0]}" create
for bucket in default travel-sample; do
    "$KVEXEC_CLUSTER" --etcd "$CLUSTER_ETCD" --root "/kvexec/$bucket" status
done
stop_cluster
