# cluster_lib.sh: sourced by the tests that run a cluster. start_cluster
# ARGS... runs tools/cluster-run ARGS... in the background (its own etcd and
# nodes on free loopback ports), waits (with a deadline) until it is ready
# and sets CLUSTER_PID, CLUSTER_PORTS (the nodes' ports, n0 first) and
# CLUSTER_ETCD (etcd's URL); stop_cluster sends SIGTERM to that PID and
# checks that cluster-run exits 0. An EXIT trap should call kill_cluster.

CLUSTER_PID=""
CLUSTER_LOG=""
CLUSTER_PORTS=()
CLUSTER_ETCD=""

start_cluster() {
    local repo
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    CLUSTER_LOG="$(mktemp)"
    "$repo/tools/cluster-run" "$@" >"$CLUSTER_LOG" 2>&1 &
    CLUSTER_PID=$!
    local deadline=$((SECONDS + 90))
    while ! grep -q '^cluster-run: etcd ' "$CLUSTER_LOG"; do
        if ! kill -0 "$CLUSTER_PID" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
            echo "cluster-run did not become ready:" >&2
            cat "$CLUSTER_LOG" >&2
            return 1
        fi
        sleep 0.1
    done
    CLUSTER_PORTS=($(sed -n 's/^cluster-run: node n[0-9]* port \([0-9]*\) pid .*/\1/p' \
        "$CLUSTER_LOG"))
    CLUSTER_ETCD="$(sed -n 's/^cluster-run: etcd \(http[^ ]*\) pid .*/\1/p' "$CLUSTER_LOG")"
}

stop_cluster() {
    [ -n "$CLUSTER_PID" ] || return 0
    kill -TERM "$CLUSTER_PID"
    local rc=0
    wait "$CLUSTER_PID" || rc=$?
    CLUSTER_PID=""
    if [ $rc -ne 0 ]; then
        echo "cluster-run exited with $rc after SIGTERM:" >&2
        cat "$CLUSTER_LOG" >&2
        return 1
    fi
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
