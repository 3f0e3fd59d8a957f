// server/cluster_config.h: the cluster's topology as clients get it, in
// GET_CLUSTER_CONFIG and NOT_MY_VBUCKET bodies (protocol/cluster_map.h):
// the nodes in serverList order and each vBucket's chain as indexes into
// them. Set by the cluster node (cluster_node.h) whenever the map or the
// membership changes; read by every connection.
//
// Thread safety: ClusterConfigHolder may be read and set from any thread;
// what it hands out is immutable (a new topology replaces the old one, and
// a reader keeps the one it got for as long as it holds it).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "executor/thread_annotations.h"
#include "protocol/cluster_map.h"

namespace kvexec::server {

struct ClusterTopology {
    std::vector<protocol::ClusterMapNode> nodes;  // serverList order; this node flagged
    // One chain per vBucket, indexes into `nodes`, -1 where there is no
    // node; empty until the cluster has a map (every vBucket on nodes[0]).
    std::vector<std::vector<int>> chains;
    std::uint32_t numReplicas = 0;
    // The map's revision, the config's "rev"; 0 before the first map, so
    // that clients take the first map over the config they had.
    std::uint64_t revision = 0;
};

class ClusterConfigHolder {
  public:
    // Null while the server is a single node (no --cluster).
    std::shared_ptr<const ClusterTopology> get() const EXCLUDES(mutex_) {
        detail::MutexLock lock(mutex_);
        return topology_;
    }
    void set(std::shared_ptr<const ClusterTopology> topology) EXCLUDES(mutex_) {
        detail::MutexLock lock(mutex_);
        topology_ = std::move(topology);
    }

  private:
    mutable detail::Mutex mutex_;
    std::shared_ptr<const ClusterTopology> topology_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::server
