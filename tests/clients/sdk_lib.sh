# sdk_lib.sh: sourced by the Couchbase SDK tests. ensure_sdk installs the
# SDK pinned in package.json (package-lock.json, `npm ci`) when it is missing
# or another version is installed; npm's cache serves it offline.
ensure_sdk() {
    local here="$1"
    for tool in node npm; do
        command -v "$tool" >/dev/null || { echo "sdk: $tool not found (tools/install-deps)" >&2; return 1; }
    done
    local pinned installed
    pinned="$(node -p "require('$here/package.json').dependencies.couchbase")"
    installed="$(node -p "require('$here/node_modules/couchbase/package.json').version" 2>/dev/null || true)"
    if [ "$installed" != "$pinned" ]; then
        echo "sdk: installing couchbase $pinned (npm ci)"
        (cd "$here" && npm ci --prefer-offline --no-audit --no-fund >/dev/null) ||
            { echo "sdk: npm ci failed" >&2; return 1; }
    fi
}

# sdk_prepare HERE: the SDK installed, $data a fresh data directory, and at
# exit the server (server_lib.sh) killed and $data removed.
sdk_prepare() {
    ensure_sdk "$1"
    data="$(mktemp -d)"
    trap 'kill_server; rm -rf "$data"' EXIT
}
