#!/usr/bin/env bash
# The Couchbase SDK's distributed transactions against kvexec-server
# (sdk_transactions_test.js): staged inserts in tombstones' xattrs, commit,
# rollback, and concurrent transactions on one document.
# Usage: sdk_transactions_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
start_server --data-dir "$data" --sync none --user Administrator --password password
node "$here/sdk_transactions_test.js" "$SERVER_PORT"
stop_server
