// cluster/node_agent.h: one node's life in the cluster, the I/O around
// the decisions of cluster_state.h and election.h. It holds a lease,
// registers the node under it, campaigns whenever no one leads, publishes
// the map while it leads (fenced by its term and the map's revision), and
// tells its owner, in order, every change of the map or the membership.
//
// Threads:
// - the agent thread does everything but renewing the lease: it reads the
//   cluster's keys whenever the watch says something under the root
//   changed (a level-triggered loop: each pass reads the whole root, so a
//   missed or merged event costs nothing), campaigns, publishes, and runs
//   the callbacks;
// - the keep-alive thread renews the lease every third of its TTL on a
//   connection of its own, so that a slow callback or a slow etcd call of
//   the agent thread never lets the lease lapse;
// - the watch's own thread (etcd_watch.h) only marks work for the agent.
//
// The map records the lease each node was registered under (vbucket_map.h):
// a node acts only on a map made for its current lease, and the leader
// fails over the place of a node that joined again under a new one. Each
// status names the membership it was written under; a map that changes
// actives waits for every node's status under the current one.
//
// The node's status key (cluster_state.h's NodeStatus) carries the map
// revision it applied and, from an owner that gives a status source, its
// replication: the agent thread asks the source again every status
// interval and writes the key only when the value changed (every write
// wakes every node's watch).
//
// Callbacks (the status source among them) run one at a time, never after stop() has returned,
// and must not call stop() or destroy the agent. They run on the agent thread, except
// onLeaseLost: when renewals stop getting through, the keep-alive thread fences the node itself
// (onLeaseLost) within 2/3 of the TTL after the last renewal etcd answered was sent, so before
// etcd can let another node take over the node's vBuckets; a state read under that lease is
// never delivered after it. The agent then joins again under a new lease (leaving the old one
// to expire) and delivers the state again; the leader fails its old place over.
//
// Thread safety: the constructor and stop() from the owner's thread; stop()
// is idempotent and the destructor calls it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/election.h"
#include "cluster/etcd_client.h"
#include "cluster/rebalance.h"
#include "executor/thread_annotations.h"

namespace kvexec::cluster {

struct NodeAgentConfig {
    EtcdEndpoint etcd;
    std::string root = "/kvexec/default";  // without a trailing '/'
    std::string name;                      // this node's, unique in the cluster
    NodeAddress address;                   // what its node key says
    std::uint16_t numVBuckets = 1024;
    std::uint32_t numReplicas = 0;  // what this node publishes when it leads
    // etcd rounds a TTL up to its minimum (about 2 s with default timings).
    std::chrono::seconds leaseTtl{5};
    // After a failed etcd call, or a callback that could not apply a state,
    // the agent tries again this much later.
    std::chrono::milliseconds retryInterval{500};
    std::chrono::milliseconds etcdTimeout = EtcdClient::kDefaultTimeout;
    // How often the status source is asked again between passes.
    std::chrono::milliseconds statusInterval{500};
    // The first map waits until the registered nodes have not changed for
    // this long, so that nodes started together all lead vBuckets: one that
    // joins later is given replica slots only (vbucket_map.h).
    std::chrono::milliseconds formationWindow{2000};
    // A map that changes actives (a failover) waits at most this long for
    // every node's status to be written under the membership it is made
    // for, so that the promotion ranks seqnos sampled after the lost node
    // stopped (cluster_state.h's statusesFresh).
    std::chrono::milliseconds freshStatusWait{2000};
    // A rebalance's takeover that pauses its vBucket's clients longer than
    // this cancels the rebalance, undoing it (rebalance.h's TakeoverWatch).
    std::chrono::milliseconds takeoverTimeout{10'000};
};

class NodeAgent {
  public:
    // The node's view changed (map, registered nodes, addresses, leader,
    // the revision applied everywhere).
    // Return true once acted on: the agent then publishes the map's
    // revision as the node's status. False: deliver it again after the
    // retry interval.
    using OnClusterState = std::function<bool(const ClusterState&)>;
    // The lease could not be renewed: the node is no longer a member and
    // must stop acting on the map it had, now (on the keep-alive thread).
    using OnLeaseLost = std::function<void(const std::string& why)>;
    // What the node's status says of its replication and its collections
    // manifest now; asked only after a state was acted on. Must not block
    // for long (it delays the agent).
    struct NodeReport {
        std::optional<ReplicationStatus> replication;
        std::uint64_t manifestUid = 0;  // 0: not said
        std::uint64_t flushed = 0;      // the cluster's flushes carried out
    };
    using StatusSource = std::function<NodeReport()>;

    // Joins at once (grants the lease, registers, opens the watch) and
    // throws EtcdError if etcd cannot be reached or refuses; then starts
    // the threads, whose first pass delivers the first state.
    NodeAgent(NodeAgentConfig config, OnClusterState onClusterState, OnLeaseLost onLeaseLost = {},
              StatusSource statusSource = {});
    ~NodeAgent();
    NodeAgent(const NodeAgent&) = delete;
    NodeAgent& operator=(const NodeAgent&) = delete;

