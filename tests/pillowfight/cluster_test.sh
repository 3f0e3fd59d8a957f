#!/usr/bin/env bash
# kvexec-pillowfight against a two-node cluster with one replica
# (tools/cluster-run, its own etcd on free ports), bootstrapped from n0
# only: half the vBuckets are active on n1, so unless every key goes to
# its vBucket's active by the map, SETs get NOT_MY_VBUCKET and
# pillowfight exits 3. Majority writes: each one also needs n1 (or n0) to
# acknowledge its replica. Then every replica catches up: the status
# shows no replication lag, within a deadline.
# Usage: cluster_test.sh KVEXEC_SERVER KVEXEC_CLUSTER KVEXEC_PILLOWFIGHT
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
KVEXEC_PILLOWFIGHT="$3"
source "$(cd "$(dirname "$0")/../clients" && pwd)/cluster_lib.sh"
trap kill_cluster EXIT

start_cluster --nodes 2 --replicas 1 --server "$KVEXEC_SERVER" --cluster-tool "$KVEXEC_CLUSTER" \
    -- --sync none
port=${CLUSTER_PORTS[0]}
etcd=$CLUSTER_ETCD

report="$(mktemp)"
for durability in none majority; do
    rc=0
    "$KVEXEC_PILLOWFIGHT" -U "couchbase://127.0.0.1:$port" -t 2 --connections 4 -B 16 \
        -I 2000 --set-pct 100 --sequential -c 50 -d "$durability" -q >"$report" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        echo "pillowfight -d $durability exited $rc (3: errors; NOT_MY_VBUCKET: not routed):" >&2
        grep -v '^ ' "$report" >&2
        exit 1
    fi
done
rm -f "$report"

# The nodes refresh their seqnos in etcd every 0.5 s.
lagging() {
    "$KVEXEC_CLUSTER" --etcd "$etcd" status --json | /usr/bin/python3 -c '
import json, sys
status = json.load(sys.stdin)
sys.exit(0 if any(n.get("replicationLag", 1) != 0 for n in status["nodes"]) else 1)'
}
caught_up() { ! lagging; }
wait_until 30 "the replicas to catch up" caught_up
echo "pillowfight routed by the map over 2 nodes; the replicas caught up"
stop_cluster
