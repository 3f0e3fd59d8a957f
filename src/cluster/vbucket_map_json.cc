// The JSON form of VBucketMap (vbucket_map.h): encoding, and decoding that
// trusts nothing, since the text comes from etcd and whoever wrote there.
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cluster/vbucket_map.h"

namespace kvexec::cluster {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(std::string_view what) {
    std::string message = "vBucket map JSON: ";
    message += what;
    throw std::invalid_argument(message);
}

const json& field(const json& object, const char* name) {
    const auto found = object.find(name);
    if (found == object.end()) {
        std::string what = "missing \"";
        what += name;
        what += '"';
        malformed(what);
    }
    return *found;
}

std::uint64_t unsignedField(const json& object, const char* name) {
    const json& value = field(object, name);
    if (!value.is_number_unsigned()) {
        std::string what = "\"";
        what += name;
        what += "\" is not a non-negative integer";
        malformed(what);
    }
    return value.get<std::uint64_t>();
}

std::vector<std::string> decodeNodes(const json& object) {
    const json& nodes = field(object, "nodes");
    if (!nodes.is_array() || nodes.empty()) {
        malformed("\"nodes\" is not a non-empty array");
    }
    std::vector<std::string> names;
    for (const json& node : nodes) {
        if (!node.is_string() || node.get_ref<const std::string&>().empty()) {
            malformed("a node name is not a non-empty string");
        }
        names.push_back(node.get<std::string>());
    }
    // Strictly increasing: sorted, and no name twice.
    if (std::adjacent_find(names.begin(), names.end(), std::greater_equal<>()) != names.end()) {
        malformed("\"nodes\" is not sorted and unique");
    }
    return names;
}

std::vector<int> decodeChain(const json& chain, std::size_t nodeCount, std::uint32_t replicas) {
    if (!chain.is_array() || chain.size() != 1 + replicas) {
        malformed("a chain is not an array of 1 + numReplicas entries");
    }
    std::vector<int> indexes;
    for (const json& entry : chain) {
        if (!entry.is_number_integer()) {
            malformed("a chain entry is not an integer");
        }
        const std::int64_t index = entry.get<std::int64_t>();
        if (index < kNoNode || index >= static_cast<std::int64_t>(nodeCount)) {
            malformed("a chain entry is not a node index or -1");
        }
        if (index != kNoNode && std::count(indexes.begin(), indexes.end(), index) != 0) {
            malformed("a chain names a node twice");
        }
        indexes.push_back(static_cast<int>(index));
    }
    return indexes;
}

// One positive lease per node, or none recorded.
std::vector<std::int64_t> decodeLeases(const json& document, std::size_t nodeCount) {
    std::vector<std::int64_t> leases;
    const auto found = document.find("leases");
    if (found == document.end()) {
        return leases;
    }
    if (!found->is_array() || found->size() != nodeCount) {
        malformed("\"leases\" is not an array of one entry per node");
    }
    for (const json& lease : *found) {
        if (!lease.is_number_integer() || lease.get<std::int64_t>() <= 0) {
            malformed("a lease is not a positive integer");
        }
        leases.push_back(lease.get<std::int64_t>());
    }
    return leases;
}

// The moves in flight, checked against the chains they go with.
void decodeMoves(const json& document, VBucketMap& map) {
    if (const auto found = document.find("incoming"); found != document.end()) {
        if (!found->is_array() || found->size() != map.chains.size()) {
            malformed("\"incoming\" is not an array of one entry per chain");
        }
        for (std::size_t vb = 0; vb < map.chains.size(); ++vb) {
            const json& nodes = (*found)[vb];
            std::vector<int> indexes;
            for (const json& entry : nodes.is_array() ? nodes : json::array({json("bad")})) {
                const bool inRange =
                    entry.is_number_integer() && entry.get<std::int64_t>() >= 0 &&
                    entry.get<std::int64_t>() < static_cast<std::int64_t>(map.nodes.size());
                const int index = inRange ? entry.get<int>() : kNoNode;
                const auto& chain = map.chains[vb];
                if (!inRange || std::count(chain.begin(), chain.end(), index) != 0 ||
                    std::count(indexes.begin(), indexes.end(), index) != 0) {
                    malformed("an incoming entry is not a node index outside its chain");
                }
                indexes.push_back(index);
            }
            map.incoming.push_back(std::move(indexes));
        }
    }
    if (const auto found = document.find("takeoverSince"); found != document.end()) {
        if (!found->is_array() || found->size() != map.chains.size()) {
            malformed("\"takeoverSince\" is not an array of one entry per chain");
        }
        for (const json& since : *found) {
            if (!since.is_number_unsigned()) {
                malformed("a takeoverSince entry is not a non-negative integer");
            }
            map.takeoverSince.push_back(since.get<std::uint64_t>());
        }
    }
}

}  // namespace

std::string encodeVBucketMap(const VBucketMap& map) {
    json document = {{"revision", map.revision},
                     {"numReplicas", map.numReplicas},
                     {"nodes", map.nodes},
                     {"chains", map.chains}};
    if (!map.leases.empty()) {
        document["leases"] = map.leases;
    }
    if (hasMoves(map)) {
        VBucketMap normalized = map;
        normalizeMoves(normalized);
        document["incoming"] = normalized.incoming;
        document["takeoverSince"] = normalized.takeoverSince;
    }
    return document.dump();
}

VBucketMap decodeVBucketMap(std::string_view text) {
    const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) {
        malformed("not JSON");
    }
    if (!document.is_object()) {
        malformed("not an object");
    }
    VBucketMap map;
    map.revision = unsignedField(document, "revision");
    const std::uint64_t replicas = unsignedField(document, "numReplicas");
    if (replicas > kMaxReplicas) {
        malformed("\"numReplicas\" is above 3");
    }
    map.numReplicas = static_cast<std::uint32_t>(replicas);
    map.nodes = decodeNodes(document);
    map.leases = decodeLeases(document, map.nodes.size());
    const json& chains = field(document, "chains");
    if (!chains.is_array() || chains.empty() ||
        chains.size() > std::numeric_limits<std::uint16_t>::max()) {
        malformed("\"chains\" is not an array of 1 to 65535 chains");
    }
    for (const json& chain : chains) {
        map.chains.push_back(decodeChain(chain, map.nodes.size(), map.numReplicas));
    }
    decodeMoves(document, map);
    normalizeMoves(map);
    return map;
}

}  // namespace kvexec::cluster
