#!/usr/bin/env bash
# A short bounded load with memcslap and memcaslap; memcslap exits 0 even
# when the server is down, so the counts they print are checked, and the
# server's own cmd_get / cmd_set must have grown accordingly.
# Usage: memcslap_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
source "$(dirname "$0")/server_lib.sh"
data="$(mktemp -d)"
trap 'kill_server; rm -rf "$data"' EXIT

start_server --data-dir "$data" --sync none --vbuckets 64
servers="127.0.0.1:$SERVER_PORT"

set_out="$(memcslap --servers="$servers" --binary --test=set --concurrency=2 --execute-number=2000 2>&1)"
echo "$set_out"
get_out="$(memcslap --servers="$servers" --test=get --concurrency=2 --execute-number=2000 2>&1)"
echo "$get_out"
# memcslap prints "Took N seconds to load data" / "... to get/set"; an
# unreachable server prints errors instead.
for out in "$set_out" "$get_out"; do
    grep -q 'Took .* seconds' <<<"$out" || { echo "memcslap did not run"; exit 1; }
    if grep -qi 'failure\|error' <<<"$out"; then echo "memcslap reported errors"; exit 1; fi
done

aslap_out="$(memcaslap --servers="$servers" --binary --threads=2 --concurrency=8 \
    --execute_number=20000 2>&1)"
echo "$aslap_out"
ops=$(awk '/^Run time:/ { for (i = 1; i <= NF; i++) if ($i == "Ops:") print $(i + 1) }' <<<"$aslap_out")
[ -n "$ops" ] && [ "$ops" -ge 20000 ] || { echo "memcaslap ran $ops ops, expected 20000"; exit 1; }

stats="$(printf 'stats\r\nquit\r\n' | timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$SERVER_PORT; cat >&3; cat <&3")"
cmd_set=$(sed -n 's/^STAT cmd_set \([0-9]*\).*/\1/p' <<<"$stats")
cmd_get=$(sed -n 's/^STAT cmd_get \([0-9]*\).*/\1/p' <<<"$stats")
echo "server: cmd_set=$cmd_set cmd_get=$cmd_get"
[ "$cmd_set" -ge 20000 ] && [ "$cmd_get" -ge 2000 ]
stop_server
echo "memcslap/memcaslap: 1 passed, 0 failed"
