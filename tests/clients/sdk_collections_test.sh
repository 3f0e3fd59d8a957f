#!/usr/bin/env bash
# Scopes and collections with the Couchbase SDK (sdk_collections_test.js):
# made through the REST endpoint, used over KV, still there after a
# restart of the server on the same data directory.
# Usage: sdk_collections_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
args=(--data-dir "$data" --sync none --user Administrator --password password --mgmt-port 0)
start_server "${args[@]}"
node "$here/sdk_collections_test.js" "$SERVER_PORT" create
stop_server
start_server "${args[@]}"
node "$here/sdk_collections_test.js" "$SERVER_PORT" restarted
stop_server
