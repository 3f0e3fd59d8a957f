#include "protocol/cluster_map.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "protocol/binary_types.h"

namespace kvexec::protocol {
std::string hostPort(const std::string& host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::vector<std::string> bucketCapabilities() {
    // What this node serves, nothing more: the SDKs act on these (views for
    // couchapi; transactions commit a staged insert by reviving its
    // tombstone only with subdoc.ReviveDocument), and there is no views or
    // XDCR here.
    return {"collections",
            "durableWrite",
            "cbhello",
            "touch",
            "cccp",
            "nodesExt",
            "xattr",
            "tombstonedUserXAttrs",
            "subdoc.AccessDeleted",
            "subdoc.CreateAsDeleted",
            "subdoc.ReplaceBodyWithXattr",
            "subdoc.DocumentMacroSupport",
            "subdoc.ReviveDocument",
            "subdoc.ReplicaRead",
            "subdoc.BinaryXattr",
            "rangeScan"};
}

namespace {

using nlohmann::json;

std::vector<ClusterMapNode> nodesOf(const ClusterMapInfo& info) {
    if (!info.nodes.empty()) {
        return info.nodes;
    }
    return {ClusterMapNode{info.host, info.kvPort, info.mgmtPort, true, info.tlsPort,
                           info.mgmtTlsPort}};
}

json vbucketMapOf(const ClusterMapInfo& info) {
    if (info.chains.empty()) {
        json map = json::array();
        for (std::uint32_t vb = 0; vb < info.vbucketCount; ++vb) {
            map.push_back(json::array({0}));
        }
        return map;
    }
    return info.chains;
}

// The legacy entry: clients only read its host. Without a REST endpoint it
// names Couchbase's usual one.
json legacyNode(const ClusterMapNode& node) {
    const std::uint16_t restPort = node.mgmtPort != 0 ? node.mgmtPort : 8091;
    return {{"hostname", hostPort(node.host, restPort)}, {"ports", {{"direct", node.kvPort}}}};
}

json extendedNode(const ClusterMapNode& node) {
    // The SDKs find the management (REST) endpoint through "mgmt"; a map
    // without it tells them there is none.
    json services = {{"kv", node.kvPort}};
    if (node.mgmtPort != 0) {
        services["mgmt"] = node.mgmtPort;
    }
    if (node.tlsPort != 0) {
        services["kvSSL"] = node.tlsPort;  // where TLS clients (couchbases://) connect
    }
    if (node.mgmtTlsPort != 0) {
        services["mgmtSSL"] = node.mgmtTlsPort;  // and where they manage buckets
    }
    json entry = {{"services", std::move(services)}, {"hostname", node.host}};
    if (node.thisNode) {
        entry["thisNode"] = true;
    }
    return entry;
}

}  // namespace

std::string clusterMapJson(const ClusterMapInfo& info) {
    json legacy = json::array();
    json extended = json::array();
    json serverList = json::array();
    for (const ClusterMapNode& node : nodesOf(info)) {
        legacy.push_back(legacyNode(node));
        extended.push_back(extendedNode(node));
        serverList.push_back(hostPort(node.host, node.kvPort));
    }
    std::string ddocs = "/pools/default/buckets/";
    ddocs += info.bucket;
    ddocs += "/ddocs";
    std::string uuid = "kvexec-";
    uuid += info.bucket;
    json map = {
        {"rev", info.revision},
        {"revEpoch", kRevisionEpoch},
        {"name", info.bucket},
        {"uuid", std::move(uuid)},
        {"bucketType", "membase"},
        {"nodeLocator", "vbucket"},
        {"collectionsManifestUid", info.manifestUid},
        {"ddocs", {{"uri", std::move(ddocs)}}},
        {"nodes", std::move(legacy)},
        {"nodesExt", std::move(extended)},
        {"vBucketServerMap",
         {{"hashAlgorithm", "CRC"},
          {"numReplicas", info.chains.empty() ? 0 : info.numReplicas},
          {"serverList", std::move(serverList)},
          {"vBucketMap", vbucketMapOf(info)}}},
        {"bucketCapabilitiesVer", ""},
        {"bucketCapabilities", bucketCapabilities()},
        {"clusterCapabilitiesVer", json::array({1, 0})},
        {"clusterCapabilities", json::object()},
    };
    return map.dump();
}

namespace {

struct ErrorEntry {
    Status status;
    const char* name;
    std::vector<const char*> attrs;
};

const std::vector<ErrorEntry>& errorEntries() {
    static const std::vector<ErrorEntry> entries = {
        {Status::Success, "SUCCESS", {"success"}},
        {Status::KeyNotFound, "KEY_ENOENT", {"item-only"}},
        {Status::KeyExists, "KEY_EEXISTS", {"item-only"}},
        {Status::ValueTooLarge, "E2BIG", {"item-only", "invalid-input"}},
        {Status::InvalidArguments, "EINVAL", {"invalid-input"}},
        {Status::NotStored, "NOT_STORED", {"item-only"}},
        {Status::NonNumeric, "DELTA_BADVAL", {"item-only", "invalid-input"}},
        {Status::NotMyVbucket, "NOT_MY_VBUCKET", {"fetch-config", "invalid-input"}},
        {Status::NoBucket, "NO_BUCKET", {"conn-state-invalidated"}},
        {Status::Locked, "LOCKED", {"item-locked", "item-only", "retry-now"}},
        {Status::NotLocked, "NOT_LOCKED", {"item-only"}},
        {Status::AuthStale, "AUTH_STALE", {"conn-state-invalidated", "auth"}},
        {Status::AuthError, "AUTH_ERROR", {"conn-state-invalidated", "auth"}},
        {Status::AuthContinue, "AUTH_CONTINUE", {"conn-state-invalidated", "auth"}},
        {Status::NoAccess, "EACCESS", {"conn-state-invalidated", "auth"}},
        {Status::UnknownCommand, "UNKNOWN_COMMAND", {"support"}},
        {Status::OutOfMemory, "ENOMEM", {"temp"}},
        {Status::NotSupported, "NOT_SUPPORTED", {"support"}},
        {Status::InternalError, "EINTERNAL", {"internal"}},
        {Status::Busy, "EBUSY", {"temp", "retry-now"}},
        {Status::TemporaryFailure, "ETMPFAIL", {"temp", "retry-now"}},
        {Status::UnknownCollection, "UNKNOWN_COLLECTION", {"fetch-config", "item-only"}},
        {Status::UnknownScope, "UNKNOWN_SCOPE", {"fetch-config", "item-only"}},
        {Status::DurabilityInvalidLevel, "DURABILITY_INVALID_LEVEL", {"invalid-input"}},
        {Status::DurabilityImpossible, "DURABILITY_IMPOSSIBLE", {"item-only"}},
        {Status::SyncWriteInProgress, "SYNC_WRITE_IN_PROGRESS", {"item-only", "retry-now"}},
        {Status::SyncWriteAmbiguous, "SYNC_WRITE_AMBIGUOUS", {"item-only"}},
        {Status::SyncWriteReCommitInProgress,
         "SYNC_WRITE_RE_COMMIT_IN_PROGRESS",
         {"item-only", "retry-now"}},
        {Status::RangeScanCancelled, "RANGE_SCAN_CANCELLED", {"success"}},
        {Status::RangeScanMore, "RANGE_SCAN_MORE", {"success"}},
        {Status::RangeScanComplete, "RANGE_SCAN_COMPLETE", {"success"}},
        {Status::VbUuidNotEqual, "VB_UUID_NOT_EQUAL", {"invalid-input"}},
    };
    return entries;
}

}  // namespace

std::string errorMapJson(std::uint16_t version) {
    using nlohmann::json;
    json errors = json::object();
    for (const auto& entry : errorEntries()) {
        char code[8];
        std::snprintf(code, sizeof code, "%x", static_cast<unsigned>(entry.status));
        errors[code] = {{"name", entry.name},
                        {"desc", std::string(statusText(entry.status))},
                        {"attrs", entry.attrs}};
    }
    json map = {{"version", std::clamp<std::uint16_t>(version, 1, 2)},
                {"revision", 1},
                {"errors", std::move(errors)}};
    return map.dump();
}

}  // namespace kvexec::protocol
