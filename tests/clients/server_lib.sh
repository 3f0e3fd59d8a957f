# server_lib.sh: sourced by the client tests. start_server ARGS... runs
# kvexec-server on a free loopback port (--port 0) in the background, waits
# (with a deadline) for its ready line and sets SERVER_PID and SERVER_PORT
# (and SERVER_MGMT_PORT, SERVER_TLS_PORT and SERVER_MGMT_TLS_PORT, given
# --mgmt-port 0, --tls-port 0 and --mgmt-tls-port 0: their lines come first);
# stop_server sends SIGTERM to that PID and checks the exit status.
# KVEXEC_SERVER must name the binary.

source "$(dirname "${BASH_SOURCE[0]}")/process_lib.sh"

SERVER_PID=""
SERVER_PORT=""
SERVER_MGMT_PORT=""
SERVER_TLS_PORT=""
SERVER_MGMT_TLS_PORT=""
SERVER_LOG=""

start_server() {
    SERVER_LOG="$(mktemp)"
    "$KVEXEC_SERVER" --host 127.0.0.1 --port 0 "$@" >"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    wait_for_line "$SERVER_PID" "$SERVER_LOG" '^kvexec-server: ready on ' 60 kvexec-server ||
        return 1
    SERVER_PORT="$(sed -n 's/^kvexec-server: ready on .*:\([0-9]*\)$/\1/p' "$SERVER_LOG")"
    SERVER_MGMT_PORT="$(sed -n 's/^kvexec-server: mgmt on .*:\([0-9]*\)$/\1/p' "$SERVER_LOG")"
    SERVER_TLS_PORT="$(sed -n 's/^kvexec-server: tls on .*:\([0-9]*\)$/\1/p' "$SERVER_LOG")"
    SERVER_MGMT_TLS_PORT="$(sed -n 's/^kvexec-server: mgmt tls on .*:\([0-9]*\)$/\1/p' "$SERVER_LOG")"
}

stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    local pid=$SERVER_PID
    SERVER_PID=""
    terminate_checked "$pid" "$SERVER_LOG" kvexec-server
}

kill_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill -KILL "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

# make_certificate DIR NAME: a self-signed certificate for 127.0.0.1 and
# localhost, valid for a day, in DIR/NAME.pem with its key in DIR/NAME.key
# (what --tls-cert and --tls-key take, and what a client may trust).
make_certificate() {
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=kvexec test $2" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$1/$2.key" -out "$1/$2.pem" 2>/dev/null
}
