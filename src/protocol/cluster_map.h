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

// The map's "revEpoch": a client orders maps by (epoch, rev). Fixed: a
// map's revision only grows, whoever leads (cluster/vbucket_map.h).
inline constexpr std::int64_t kRevisionEpoch = 1;

// One node of a cluster as clients reach it.
struct ClusterMapNode {
    std::string host;
    std::uint16_t kvPort = 0;
    std::uint16_t mgmtPort = 0;     // the REST endpoint ("mgmt" service); 0: none
    bool thisNode = false;          // the node that answers
    std::uint16_t tlsPort = 0;      // the data port over TLS ("kvSSL" service); 0: none
    std::uint16_t mgmtTlsPort = 0;  // the REST endpoint over HTTPS ("mgmtSSL"); 0: none
};

struct ClusterMapInfo {
    std::string bucket = "default";
    // The one node when `nodes` is empty.
    std::string host;  // the address the client connected to
    std::uint16_t kvPort = 0;
    std::uint16_t mgmtPort = 0;     // the REST endpoint ("mgmt" service); 0: none
    std::uint16_t tlsPort = 0;      // the data port over TLS ("kvSSL" service); 0: none
    std::uint16_t mgmtTlsPort = 0;  // the REST endpoint over HTTPS ("mgmtSSL"); 0: none
    std::string manifestUid = "0";  // hex, as the manifest writes it
    std::uint16_t vbucketCount = 1024;
    std::uint64_t revision = 1;  // "rev": clients take a map only if it is newer
    // A cluster: its nodes, in serverList order; empty: the one node above.
    std::vector<ClusterMapNode> nodes;
    // One chain per vBucket (vbucketCount of them), each 1 + numReplicas
    // indexes into `nodes`, the active first, -1 where there is no node;
    // empty: every vBucket active on node 0, no replicas.
    std::vector<std::vector<int>> chains;
    std::uint32_t numReplicas = 0;
};

// The nodes, the vBucket map (CRC hashing) with its replicas, and the
// bucket capabilities this server has (durableWrite, collections, cccp,
// ...; not xattr, dcp or couchapi). `nodesExt` lists the nodes in
// serverList order, since clients index it with the vBucket map.
std::string clusterMapJson(const ClusterMapInfo& info);

// "host:port", with an IPv6 host in brackets.
std::string hostPort(const std::string& host, std::uint16_t port);

// The bucket capabilities this server has, as the cluster map and the
// management endpoint's bucket list them.
std::vector<std::string> bucketCapabilities();

// The error map, in the format of `version` (1 or 2; higher asks get 2).
std::string errorMapJson(std::uint16_t version);

}  // namespace kvexec::protocol
