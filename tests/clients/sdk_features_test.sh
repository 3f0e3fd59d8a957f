#!/usr/bin/env bash
# What Couchbase SDK applications call beyond CRUD (sdk_features_test.js):
# document locks, preserved expiry, the value size limit.
# Usage: sdk_features_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
start_server --data-dir "$data" --sync none --user Administrator --password password
node "$here/sdk_features_test.js" "$SERVER_PORT"
stop_server
