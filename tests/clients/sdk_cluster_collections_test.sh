#!/usr/bin/env bash
# Scopes and collections on a three-node cluster with one replica
# (tools/cluster-run, its own etcd, every node with a REST endpoint): made
# through any node's REST endpoint, the same on every node, used by the
# Couchbase Node.js SDK on all of them (sdk_cluster_collections_test.js).
# cluster-run is stopped by its PID (SIGTERM) and must exit 0.
# Usage: sdk_cluster_collections_test.sh KVEXEC_SERVER KVEXEC_CLUSTER
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/sdk_lib.sh"
source "$here/cluster_lib.sh"
ensure_sdk "$here"
trap kill_cluster EXIT

start_cluster --nodes 3 --replicas 1 --user Administrator --password password \
    --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" -- --sync none --mgmt-port 0
[ ${#CLUSTER_PORTS[@]} -eq 3 ] || { echo "expected 3 nodes, got: ${CLUSTER_PORTS[*]}" >&2; exit 1; }
# Each node's REST port, n0 first, as its node key in etcd says.
mgmt_ports=($("$KVEXEC_CLUSTER" --etcd "$CLUSTER_ETCD" status --json | /usr/bin/python3 -c '
import json, sys
nodes = sorted(json.load(sys.stdin)["nodes"], key=lambda n: int(n["name"][1:]))
print(" ".join(str(n["address"]["mgmtPort"]) for n in nodes))'))
[ ${#mgmt_ports[@]} -eq 3 ] || { echo "expected 3 REST ports, got: ${mgmt_ports[*]}" >&2; exit 1; }

node "$here/sdk_cluster_collections_test.js" "${CLUSTER_PORTS[0]}" "${mgmt_ports[@]}"
"$KVEXEC_CLUSTER" --etcd "$CLUSTER_ETCD" status
stop_cluster
