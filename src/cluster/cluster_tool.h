// cluster/cluster_tool.h: kvexec-cluster, the operator's view of a
// cluster kept in etcd: its command line, and `status` as a report built
// from what etcd holds (cluster_state.h's ClusterView) and printed as a
// table or as JSON (what tools/cluster-run waits on).
//
// Pure functions and plain values; safe from any thread. main.cc does the
// I/O: one read from etcd for `status`; for `failover NODE`, the revoke of
// the node's lease; for `rebalance`, the request and the watch of its
// progress.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"

namespace kvexec::cluster {

struct ClusterToolOptions {
    std::string etcdUrl;
    std::string etcdCa;  // --etcd-ca: with https://, the CA of etcd's certificate
    std::string root = "/kvexec/default";
    std::string command;  // "status", "failover", "rebalance", "remove", "add"
    std::string node;     // the one `failover`, `remove` and `add` name
    bool json = false;
    bool help = false;
};

// Throws std::invalid_argument naming the option for anything it does not
// take (unknown options, a missing --etcd or command, a bad URL).
ClusterToolOptions parseClusterToolArgs(const std::vector<std::string>& args);
std::string clusterToolUsage();

// One node as the report lists it: registered now, or named by the map.
struct NodeReport {
    std::string name;
    std::optional<NodeAddress> address;            // unknown for a node that left
    bool alive = false;                            // registered (its lease lives)
    bool inMap = false;                            // the map names it (maybe with no vBuckets)
    std::optional<std::uint64_t> manifestUid;      // the collections manifest it holds
    std::optional<std::uint64_t> flushed;          // the cluster's flushes it carried out
    std::optional<std::uint64_t> appliedRevision;  // its NodeStatus
    std::size_t active = 0;                        // vBuckets the map makes it active for
    std::size_t replica = 0;                       // and replica for
    // From its status, once it replicates (absent from an older node):
    std::optional<std::size_t> replicaVBucketsApplied;  // in the map it applied
    std::optional<std::size_t> streamsOpen;             // of their DCP streams
    // Seqnos its replica vBuckets are behind their actives; absent while
    // it or one of those actives has published no seqnos.
    std::optional<std::uint64_t> replicationLag;
};

struct StatusReport {
    std::string root;
    std::optional<std::string> leader;
    std::uint64_t mapRevision = 0;  // 0: no map yet
    std::uint32_t numReplicas = 0;
    std::size_t numVBuckets = 0;
    // vBuckets without an active, and replica slots without a node.
    std::size_t vbucketsWithoutActive = 0;
    std::size_t replicaSlotsEmpty = 0;
    std::vector<NodeReport> nodes;  // by name
    std::vector<std::string> problems;
};

// For each vBucket `node` is a replica of in `map`: the high seqno its
// active published minus the one `node` published (0 where the replica is
// ahead, as it is for a moment after a failover), summed. nullopt when
// `node` or one of those actives has no ReplicationStatus.
std::optional<std::uint64_t> replicationLag(const VBucketMap& map, const std::string& node,
                                            const std::map<std::string, NodeStatus>& statuses);

StatusReport statusReport(const std::string& root, const ClusterView& view);
// A table for people: streams open / replica vBuckets applied, and the
// lag in seqnos ("-" where unknown).
std::string statusText(const StatusReport& report);
// The same as one JSON object (keys as the struct's; null where unknown).
std::string statusJson(const StatusReport& report);

// A rebalance's progress: `inPlace` of `total` vBuckets where the target
// puts them, as a bar for people or as one JSON object.
std::string rebalanceProgressText(std::size_t inPlace, std::size_t total);
std::string rebalanceProgressJson(std::size_t inPlace, std::size_t total, std::uint64_t revision);

}  // namespace kvexec::cluster