    // Stops the threads (no callback runs once it returns) and revokes the
    // lease, so the node leaves at once (its keys go with the lease) rather
    // than when the TTL runs out. Idempotent.
    void stop() EXCLUDES(mutex_);

    const NodeAgentConfig& config() const { return config_; }

  private:
    // What the agent thread is asked to do, under mutex_.
    struct Pending {
        bool stop = false;
        bool reread = false;                   // something under the root changed
        bool watchEnded = false;               // reopen the watch
        std::optional<std::string> leaseLost;  // why
        std::optional<std::chrono::steady_clock::time_point> retryAt;
        bool refreshStatus = false;  // the status interval passed
    };

    void join();  // agent thread (or the constructor): a lease, the node key
    void openWatch();
    void runAgent() EXCLUDES(mutex_);
    Pending waitForWork() EXCLUDES(mutex_);
    void handle(const Pending& work);
    void leaveAfterLeaseLoss(const std::string& why) EXCLUDES(mutex_);
    void reconcile();  // read the root, campaign, publish, deliver
    bool leads(const ClusterView& view) const;
    void endEarlierTerm(std::int64_t earlierLease) EXCLUDES(mutex_);
    void publishMap(const ClusterView& view);
    bool publish(const ClusterView& view, VBucketMap next);
    void stepRebalance(const ClusterView& view);
    bool formed(const ClusterView& view) EXCLUDES(mutex_);
    bool statusesSettled(const ClusterView& view) EXCLUDES(mutex_);
    void deliver(const ClusterView& view);
    bool actOn(const ClusterState& state) EXCLUDES(callbackMutex_);
    void writeStatus(std::uint64_t mapRevision) EXCLUDES(callbackMutex_);
    void refreshStatus();  // between passes: the status again, if it changed
    void retryLater(const std::string& why) EXCLUDES(mutex_);
    void passNoLaterThan(std::chrono::steady_clock::time_point at) EXCLUDES(mutex_);
    void markReread() EXCLUDES(mutex_);

    void runKeepAlive() EXCLUDES(mutex_);
    // Renews `lease` once; false when it did not get through (and fenced
    // once the lease may be lost).
    bool renew(std::int64_t lease, std::chrono::steady_clock::time_point& lastRenewalSent)
        EXCLUDES(mutex_, callbackMutex_);
    void fence(std::int64_t lease, const std::string& why) EXCLUDES(mutex_, callbackMutex_);

    const NodeAgentConfig config_;
    const ClusterKeys keys_;
    const OnClusterState onClusterState_;
    const OnLeaseLost onLeaseLost_;
    const StatusSource statusSource_;
    EtcdClient etcd_;           // the agent thread's (and the constructor's)
    EtcdClient keepAliveEtcd_;  // the keep-alive thread's

    // The agent thread's alone (the constructor's before it starts).
    std::int64_t sessionLease_ = 0;  // 0: not joined
    std::unique_ptr<ClusterMember> member_;
    std::unique_ptr<EtcdWatch> watch_;
    std::optional<ClusterState> delivered_;
    std::string statusWritten_;  // the last NodeStatus written, encoded; "": none
    std::chrono::steady_clock::time_point nextStatusAt_;
    std::uint64_t highestRevisionSeen_ = 0;
    std::map<std::string, NodeAddress> remembered_;  // addresses of nodes once registered
    std::vector<std::string> formingNodes_;          // registered, while there is no map yet
    std::chrono::steady_clock::time_point formingSince_;
    TakeoverWatch takeovers_{config_.takeoverTimeout};  // while this node leads a rebalance
    std::string membershipSeen_;   // membershipDigest of the view last delivered
    std::string freshWaitDigest_;  // the membership a map that changes actives waits under
    std::chrono::steady_clock::time_point freshWaitSince_;
    std::string lastError_;  // logged once until it changes

    // Held while a callback runs: they run one at a time, and a fence
    // (keep-alive thread) never interleaves with acting on a state. Taken
    // before mutex_, never after.
    detail::Mutex callbackMutex_ ACQUIRED_BEFORE(mutex_);
    std::int64_t fencedLease_ GUARDED_BY(callbackMutex_) = 0;

    detail::Mutex mutex_;
    std::condition_variable workReady_;      // for the agent thread
    std::condition_variable keepAliveWake_;  // for the keep-alive thread
    Pending pending_ GUARDED_BY(mutex_);
    std::int64_t renewedLease_ GUARDED_BY(mutex_) = 0;  // the lease to keep alive; 0: none
    // When the grant of renewedLease_ was sent: its TTL runs from after it.
    std::chrono::steady_clock::time_point leaseGrantSent_ GUARDED_BY(mutex_);
    bool stopping_ GUARDED_BY(mutex_) = false;
    bool stopped_ = false;  // the owner's thread only

    std::thread agentThread_;
    std::thread keepAliveThread_;
};

}  // namespace kvexec::cluster
