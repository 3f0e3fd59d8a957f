#!/usr/bin/env bash
# Two buckets in one kvexec-server with the Couchbase SDK
# (sdk_buckets_test.js), before and after a restart on the same data
# directory; then with --users, as a user given only the second bucket.
# Usage: sdk_buckets_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
args=(--data-dir "$data" --sync none --user Administrator --password password --mgmt-port 0
      --bucket default --bucket travel-sample)
start_server "${args[@]}"
node "$here/sdk_buckets_test.js" "$SERVER_PORT" create
stop_server
start_server "${args[@]}"
node "$here/sdk_buckets_test.js" "$SERVER_PORT" restarted
stop_server
users="$data/users.json"  # removed with $data
echo '{"users": [{"name": "app", "password": "app-pw", "buckets": ["travel-sample"]}]}' > "$users"
start_server "${args[@]}" --users "$users"
KVEXEC_USER=app KVEXEC_PASSWORD=app-pw node "$here/sdk_buckets_test.js" "$SERVER_PORT" confined
stop_server
