// cluster/cluster_tool.h: kvexec-cluster, the operator's view of a
// cluster kept in etcd: its command line, and `status` as a report built
// from what etcd holds (cluster_state.h's ClusterView) and printed as a
// table or as JSON (what tools/cluster-run waits on).
//
// Pure functions and plain values; safe from any thread. main.cc does the
// one read from etcd.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"

namespace kvexec::cluster {

struct ClusterToolOptions {
    std::string etcdUrl;
    std::string root = "/kvexec/default";
    std::string command;  // "status"
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
    std::optional<std::uint64_t> appliedRevision;  // its NodeStatus
    std::size_t active = 0;                        // vBuckets the map makes it active for
    std::size_t replica = 0;                       // and replica for
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

StatusReport statusReport(const std::string& root, const ClusterView& view);
// A table for people; replication lag says "n/a (no DCP yet)".
std::string statusText(const StatusReport& report);
// The same as one JSON object (keys as the struct's; lag null).
std::string statusJson(const StatusReport& report);

}  // namespace kvexec::cluster
