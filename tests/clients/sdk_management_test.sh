#!/usr/bin/env bash
# The Couchbase SDK's collection and bucket managers against --mgmt-port
# (sdk_management_test.js).
# Usage: sdk_management_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
start_server --data-dir "$data" --sync none --mgmt-port 0 --user Administrator --password password
[ -n "$SERVER_MGMT_PORT" ] || { echo "no mgmt port line" >&2; exit 1; }
node "$here/sdk_management_test.js" "$SERVER_PORT"
stop_server
