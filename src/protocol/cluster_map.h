// protocol/cluster_map.h: the JSON documents a Couchbase client bootstraps
// from without a cluster manager: the cluster map (GET_CLUSTER_CONFIG and
// NOT_MY_VBUCKET bodies) and the error map (GET_ERROR_MAP).
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvexec::protocol {

struct ClusterMapInfo {
    std::string bucket = "default";
    std::string host;  // the address the client connected to
    std::uint16_t kvPort = 0;
    std::uint16_t mgmtPort = 0;     // the REST endpoint ("mgmt" service); 0: none
    std::string manifestUid = "0";  // hex, as the manifest writes it
    std::uint16_t vbucketCount = 1024;
    std::uint64_t revision = 1;
};

// One node, every vBucket active on it, CRC hashing, no replicas, and the
// bucket capabilities this server has (durableWrite, collections, cccp,
// ...; not xattr, dcp or couchapi).
std::string clusterMapJson(const ClusterMapInfo& info);

// "host:port", with an IPv6 host in brackets.
std::string hostPort(const std::string& host, std::uint16_t port);

// The bucket capabilities this server has, as the cluster map and the
// management endpoint's bucket list them.
std::vector<std::string> bucketCapabilities();

// The error map, in the format of `version` (1 or 2; higher asks get 2).
std::string errorMapJson(std::uint16_t version);

}  // namespace kvexec::protocol
