// server/cluster_manifest.h: the scopes and collections of a cluster, kept
// alike on every node. The manifest lives in etcd (cluster/membership.h's
// <root>/manifest, the engine's manifest_state.h JSON); a REST request for
// a change, on any node, edits it there with a compare-and-swap, and every
// node adopts what etcd holds (ClusterNode, through Bucket::adoptManifest),
// so a collection has one id on every node, and an id is never handed out
// twice, whichever node was asked.
//
// - The first change seeds etcd with this node's own manifest (the key is
//   written only if still absent), so a cluster formed over a node that
//   had collections keeps them.
// - A change returns once every registered node says (in its status) it
//   holds the new manifest, or after kSpreadWait: a client that goes on to
//   use the collection on another node finds it there. The change is made
//   either way (etcd holds it); a node that was cut off adopts it when it
//   is back.
// - Two nodes changing at once: one CAS wins, the other reads again and
//   decides afresh (a second "create c" then gets CollectionExists).
//
// Thread safety: change() from the management thread (it blocks on etcd
// and on the nodes); observe() and close() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <string>

#include "cluster/etcd_client.h"
#include "cluster/membership.h"
#include "executor/thread_annotations.h"
#include "kvexec/engine/bucket.h"

namespace kvexec::server {

class ClusterManifest {
  public:
    static constexpr std::chrono::milliseconds kSpreadWait{5'000};

    ClusterManifest(cluster::EtcdEndpoint etcd, std::string root, engine::Bucket& bucket);

    // Applies `edit` to the cluster's manifest. NotReady (with why) if etcd
    // cannot be reached, or other changes kept winning the CAS;
    // StorageFailure if etcd's manifest does not decode.
    engine::ManifestChange change(const engine::ManifestEdit& edit) EXCLUDES(mutex_);

    // The lowest manifest uid every registered node holds (ClusterState's
    // manifestEverywhere), as the cluster node learns it.
    void observe(std::uint64_t manifestEverywhere) EXCLUDES(mutex_);
    // No more observations come (the node left the cluster): a change in
    // hand stops waiting for the nodes.
    void close() EXCLUDES(mutex_);

  private:
    // One read-decide-CAS round: the change, or nullopt when the CAS lost.
    std::optional<engine::ManifestChange> tryChange(const engine::ManifestEdit& edit);
    void waitUntilEverywhere(std::uint64_t uid) EXCLUDES(mutex_);

    cluster::EtcdClient etcd_;
    const cluster::ClusterKeys keys_;
    engine::Bucket& bucket_;

    detail::Mutex mutex_;
    std::condition_variable observed_;
    std::uint64_t everywhere_ GUARDED_BY(mutex_) = 0;
    bool closed_ GUARDED_BY(mutex_) = false;
};

}  // namespace kvexec::server
