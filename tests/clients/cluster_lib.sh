# cluster_lib.sh: sourced by the tests that run a cluster. start_cluster
# ARGS... runs tools/cluster-run ARGS... in the background (its own etcd and
# nodes on free loopback ports), waits (with a deadline) until it is ready
# and sets CLUSTER_PID, CLUSTER_PORTS (the nodes' ports, n0 first),
# CLUSTER_NODE_PIDS (theirs, in the same order) and CLUSTER_ETCD (etcd's URL); stop_cluster sends SIGTERM to that PID and
# checks that cluster-run exits 0. An EXIT trap should call kill_cluster.

source "$(dirname "${BASH_SOURCE[0]}")/process_lib.sh"

CLUSTER_PID=""
CLUSTER_LOG=""
CLUSTER_PORTS=()
CLUSTER_NODE_PIDS=()
CLUSTER_ETCD=""

start_cluster() {
    local repo
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    CLUSTER_LOG="$(mktemp)"
    "$repo/tools/cluster-run" "$@" >"$CLUSTER_LOG" 2>&1 &
    CLUSTER_PID=$!
    wait_for_line "$CLUSTER_PID" "$CLUSTER_LOG" '^cluster-run: etcd ' 90 cluster-run || return 1
    CLUSTER_PORTS=($(sed -n 's/^cluster-run: node n[0-9]* port \([0-9]*\) pid .*/\1/p' \
        "$CLUSTER_LOG"))
    CLUSTER_NODE_PIDS=($(sed -n 's/^cluster-run: node n[0-9]* port [0-9]* pid \([0-9]*\)$/\1/p' \
        "$CLUSTER_LOG"))
    CLUSTER_ETCD="$(sed -n 's/^cluster-run: etcd \(http[^ ]*\) pid .*/\1/p' "$CLUSTER_LOG")"
}

stop_cluster() {
    [ -n "$CLUSTER_PID" ] || return 0
    local pid=$CLUSTER_PID
    CLUSTER_PID=""
    terminate_checked "$pid" "$CLUSTER_LOG" cluster-run || return 1
    rm -f "$CLUSTER_LOG"
}

kill_cluster() {
    if [ -n "$CLUSTER_PID" ]; then
        kill -TERM "$CLUSTER_PID" 2>/dev/null || true
        wait "$CLUSTER_PID" 2>/dev/null || true
        CLUSTER_PID=""
    fi
    rm -f "$CLUSTER_LOG"
}
