#!/usr/bin/env bash
# sdk_cluster_test.js over TLS: the Couchbase Node.js SDK connects with
# couchbases:// to a three-node cluster whose nodes also replicate over TLS
# (tools/cluster-run --tls: a TLS port on each node and --cluster-tls-ca),
# so that durable writes and replica reads cross TLS twice: client to
# active, active to replica. cluster-run is stopped by its PID and must
# exit 0.
# Usage: sdk_cluster_tls_test.sh KVEXEC_SERVER KVEXEC_CLUSTER
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/sdk_lib.sh"
source "$here/cluster_lib.sh"
ensure_sdk "$here"
trap kill_cluster EXIT

start_cluster --nodes 3 --replicas 1 --tls --user Administrator --password password \
    --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" -- --sync none
cat "$CLUSTER_LOG"
line="$(grep '^cluster-run: ready couchbases://' "$CLUSTER_LOG")"
ca="${line##* trusting }"
tls_ports=($(echo "$line" | sed 's/.*couchbases:\/\/\([^ ]*\) .*/\1/' | tr ',' '\n' | cut -d: -f2))
[ ${#tls_ports[@]} -eq 3 ] || { echo "expected 3 TLS ports, got: ${tls_ports[*]}" >&2; exit 1; }
[ -f "$ca" ] || { echo "no certificate at '$ca'" >&2; exit 1; }

KVEXEC_TLS_CA="$ca" node "$here/sdk_cluster_test.js" "${tls_ports[@]}"
stop_cluster
