// dcp/consumer.h: the replica side of one DCP connection to a producer
// (the node active for some of this node's replica vBuckets). It opens the
// connection (DCP_OPEN, DCP_CONTROLs), asks for a stream per vBucket from
// where the replica stands (its high seqno, on its active's history),
// applies what arrives (Bucket::applyReplicated), acknowledges prepares
// (DCP_SEQNO_ACKNOWLEDGED, from BucketConfig::onReplicaPrepared) and
// returns flow-control credit (DCP_BUFFER_ACKNOWLEDGEMENT).
//
// Sans I/O, as the producer (producer.h): bytes in through receive(),
// bytes out through takeOutput() after `wakeWriter`.
//
// A malformed message, or one the replica refuses (out of order, a commit
// of a prepare it does not hold), makes receive() return false: the
// connection closes and is opened again from where the replica stands. A
// stream request answered with ROLLBACK rolls the replica back
// (Bucket::rollbackReplica) and asks again from where that left it.
//
// Thread safety: receive(), open() from the connection's thread;
// requestStream(), prepared() and takeOutput() from any thread (a rollback
// asks for its stream again from the flusher's). State under one mutex;
// the bucket is called without it. Held by a shared_ptr (a rollback's
// completion holds it weakly).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "executor/thread_annotations.h"
#include "kvexec/engine/bucket.h"
#include "protocol/binary_request.h"
#include "protocol/client_codec.h"

namespace kvexec::dcp {

struct ConsumerOptions {
    std::string connectionName;  // DCP_OPEN's key
    std::string consumerName;    // this node, as the active's chain names it
    std::size_t bufferSize = std::size_t{10} << 20;
    bool collections = true;  // keys carry their collection id (HELLO collections)
    // The producer sends a noop this often (DCP_CONTROL set_noop_interval);
    // a connection silent for two intervals is taken for dead.
    std::chrono::seconds noopInterval{5};
};

class DcpConsumer : public std::enable_shared_from_this<DcpConsumer> {
  public:
    enum class StreamState : std::uint8_t { Requested, Open, RollingBack, Failed, Ended };

    DcpConsumer(engine::Bucket& bucket, ConsumerOptions options, std::function<void()> wakeWriter);

    // Sends DCP_OPEN and the controls.
    void open();
    // Asks for vBucket `vbid`'s stream from the replica's high seqno.
    void requestStream(engine::Vbid vbid);
    // Takes the whole messages at the front of `input`; `consumed` says how
    // many bytes. False: the connection must close (see above).
    bool receive(std::string_view input, std::size_t& consumed);
    std::string takeOutput();
    // The replica's high prepared seqno of `vbid` moved: acknowledge it if
    // this connection streams that vBucket.
    void prepared(engine::Vbid vbid, engine::Seqno seqno);

    std::optional<StreamState> streamState(engine::Vbid vbid) const;
    // Every control was accepted (the connection is usable).
    bool established() const;
    // Called about every second: false when nothing arrived for two noop
    // intervals (the producer or the path to it is gone: reconnect).
    bool tick(std::chrono::steady_clock::time_point now);

  private:
    bool onResponse(const protocol::Response& response);
    bool onRequest(const protocol::Request& request);
    bool onStreamResponse(const protocol::Response& response);
    bool rollBack(engine::Vbid vbid, engine::Seqno to);
    void setStreamState(engine::Vbid vbid, StreamState state);
    void send(std::string bytes);
    void creditLocked(std::size_t bytes) REQUIRES(mutex_);

    engine::Bucket& bucket_;
    const ConsumerOptions options_;
    const std::function<void()> wakeWriter_;
    mutable kvexec::detail::Mutex mutex_;
    std::string output_ GUARDED_BY(mutex_);
    std::size_t controlsPending_ GUARDED_BY(mutex_) = 0;
    bool failed_ GUARDED_BY(mutex_) = false;
    std::size_t uncredited_ GUARDED_BY(mutex_) = 0;  // bytes processed, not yet acknowledged
    std::map<engine::Vbid, StreamState> streams_ GUARDED_BY(mutex_);
    bool heardSinceTick_ GUARDED_BY(mutex_) = false;
    std::optional<std::chrono::steady_clock::time_point> lastHeard_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::dcp
