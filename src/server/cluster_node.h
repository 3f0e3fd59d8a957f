// server/cluster_node.h: kvexec-server as a member of a cluster
// (--cluster): runs the node agent (cluster/node_agent.h), gives the
// bucket the cluster's collections manifest and flushes (cluster_admin.h)
// and the vBucket states of each map, and keeps the config clients get
// (its BucketCluster's config) in step with it, and points this node's
// DCP consumers (replication/replication_client.h) at the actives of its
// replica vBuckets. Its status in etcd says how many replica vBuckets the
// applied map gives it, how many of their streams are open, and the high
// seqno of every vBucket it holds (kvexec-cluster computes the lag), the
// uid of the manifest it holds and the count of flushes it carried out.
//
// Thread safety: built and destroyed on the main thread (Server::run).
// Everything else runs on the agent's thread, one callback at a time: the
// front ends never wait for etcd or for the bucket's state file, they only
// read the config holder.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/node_agent.h"
#include "server/cluster_admin.h"
#include "server/replication/replication_client.h"
#include "server/server_context.h"

namespace kvexec::server {

// The config clients get from a cluster state: the map's nodes whose
// address is known, this one (`self`) flagged, and the chains as indexes
// into them (a node without an address is left out and its slots are -1).
// Before the first map: this node alone, revision 0. Pure.
std::shared_ptr<const ClusterTopology> topologyOf(const cluster::ClusterState& state,
                                                  const std::string& self,
                                                  const cluster::NodeAddress& selfAddress);

class ClusterNode {
  public:
    // Joins `served`'s cluster (under clusterRoot(served.name) in the etcd
    // of context.config's --cluster, as --node with --replicas) with this
    // node's bound ports; throws cluster::EtcdError if etcd cannot be
    // reached. The bucket must have warmed up; one ClusterNode per bucket. With
    // `peerTls` (--cluster-tls-ca; it must outlive the node), replicas
    // stream from the peers' TLS ports.
    ClusterNode(ServerContext& context, const ServedBucket& served,
                const TlsClientContext* peerTls);
    // Leaves the cluster (the lease is revoked, so the others remap at
    // once); no callback runs afterwards.
    ~ClusterNode();
    ClusterNode(const ClusterNode&) = delete;
    ClusterNode& operator=(const ClusterNode&) = delete;

  private:
    cluster::NodeAddress address() const;
    // The agent's callbacks (its thread).
    bool apply(const cluster::ClusterState& state);
    // Makes the bucket hold the cluster's manifest; false if it refused.
    bool adoptManifest(const cluster::ClusterState& state);
    void reportManifestOnce(const std::string& manifest, const std::string& why);
    // Flushes the vBuckets it leads once for each rise of the flush count.
    void carryOutFlushes(const cluster::ClusterState& state);
    void stopActing(const std::string& why);
    std::optional<cluster::ReplicationStatus> replicationStatus();
    // The seqno published for a vBucket the node holds: an active's high
    // seqno, a replica's whole seqno; nullopt if the bucket has none.
    std::optional<engine::Seqno> publishedSeqno(engine::Vbid vbid, bool active) const;
    // Sets the states that differ from the bucket's; false if the bucket
    // refused (logged; the agent delivers the state again later).
    bool applyStates(const std::vector<cluster::VBucketChange>& changes);
    // Pushes the newest map applied here and everywhere, if not yet pushed.
    void pushAppliedMap(std::shared_ptr<const ClusterTopology> topology,
                        std::uint64_t appliedEverywhere);
    // A stream from each replica vBucket's active; those of vBuckets that
    // are no longer replicas here close.
    void updateReplication(const std::vector<cluster::VBucketChange>& changes,
                           const cluster::ClusterState& state);

    engine::Bucket& bucket() const { return *served_.bucket; }
    BucketCluster& bucketCluster() const { return *served_.cluster; }

    ServerContext& context_;
    const ServedBucket& served_;
    std::unique_ptr<ReplicationClient> replication_;
    std::unique_ptr<cluster::NodeAgent> agent_;
    // The agent's callbacks', one at a time (the agent serializes them):
    std::size_t replicaVBuckets_ = 0;  // in the applied map
    // Each replica vBucket's active in the applied map, and the active its
    // stream has been open from (past the failover-log check, so its
    // history is that active's). A replica's seqno is published only then:
    // before, a copy that diverged (and will roll back) could look ahead.
    std::map<engine::Vbid, std::string> activeOf_;
    std::map<engine::Vbid, std::string> streamedFrom_;
    // Maps applied here and not pushed to clients yet, by revision (at most
    // kMaxUnpushed: a node that never applies them holds none back for
    // ever); and the last revision pushed.
    static constexpr std::size_t kMaxUnpushed = 64;
    std::map<std::uint64_t, std::shared_ptr<const ClusterTopology>> unpushed_;
    std::uint64_t pushedRevision_ = 0;
    std::string reportedManifest_;  // not adopted, and logged
    bool flushesSeen_ = false;      // a state's flush count was read
    std::uint64_t flushTried_ = 0;  // the cluster's flushes tried here
    std::uint64_t flushed_ = 0;     // and carried out in full
};

}  // namespace kvexec::server
