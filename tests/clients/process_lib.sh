# process_lib.sh: what server_lib.sh and cluster_lib.sh share about a
# process started in the background with its output in a log file.

# wait_for_line PID LOG PATTERN SECONDS WHAT: waits until LOG has a line
# matching PATTERN (grep); fails, printing LOG, if PID exits first or
# SECONDS pass.
wait_for_line() {
    local pid=$1 log=$2 pattern=$3 deadline=$((SECONDS + $4)) what=$5
    while ! grep -q "$pattern" "$log"; do
        if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -gt "$deadline" ]; then
            echo "$what did not become ready:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.05
    done
}

# terminate_checked PID LOG WHAT: SIGTERM to PID, then fails, printing LOG,
# unless it exits 0.
terminate_checked() {
    local pid=$1 log=$2 what=$3 rc=0
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    if [ $rc -ne 0 ]; then
        echo "$what exited with $rc after SIGTERM:" >&2
        cat "$log" >&2
        return 1
    fi
}
