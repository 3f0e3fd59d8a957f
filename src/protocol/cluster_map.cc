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
    // couchapi, xattr paths for xattr), and there is no DCP, views or XDCR
    // over the network here.
    return {"collections", "durableWrite", "cbhello", "touch", "cccp", "nodesExt"};
}

std::string clusterMapJson(const ClusterMapInfo& info) {
    using nlohmann::json;
    json vbucketMap = json::array();
    for (std::uint32_t vb = 0; vb < info.vbucketCount; ++vb) {
        vbucketMap.push_back(json::array({0}));
    }
    const std::string node = hostPort(info.host, info.kvPort);
    // The SDKs find the management (REST) endpoint through "mgmt"; a map
    // without it tells them there is none.
    json services = {{"kv", info.kvPort}};
    if (info.mgmtPort != 0) {
        services["mgmt"] = info.mgmtPort;
    }
    // Without a REST endpoint the legacy "nodes" entry names Couchbase's
    // usual one; clients only read its host.
    const std::uint16_t restPort = info.mgmtPort != 0 ? info.mgmtPort : 8091;
    json map = {
        {"rev", info.revision},
        {"revEpoch", 1},
        {"name", info.bucket},
        {"uuid", "kvexec-" + info.bucket},
        {"bucketType", "membase"},
        {"nodeLocator", "vbucket"},
        {"collectionsManifestUid", info.manifestUid},
        {"ddocs", {{"uri", "/pools/default/buckets/" + info.bucket + "/ddocs"}}},
        {"nodes", json::array({{{"hostname", hostPort(info.host, restPort)},
                                {"ports", {{"direct", info.kvPort}}}}})},
        {"nodesExt",
         json::array(
             {{{"services", std::move(services)}, {"thisNode", true}, {"hostname", info.host}}})},
        {"vBucketServerMap",
         {{"hashAlgorithm", "CRC"},
          {"numReplicas", 0},
          {"serverList", json::array({node})},
          {"vBucketMap", std::move(vbucketMap)}}},
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
