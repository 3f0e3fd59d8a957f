// replication/replication_client.h: this node's DCP consumers: one
// connection to each node that is active for some of this node's replica
// vBuckets, opened, authenticated (SASL PLAIN with the node's credentials)
// and kept open: a connection that fails or closes is opened again after
// a short delay, its streams resuming from where the replicas stand.
//
// The connections run on a front end of their own (front_end.h: its loop
// and inbox). setPeers() says which vBuckets to stream from which node (a
// new cluster map); prepared() forwards a replica's high prepared seqno
// (BucketConfig::onReplicaPrepared) to the connection streaming it.
//
// Thread safety: every public member may be called from any thread; the
// connections themselves live on the loop thread. The map from vBucket to
// consumer, which prepared() reads from the engine's threads, is under a
// mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/thread_annotations.h"
#include "kvexec/engine/bucket.h"
#include "server/front_end.h"
#include "server/server_context.h"

namespace kvexec::dcp {
class DcpConsumer;
}  // namespace kvexec::dcp

namespace kvexec::server {

struct ReplicationPeer {
    std::string node;  // its name in the map
    std::string host;
    std::uint16_t port = 0;
    std::vector<engine::Vbid> vbuckets;  // this node's replicas it is active for
    friend bool operator==(const ReplicationPeer&, const ReplicationPeer&) = default;
};

struct ReplicationSettings {
    std::string nodeName;  // this node, as chains name it
    std::string bucket = "default";
    std::optional<std::string> user, password;  // SASL PLAIN towards the peers
    std::size_t bufferSize = std::size_t{10} << 20;
    std::chrono::milliseconds reconnectDelay{500};
};

class ReplicationClient {
  public:
    ReplicationClient(ServerContext& context, engine::Bucket& bucket, ReplicationSettings settings);
    ~ReplicationClient();
    ReplicationClient(const ReplicationClient&) = delete;
    ReplicationClient& operator=(const ReplicationClient&) = delete;

    // Replaces the set of peers: links to peers that left or changed close,
    // new ones open.
    void setPeers(std::vector<ReplicationPeer> peers);
    void prepared(engine::Vbid vbid, engine::Seqno seqno);
    // Streams open now, over all peers (cluster-run waits for all of them).
    std::size_t openStreams() const;
    // The vBuckets whose stream is open now.
    std::vector<engine::Vbid> openStreamVBuckets() const;
    void stop();

    class Link;  // one peer's connection (replication_client.cc)

  private:
    friend class Link;
    void track(const std::vector<engine::Vbid>& vbuckets,
               const std::shared_ptr<dcp::DcpConsumer>& consumer) EXCLUDES(mutex_);
    void untrack(const std::vector<engine::Vbid>& vbuckets, const dcp::DcpConsumer* consumer)
        EXCLUDES(mutex_);

    engine::Bucket& bucket_;
    const ReplicationSettings settings_;
    FrontEnd loop_;
    std::map<std::string, std::shared_ptr<Link>> links_;  // loop thread only
    mutable kvexec::detail::Mutex mutex_;
    std::map<engine::Vbid, std::shared_ptr<dcp::DcpConsumer>> consumers_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::server
