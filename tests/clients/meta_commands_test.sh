#!/usr/bin/env bash
# memcached 1.6's text additions (meta commands, gat, gats, stats groups)
# side by side: the same requests to memcached 1.6.18 (Debian's
# /usr/bin/memcached) and to kvexec-server, replies compared byte for byte
# where memcached's are deterministic (meta_side_by_side.py); then memcdump
# (libmemcached-tools) must list the keys stored in kvexec-server.
# Usage: meta_commands_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
data="$(mktemp -d)"
MEMCACHED_PID=""
stop_memcached() {
    [ -n "$MEMCACHED_PID" ] || return 0
    kill -TERM "$MEMCACHED_PID" 2>/dev/null || true
    wait "$MEMCACHED_PID" 2>/dev/null || true
    MEMCACHED_PID=""
}
trap 'kill_server; stop_memcached; rm -rf "$data"' EXIT

# memcached takes a port number, not 0: pick a free one, and try again
# should another process take it before memcached binds it.
start_memcached() {
    local user=() attempt port deadline
    [ "$(id -u)" -ne 0 ] || user=(-u root)  # memcached refuses to run as root without -u
    for attempt in 1 2 3 4 5; do
        port="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
        /usr/bin/memcached "${user[@]}" -l 127.0.0.1 -p "$port" -U 0 >"$data/memcached.log" 2>&1 &
        MEMCACHED_PID=$!
        deadline=$((SECONDS + 10))
        while kill -0 "$MEMCACHED_PID" 2>/dev/null && [ $SECONDS -le $deadline ]; do
            if /usr/bin/python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)' "$port" 2>/dev/null; then
                MEMCACHED_PORT="$port"
                return 0
            fi
            sleep 0.05
        done
        stop_memcached
    done
    echo "memcached did not start:" >&2
    cat "$data/memcached.log" >&2
    return 1
}

/usr/bin/memcached -V
start_memcached
start_server --data-dir "$data/kvexec" --sync none --vbuckets 64
/usr/bin/python3 "$here/meta_side_by_side.py" "$MEMCACHED_PORT" "$SERVER_PORT" >"$data/stored"

# memcdump lists keys with stats cachedump, class by class.
memcdump --servers="127.0.0.1:$SERVER_PORT" >"$data/dumped"
missing="$(sort "$data/stored" | comm -23 - <(sort "$data/dumped"))"
if [ -n "$missing" ]; then
    echo "memcdump did not list: $missing" >&2
    echo "it listed:" >&2
    cat "$data/dumped" >&2
    exit 1
fi
echo "memcdump listed all $(wc -l <"$data/stored") keys stored"
stop_memcached
stop_server
