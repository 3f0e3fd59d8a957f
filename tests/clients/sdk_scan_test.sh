#!/usr/bin/env bash
# The Couchbase SDK's KV range scans against kvexec-server
# (sdk_scan_test.js): collection.scan with range, prefix and sampling
# scans, ids only, in the default collection and a named one.
# Usage: sdk_scan_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
start_server --data-dir "$data" --sync none --user Administrator --password password --mgmt-port 0
node "$here/sdk_scan_test.js" "$SERVER_PORT"
stop_server
