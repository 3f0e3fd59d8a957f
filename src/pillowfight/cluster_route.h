// pillowfight/cluster_route.h: where each vBucket's operations go, read
// from a cluster map (GET_CLUSTER_CONFIG's body): the servers of
// vBucketServerMap.serverList and, per vBucket, the index of its active
// (the first of its vBucketMap chain). A one-node map routes everything to
// its one server. Replicas are not used: the load reads and writes actives.
// The map's "rev" orders maps: a client takes one only if it is newer than
// the one it routes by (a NOT_MY_VBUCKET answer carries the node's map).
//
// A value type; parsing is a pure function. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvexec::pillowfight {

struct ClusterRoute {
    std::vector<std::string> servers;  // "host:port", serverList order
    std::vector<int> activeOf;         // per vBucket: an index into servers, -1 if none
    std::uint64_t revision = 0;        // the map's "rev"; 0 if it has none

    std::uint16_t vbucketCount() const { return static_cast<std::uint16_t>(activeOf.size()); }
    bool operator==(const ClusterRoute&) const = default;
};

// nullopt when the JSON has no usable vBucketServerMap: no vBucketMap, more
// than 65535 vBuckets, or a chain naming a server the list does not have.
std::optional<ClusterRoute> routeOf(std::string_view clusterMap);

// The vBucket count of a cluster map: routeOf(...)->vbucketCount().
std::optional<std::uint16_t> vbucketCountOf(std::string_view clusterMap);

}  // namespace kvexec::pillowfight
