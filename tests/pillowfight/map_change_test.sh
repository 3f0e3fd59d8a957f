#!/usr/bin/env bash
# kvexec-pillowfight follows the cluster map as it changes under load, as
# the Couchbase SDKs do: an op answered NOT_MY_VBUCKET goes to the active
# of the newer map the answer carries (opening a connection to a node the
# client has none to), one answered TMPFAIL (a vBucket handing over) goes
# again after a backoff; both count as retried, not as errors.
#
# Two nodes with one replica and 64 vBuckets (tools/cluster-run), then:
#   1. under load, a third node joins and `kvexec-cluster rebalance` gives
#      it its share: pillowfight (bootstrapped from n0 before n2 existed)
#      ends with no error, having learned the new maps (ops retried, or
#      maps the nodes pushed: HELLO ClustermapChangeNotification);
#   2. under load, `kvexec-cluster failover n1` moves n1's vBuckets to
#      their replicas: again no error, the new map learned.
# Each load is stopped (SIGINT: the report is still written) once it has
# printed two progress lines after the change.
# Usage: map_change_test.sh KVEXEC_SERVER KVEXEC_CLUSTER KVEXEC_PILLOWFIGHT
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
KVEXEC_PILLOWFIGHT="$3"
source "$(cd "$(dirname "$0")/../clients" && pwd)/cluster_lib.sh"
source "$(dirname "$0")/load_lib.sh"

dir="$(mktemp -d)"
n2_pid=""
load_pid=""
cleanup() {
    for pid in $load_pid $n2_pid; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    kill_cluster
    [ -n "${KEEP_TEST_DIR:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT

start_cluster --nodes 2 --replicas 1 --dir "$dir" --server "$KVEXEC_SERVER" \
    --cluster-tool "$KVEXEC_CLUSTER" -- --sync none --vbuckets 64
port=${CLUSTER_PORTS[0]}
etcd=$CLUSTER_ETCD

status_json() { "$KVEXEC_CLUSTER" --etcd "$etcd" status --json; }



# start_load NAME: pillowfight in the background from n0, until SIGINT.
start_load() {
    "$KVEXEC_PILLOWFIGHT" -U "couchbase://127.0.0.1:$port" -t 2 --connections 4 -B 16 \
        -I 2000 --set-pct 50 --duration 600 --json "$dir/$1.json" >"$dir/$1.log" 2>&1 &
    load_pid=$!
    wait_until 60 "the $1 load to start" has_progress "$dir/$1.log" 1
}

# finish_load NAME: two more progress lines, then SIGINT; the load must
# have no error and have learned the new map (a retry or a push).
finish_load() {
    local seen
    seen=$(progress_lines "$dir/$1.log")
    wait_until 30 "the $1 load to go on" has_progress "$dir/$1.log" $((seen + 2))
    kill -INT "$load_pid"
    local rc=0
    wait "$load_pid" || rc=$?
    load_pid=""
    if [ $rc -ne 0 ]; then
        echo "pillowfight ($1) exited $rc (3: errors):" >&2
        grep -v " - .*: (" "$dir/$1.log" >&2
        exit 1
    fi
    /usr/bin/python3 - "$dir/$1.json" "$1" <<'EOF'
import json, sys
load = json.load(open(sys.argv[1]))["load"]
print("%s: %d ops, %d errors, retried %s, maps pushed %d"
      % (sys.argv[2], load["ops"], load["errorCount"], load["retries"], load["mapsPushed"]))
if load["errorCount"] != 0 or (load["retryCount"] == 0 and load["mapsPushed"] == 0):
    sys.exit("%s: expected no error, and the new map learned (a retry or a push)" % sys.argv[2])
# A rebalance publishes a map per step; without link losses there are no
# polls, so the clients follow it by NOT_MY_VBUCKET answers or pushes, and
# the pushes come ahead of most of those answers.
if sys.argv[2] == "rebalance" and load["mapsPushed"] == 0:
    sys.exit("rebalance: no client took a map the nodes pushed")
EOF
}

# 1. A node joins and the cluster rebalances under load.
start_load rebalance
mapfile -d '' n2_argv < <(/usr/bin/python3 -c '
import json, sys
argv = json.load(open(sys.argv[1]))
argv[argv.index("--node") + 1] = "n2"
argv[argv.index("--data-dir") + 1] = sys.argv[2]
sys.stdout.write("\0".join(argv) + "\0")' "$dir/n0.argv" "$dir/n2")
"${n2_argv[@]}" >"$dir/n2.log" 2>&1 &
n2_pid=$!
in_map() {
    status_json | /usr/bin/python3 -c '
import json, sys
status = json.load(sys.stdin)
sys.exit(0 if any(n["name"] == sys.argv[1] and n["alive"] and n["inMap"] and
                  n["appliedRevision"] == status["mapRevision"]
                  for n in status["nodes"]) else 1)' "$1"
}
wait_until 60 "n2 in the map" in_map n2
timeout 120 "$KVEXEC_CLUSTER" --etcd "$etcd" rebalance >"$dir/rebalance-command.log" 2>&1 || {
    echo "kvexec-cluster rebalance failed:" >&2
    cat "$dir/rebalance-command.log" >&2
    exit 1
}
actives_of() {
    status_json | /usr/bin/python3 -c '
import json, sys
print(next((n["active"] for n in json.load(sys.stdin)["nodes"] if n["name"] == sys.argv[1]), 0))' "$1"
}
n2_actives=$(actives_of n2)
if [ "$n2_actives" -lt 20 ]; then
    echo "after the rebalance n2 leads $n2_actives of 64 vBuckets, expected about a third" >&2
    exit 1
fi
finish_load rebalance

# 2. A node is failed over under load: its replicas take over.
start_load failover
"$KVEXEC_CLUSTER" --etcd "$etcd" failover n1 >/dev/null
n1_led_nothing() { test "$(actives_of n1)" -eq 0; }
wait_until 30 "n1's vBuckets to move to their replicas" n1_led_nothing
finish_load failover

echo "pillowfight followed the map through a rebalance and a failover without an error"
terminate_checked "$n2_pid" "$dir/n2.log" n2
n2_pid=""
stop_cluster
