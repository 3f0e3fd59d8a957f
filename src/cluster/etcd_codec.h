// cluster/etcd_codec.h: the JSON that etcd 3.4's gRPC gateway takes and
// gives (Documentation/dev-guide/api_grpc_gateway.md): requests built from
// values, replies read back into values. Keys and values travel base64;
// int64 fields come back as strings, and fields at their default (0, false,
// empty) are left out.
//
// Pure functions, no I/O; safe from any thread. Readers never trust the
// text: anything malformed throws EtcdError saying what, never anything
// else (nlohmann's own exceptions do not escape).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/etcd_types.h"

namespace kvexec::cluster::etcd_codec {

using nlohmann::json;

// The end of the key range holding every key that starts with `prefix`
// (etcd's GetPrefixRangeEnd): the prefix with its last byte below 0xff
// incremented and what follows dropped; "\0" (every key) when there is no
// such byte.
std::string prefixEnd(std::string_view prefix);

json rangeRequest(std::string_view key, std::string_view rangeEnd = {});
json putRequest(std::string_view key, std::string_view value, std::int64_t lease);
json deleteRequest(std::string_view key);
// A txn: put if `key`'s mod revision is `expectedModRevision` (0: the key
// is absent); otherwise read the key, so that the caller learns why.
json casPutRequest(std::string_view key, std::string_view value, std::int64_t expectedModRevision,
                   std::int64_t lease);
// A txn: put if every compare holds (each key's mod revision as given);
// otherwise read `key`, as casPutRequest does.
json fencedPutRequest(std::string_view key, std::string_view value,
                      const std::vector<ModRevisionCompare>& compares, std::int64_t lease);
json leaseGrantRequest(std::int64_t ttlSeconds);
json leaseRequest(std::int64_t leaseId);  // keepalive and revoke
json watchCreateRequest(std::string_view key, std::string_view rangeEnd,
                        std::int64_t startRevision);

// Parses a reply body; throws EtcdError if it is not a JSON object.
json parseReply(std::string_view body);
// etcd's message from an error reply ({"error": ..., "message": ...}), or
// the body itself, cut short, when there is none.
std::string errorMessage(std::string_view body);

std::vector<KeyValue> readRange(const json& reply);
std::int64_t readHeaderRevision(const json& reply);
std::int64_t readDeleted(const json& reply);
CasResult readCasPut(const json& reply);
std::int64_t readLeaseGrant(const json& reply);  // the lease id
// The remaining TTL in seconds; 0 when the lease has expired or never was.
std::int64_t readKeepAlive(const json& reply);

// One message of a watch stream (one line of the gateway's output).
struct WatchMessage {
    bool created = false;
    bool canceled = false;
    std::string cancelReason;
    std::int64_t compactRevision = 0;  // > 0: the asked revision was compacted
    std::int64_t headerRevision = 0;
    std::vector<WatchEvent> events;
};
WatchMessage readWatchMessage(std::string_view line);

}  // namespace kvexec::cluster::etcd_codec
