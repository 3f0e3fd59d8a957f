#!/usr/bin/env bash
# A short bounded load with memcslap and memcaslap (Debian's
# libmemcached-tools) against kvexec-server. Both exit 0 even when the
# server is down or requests fail, so the test checks the counts they print
# (what they did, not what they tried) and the server's own STAT counters.
# Usage: memcslap_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
source "$(dirname "$0")/server_lib.sh"
data="$(mktemp -d)"
trap 'kill_server; rm -rf "$data"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_line OUTPUT REGEX WHAT: OUTPUT has a line matching REGEX.
expect_line() {
    grep -Eq "$2" <<<"$1" || fail "$3 (no line matching '$2')"
}

# The value of "NAME: N" in memcaslap's summary.
aslap_count() {
    sed -n "s/^$2: \([0-9]*\)\$/\1/p" <<<"$1"
}

stat_of() {
    sed -n "s/^STAT $2 \([0-9]*\).*/\1/p" <<<"$1"
}

start_server --data-dir "$data" --sync none --vbuckets 64
servers="127.0.0.1:$SERVER_PORT"
threads=2
per_thread=2000

# memcslap prints "Time to set N keys by T threads" with N the keys it got
# done: 0 and "Fatal error" lines when the server is unreachable.
set_out="$(timeout 60 memcslap --servers="$servers" --binary --test=set --concurrency=$threads \
    --execute-number=$per_thread 2>&1)"
echo "$set_out"
expect_line "$set_out" "^Time to set +$((threads * per_thread)) keys by +$threads threads:" \
    "memcslap (binary) did not set every key"

# The get test loads its keys with one set each, then gets them.
get_out="$(timeout 60 memcslap --servers="$servers" --test=get --concurrency=$threads \
    --execute-number=$per_thread 2>&1)"
echo "$get_out"
expect_line "$get_out" "^Time to set +$per_thread keys:" "memcslap (text) did not load every key"
expect_line "$get_out" "^Time to get +$((threads * per_thread)) keys by +$threads threads:" \
    "memcslap (text) did not get every key"
for out in "$set_out" "$get_out"; do
    if grep -qi 'error\|failure' <<<"$out"; then fail "memcslap reported errors"; fi
done

# memcaslap: its default 90/10 get/set mix, binary then text. It prints
# "Run time: ... Ops: N" only when it ran, and its own cmd_get / cmd_set /
# get_misses; a get of a key it has set must hit.
aslap_sets=0
aslap_gets=0
for mode in --binary ""; do
    ops_wanted=20000
    [ -z "$mode" ] && ops_wanted=5000
    aslap_out="$(timeout 120 memcaslap --servers="$servers" $mode --threads=$threads \
        --concurrency=8 --execute_number=$ops_wanted 2>&1)"
    echo "$aslap_out"
    ops=$(sed -n 's/^Run time: .* Ops: \([0-9]*\) .*/\1/p' <<<"$aslap_out")
    gets=$(aslap_count "$aslap_out" cmd_get)
    sets=$(aslap_count "$aslap_out" cmd_set)
    misses=$(aslap_count "$aslap_out" get_misses)
    [ "${ops:-0}" -eq $ops_wanted ] || fail "memcaslap ${mode:-text} ran ${ops:-no} ops, wanted $ops_wanted"
    [ $((gets + sets)) -eq "$ops" ] || fail "memcaslap: cmd_get $gets + cmd_set $sets != $ops ops"
    [ "$misses" -eq 0 ] || fail "memcaslap: $misses get misses on keys it had set"
    if grep -q 'ERROR' <<<"$aslap_out"; then fail "memcaslap ${mode:-text} got error replies"; fi
    aslap_sets=$((aslap_sets + sets))
    aslap_gets=$((aslap_gets + gets))
done

# The server saw at least that much: every set and get above reached it,
# and every get hit.
stats="$(printf 'stats\r\nquit\r\n' |
    timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$SERVER_PORT; cat >&3; cat <&3")"
sets_sent=$((threads * per_thread + per_thread + aslap_sets))
gets_sent=$((threads * per_thread + aslap_gets))
cmd_set=$(stat_of "$stats" cmd_set)
cmd_get=$(stat_of "$stats" cmd_get)
get_misses=$(stat_of "$stats" get_misses)
echo "server: cmd_set=$cmd_set cmd_get=$cmd_get get_misses=$get_misses" \
    "(clients: $sets_sent sets, $gets_sent gets)"
[ "${cmd_set:-0}" -ge $sets_sent ] || fail "server counted $cmd_set sets, clients did $sets_sent"
[ "${cmd_get:-0}" -ge $gets_sent ] || fail "server counted $cmd_get gets, clients did $gets_sent"
[ "${get_misses:-1}" -eq 0 ] || fail "server counted $get_misses get misses"
stop_server
echo "memcslap/memcaslap: 1 passed, 0 failed"
