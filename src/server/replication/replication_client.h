// replication/replication_client.h: this node's DCP consumers: one
// connection to each node that is active for some of this node's replica
// vBuckets, opened (over TLS to the peer's TLS port, checking its
// certificate, when the node has --cluster-tls-ca), authenticated (SASL
// PLAIN with the node's credentials) and kept open: a connection that
// fails or closes is opened again after a short delay, its streams
// resuming from where the replicas stand.
//
// The connections run on a front end of their own (front_end.h: its loop
// and inbox). setPeers() says which vBuckets to stream from which node (a
// new cluster map); prepared() forwards a replica's high prepared seqno
// (BucketConfig::onReplicaPrepared) to the connection streaming it.
//
// A rebalance changes which vBuckets come from which node hundreds of
// times: a peer whose address stays keeps its connection, and only the
// streams of the vBuckets that came or went open or close
// (DCP_CLOSE_STREAM), so the others never restart. A message still in
// flight for a vBucket a connection no longer streams, or that this node
// no longer holds as a replica (the map reaches the bucket before the
// connections), is dropped and only that stream ends (dcp/consumer.h):
// the connection breaks only for bytes it cannot make sense of, a change
// the replica refuses, or a silent peer.
//
// Thread safety: every public member may be called from any thread; the
// connections themselves live on the loop thread. The map from vBucket to
// consumer, which prepared() reads from the engine's threads, is under a
// mutex.
#pragma once

#include <atomic>
#include <chrono>
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
#include "server/replication/replication_report.h"
#include "server/server_context.h"
#include "server/tls_context.h"

namespace kvexec::dcp {
class DcpConsumer;
}  // namespace kvexec::dcp

namespace kvexec::server {

struct ReplicationPeer {
    std::string node;  // its name in the map
    std::string host;
    std::uint16_t port = 0;
    std::vector<engine::Vbid> vbuckets;  // this node's replicas it is active for
    std::uint16_t tlsPort = 0;           // 0: it has none
    friend bool operator==(const ReplicationPeer&, const ReplicationPeer&) = default;
};

struct ReplicationSettings {
    std::string nodeName;  // this node, as chains name it
    std::string bucket = "default";
    std::optional<std::string> user, password;  // SASL PLAIN towards the peers
    const TlsClientContext* tls = nullptr;      // non-null: to the peers' TLS ports
    std::size_t bufferSize = std::size_t{10} << 20;
    std::chrono::milliseconds reconnectDelay{500};
    // How long a new connection may take to finish its TLS handshake,
    // HELLO and SASL before it is dropped and made again.
    std::chrono::milliseconds handshakeTimeout{10'000};
};

class ReplicationClient {
  public:
    ReplicationClient(ServerContext& context, engine::Bucket& bucket, ReplicationSettings settings);
    ~ReplicationClient();
    ReplicationClient(const ReplicationClient&) = delete;
    ReplicationClient& operator=(const ReplicationClient&) = delete;

    // Replaces the set of peers: links to peers that left or moved (another
    // host or port) close, new ones open; a peer whose vBuckets alone
    // changed keeps its link, whose streams are updated in place.
    void setPeers(std::vector<ReplicationPeer> peers);
    void prepared(engine::Vbid vbid, engine::Seqno seqno);
    // Streams open now, over all peers (cluster-run waits for all of them).
    std::size_t openStreams() const;
    // The vBuckets whose stream is open now.
    std::vector<engine::Vbid> openStreamVBuckets() const;
    ReplicationCounters counters() const;
    ReplicationReport report() const EXCLUDES(mutex_);
    void stop();

    class Link;  // one peer's connection (replication_client.cc)

  private:
    friend class Link;
    void track(const std::vector<engine::Vbid>& vbuckets,
               const std::shared_ptr<dcp::DcpConsumer>& consumer) EXCLUDES(mutex_);
    void untrack(const std::vector<engine::Vbid>& vbuckets, const dcp::DcpConsumer* consumer)
        EXCLUDES(mutex_);
    void broke(const std::string& why) EXCLUDES(mutex_);

    engine::Bucket& bucket_;
    const ReplicationSettings settings_;
    FrontEnd loop_;
    std::map<std::string, std::shared_ptr<Link>> links_;  // loop thread only
    mutable kvexec::detail::Mutex mutex_;
    std::map<engine::Vbid, std::shared_ptr<dcp::DcpConsumer>> consumers_ GUARDED_BY(mutex_);
    std::size_t peers_ GUARDED_BY(mutex_) = 0;
    std::string lastBreak_ GUARDED_BY(mutex_);
    std::atomic<std::uint64_t> connections_{0};
    std::atomic<std::uint64_t> breaks_{0};
    std::atomic<std::uint64_t> streamRequests_{0};
    std::atomic<std::uint64_t> streamsClosed_{0};
};

}  // namespace kvexec::server
