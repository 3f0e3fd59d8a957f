# cluster_lib.sh: sourced by the tests that run a cluster. start_cluster
# ARGS... runs tools/cluster-run ARGS... in the background (its own etcd and
# nodes on free loopback ports), waits (with a deadline) until it is ready
# and sets CLUSTER_PID, CLUSTER_PORTS (the nodes' ports, n0 first),
# CLUSTER_NODE_PIDS (theirs, in the same order) and CLUSTER_ETCD (etcd's URL); stop_cluster sends SIGTERM to that PID and
# checks that cluster-run exits 0. An EXIT trap should call kill_cluster.
# wait_until polls a condition with a deadline, and shows the cluster's
# status ($KVEXEC_CLUSTER) when it is missed.

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

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s until it
# succeeds. At the deadline it prints WHAT, the files named in
# WAIT_UNTIL_LOGS (if set) and the cluster's status, and exits 1.
wait_until() {
    local deadline=$((SECONDS + $1)) what=$2 log
    shift 2
    until "$@"; do
        if [ $SECONDS -gt $deadline ]; then
            echo "timed out waiting for $what" >&2
            for log in ${WAIT_UNTIL_LOGS:-}; do
                echo "--- $log:" >&2
                cat "$log" >&2
            done
            echo "--- cluster status:" >&2
            "$KVEXEC_CLUSTER" --etcd "$CLUSTER_ETCD" status >&2 || true
            exit 1
        fi
        sleep 0.1
    done
}
