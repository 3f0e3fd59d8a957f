#!/usr/bin/env bash
# kvexec-pillowfight measures throughput through a failover, as the
# Couchbase SDKs do: a client whose connection to one node drops is not
# failed (connection.h); it reconnects that link with a backoff, holds the
# ops for the node's vBuckets meanwhile, and sends them to the replicas
# promoted by the failover's map once it has it (the nodes push it, HELLO
# ClustermapChangeNotification; GET_CLUSTER_CONFIG polls are the fallback).
#
# Three nodes with one replica, 64 vBuckets and a 2 s failover timeout
# (tools/cluster-run); pillowfight runs a read load for 15 s from n0, and
# n1 is SIGKILLed once the load has run about 3 s. Once the failover has
# moved n1's vBuckets, n1 is started again on its port and data directory:
# the clients' links to it reconnect. Reads in flight on n1 are sent again
# (idempotent), so the run must end with: exit 0 (no error), no client
# failed, links lost and reconnected, and ops completed after the failover
# (the progress lines).
# Usage: failover_reconnect_test.sh KVEXEC_SERVER KVEXEC_CLUSTER KVEXEC_PILLOWFIGHT
set -euo pipefail
KVEXEC_SERVER="$1"
KVEXEC_CLUSTER="$2"
KVEXEC_PILLOWFIGHT="$3"
source "$(cd "$(dirname "$0")/../clients" && pwd)/cluster_lib.sh"
source "$(dirname "$0")/load_lib.sh"

dir="$(mktemp -d)"
load_pid=""
n1_pid=""
cleanup() {
    for pid in $load_pid $n1_pid; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    kill_cluster
    [ -n "${KEEP_TEST_DIR:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT

start_cluster --nodes 3 --replicas 1 --dir "$dir" --server "$KVEXEC_SERVER" \
    --cluster-tool "$KVEXEC_CLUSTER" -- --sync none --vbuckets 64 --failover-timeout 2
[ ${#CLUSTER_NODE_PIDS[@]} -eq 3 ] || { echo "expected 3 node PIDs" >&2; exit 1; }
port=${CLUSTER_PORTS[0]}
etcd=$CLUSTER_ETCD
log="$dir/load.log"
WAIT_UNTIL_LOGS=$log

finished() { ! kill -0 "$load_pid" 2>/dev/null; }

"$KVEXEC_PILLOWFIGHT" -U "couchbase://127.0.0.1:$port" -t 2 --connections 4 -B 16 -I 2000 \
    --set-pct 0 --duration 15 --json "$dir/load.json" >"$log" 2>&1 &
load_pid=$!
# A progress line a second: the third says the load has run about 3 s.
wait_until 60 "the load to run 3 s" has_progress "$log" 3
kill -KILL "${CLUSTER_NODE_PIDS[1]}"
lines_at_kill=$(progress_lines "$log")
echo "n1 (pid ${CLUSTER_NODE_PIDS[1]}) killed after $lines_at_kill progress lines"

n1_led_nothing() {
    "$KVEXEC_CLUSTER" --etcd "$etcd" status --json | /usr/bin/python3 -c '
import json, sys
sys.exit(0 if all(n["name"] != "n1" or n["active"] == 0
                  for n in json.load(sys.stdin)["nodes"]) else 1)'
}
wait_until 30 "n1's vBuckets to move to their replicas" n1_led_nothing
# n1 again, on its port (the clients reconnect to the address they had).
mapfile -d '' n1_argv < <(/usr/bin/python3 -c '
import json, sys
argv = json.load(open(sys.argv[1]))
argv[argv.index("--port") + 1] = sys.argv[2]
sys.stdout.write("\0".join(argv) + "\0")' "$dir/n1.argv" "${CLUSTER_PORTS[1]}")
"${n1_argv[@]}" >"$dir/n1-again.log" 2>&1 &
n1_pid=$!
wait_for_line "$n1_pid" "$dir/n1-again.log" "ready on" 30 "n1 (restarted)"
echo "n1 restarted on port ${CLUSTER_PORTS[1]} after $(progress_lines "$log") progress lines"

# 15 s of load, the kill at 3: done well within 45 s (a hang would not be).
wait_until 45 "pillowfight to finish" finished
rc=0
wait "$load_pid" || rc=$?
load_pid=""
if [ $rc -ne 0 ]; then
    echo "pillowfight exited $rc (3: errors):" >&2
    cat "$log" >&2
    exit 1
fi
/usr/bin/python3 - "$dir/load.json" "$log" "$lines_at_kill" <<'PY'
import json, re, sys
load = json.load(open(sys.argv[1]))["load"]
lines = [l for l in open(sys.argv[2]) if re.match(r"OPS/SEC: .*\(Load", l)]
rates = [int(re.match(r"OPS/SEC: (\d+)", l).group(1)) for l in lines]
after = rates[int(sys.argv[3]):]
print("load: %d ops, %d errors, clients failed %d, links lost %d, reconnected %d, "
      "maps pushed %d, retried %s"
      % (load["ops"], load["errorCount"], load["clientsFailed"], load["linksLost"],
         load["reconnects"], load["mapsPushed"], load["retries"]))
print("ops/s after the kill:", after)
failed = []
if load["errorCount"] != 0:
    failed.append("errors: %s" % load["errors"])
if load["clientsFailed"] != 0:
    failed.append("%d clients failed" % load["clientsFailed"])
if load["linksLost"] == 0:
    failed.append("no connection counted as lost")
if load["reconnects"] == 0:
    failed.append("no link reconnected to the restarted n1")
# The failover (2 s lease, then the new map) is over within ~4 s of the
# kill; the load goes on to its 12 s: the last progress lines have ops.
if len(after) < 4 or min(after[-2:]) == 0:
    failed.append("no ops completed after the failover: %s" % after)
if failed:
    sys.exit("; ".join(failed))
PY
echo "pillowfight went on through the failover with every client alive"
