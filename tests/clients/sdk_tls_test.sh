#!/usr/bin/env bash
# The Couchbase Node.js SDK over TLS (sdk_tls_test.js) against kvexec-server's
# --tls-port and --mgmt-tls-port with SCRAM auth.
# Usage: sdk_tls_test.sh KVEXEC_SERVER
set -euo pipefail
KVEXEC_SERVER="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_lib.sh"
source "$here/sdk_lib.sh"
sdk_prepare "$here"
make_certificate "$data" server
make_certificate "$data" other
start_server --data-dir "$data/db" --sync none --user Administrator --password password \
    --mgmt-port 0 --mgmt-tls-port 0 --tls-port 0 --tls-cert "$data/server.pem" \
    --tls-key "$data/server.key"
node "$here/sdk_tls_test.js" "$SERVER_TLS_PORT" "$data/server.pem" "$data/other.pem"
stop_server
