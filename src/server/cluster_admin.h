// server/cluster_admin.h: what a REST request asks of the whole bucket on a
// cluster, rather than of one node: its scopes and collections, and a
// flush. Both are keys in etcd (cluster/membership.h) that every node acts
// on: the cluster node (cluster_node.h) adopts the manifest, and flushes
// the vBuckets it leads when the flush count rises; each says in its status
// how far it got, and the request waits for them all.
//
// Scopes and collections (<root>/manifest, the engine's manifest_state.h
// JSON). A change on any node edits the key with a compare-and-swap, so a
// collection has one id on every node, and an id is never handed out
// twice, whichever node was asked.
// - The first change seeds etcd with this node's own manifest (the key is
//   written only if still absent), so a cluster formed over a node that
//   had collections keeps them.
// - Two nodes changing at once: one CAS wins, the other reads again and
//   decides afresh (a second "create c" then gets CollectionExists).
// - A change returns once every registered node holds it, or after
//   kSpreadWait: the change is made either way (etcd holds it); a node
//   that was cut off adopts it when it is back.
//
// Flush (<root>/flush, a count). A flush raises the count; every node
// flushes the vBuckets it leads (their replicas take the deletions from
// their streams) and says so; the flush succeeds once every registered
// node has, and answers TempFail after kFlushWait (a node hung, or a
// takeover in the way: flushing again is safe). A flush is refused while a
// rebalance runs, since a vBucket handed over mid-flush would keep its
// documents, and while a node the map makes active for some vBucket is
// down (not yet failed over), whose documents would stay (Couchbase too
// flushes only with every node up).
//
// Thread safety: any thread, several at once; change() and flush() block
// on etcd and on the nodes, so never from an event loop (the management
// endpoint's workers call them).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/etcd_client.h"
#include "cluster/membership.h"
#include "executor/thread_annotations.h"
#include "kvexec/engine/bucket.h"
#include "server/cluster_progress.h"

namespace kvexec::server {

class ClusterAdmin {
  public:
    static constexpr std::chrono::milliseconds kSpreadWait{5'000};
    // Below the SDKs' management timeout (20 s in the tests; 75 s default).
    static constexpr std::chrono::milliseconds kFlushWait{15'000};

    ClusterAdmin(cluster::EtcdEndpoint etcd, std::string root, engine::Bucket& bucket);

    // Applies `edit` to the cluster's manifest. NotReady (with why) if etcd
    // cannot be reached, or other changes kept winning the CAS;
    // StorageFailure if etcd's manifest does not decode.
    engine::ManifestChange change(const engine::ManifestEdit& edit);

    // Flushes the bucket on every node: Success once all have; TempFail
    // (with why) if etcd cannot be reached, a rebalance runs, an active's
    // node is down, or not every node has flushed within kFlushWait.
    struct FlushOutcome {
        engine::Status status = engine::Status::Success;
        std::string message;
    };
    FlushOutcome flush() EXCLUDES(mutex_);

    // What the cluster node learned from the nodes' statuses (agent thread).
    void observe(const cluster::ClusterState& state) EXCLUDES(mutex_);
    // No more observations come (the node left the cluster): a request in
    // hand stops waiting for the nodes.
    void close();

  private:
    // One read-decide-CAS round: the change, or nullopt when the CAS lost.
    std::optional<engine::ManifestChange> tryChange(const engine::ManifestEdit& edit);
    // The nodes of activesDown_, comma-separated (empty: none).
    std::string downList() EXCLUDES(mutex_);
    // One read-raise-CAS round: the new count, or nullopt when the CAS lost.
    std::optional<std::uint64_t> tryRaiseFlushCount();

    cluster::EtcdClient etcd_;
    const cluster::ClusterKeys keys_;
    engine::Bucket& bucket_;
    ClusterProgress manifests_;  // the manifest uid every node holds
    ClusterProgress flushes_;    // the flushes every node carried out
    detail::Mutex mutex_;
    std::vector<std::string> activesDown_ GUARDED_BY(mutex_);  // the last state's
};

}  // namespace kvexec::server
