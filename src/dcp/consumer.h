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
// Streams come and go on a live connection (a rebalance moves vBuckets
// between actives many times): closeStream() ends one (DCP_CLOSE_STREAM)
// and forgets it. Each stream request carries an opaque of its own (a
// generation in the high 16 bits, the vBucket in the low 16), which the
// producer puts on every message of that stream. So a message still in
// flight from a stream this side closed, or replaced by a newer request,
// is recognised and dropped, as is the answer to such a request; and a
// message for a vBucket the replica no longer holds (the map made it
// active or dead here before this connection heard) is dropped and its
// stream closed (marked Failed). Neither breaks the connection: its other
// streams go on.
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
    // Ends vBucket `vbid`'s stream (DCP_CLOSE_STREAM if the producer may
    // hold it) and forgets it: its messages still in flight are dropped,
    // a rollback under way asks for nothing when done. No-op for a
    // vBucket without a stream.
    void closeStream(engine::Vbid vbid);
    // Takes the whole messages at the front of `input`; `consumed` says how
    // many bytes. False: the connection must close (see above).
    bool receive(std::string_view input, std::size_t& consumed);
    std::string takeOutput();
    // The replica's high prepared seqno of `vbid` moved: acknowledge it if
    // this connection streams that vBucket.
    void prepared(engine::Vbid vbid, engine::Seqno seqno);

    // nullopt: never asked for on this connection, or closed.
    std::optional<StreamState> streamState(engine::Vbid vbid) const;
    // Every control was accepted (the connection is usable).
    bool established() const;
    // Called about every second: false when nothing arrived for two noop
    // intervals (the producer or the path to it is gone: reconnect).
    bool tick(std::chrono::steady_clock::time_point now);

  private:
    struct Stream {
        StreamState state = StreamState::Requested;
        std::uint32_t opaque = 0;  // of its request, on all its messages
    };
    bool onResponse(const protocol::Response& response);
    bool onRequest(const protocol::Request& request);
    bool onStreamResponse(const protocol::Response& response);
    bool rollBack(engine::Vbid vbid, std::uint32_t opaque, engine::Seqno to);
    // Asks for the stream; with `rolledBack`, only while the stream of
    // that opaque is still the vBucket's current one, rolling back.
    void askForStream(engine::Vbid vbid, std::optional<std::uint32_t> rolledBack);
    // Whether `opaque` is that of vBucket `vbid`'s current stream, in
    // state `state`: a message or answer for anything else is stale.
    bool isCurrent(engine::Vbid vbid, std::uint32_t opaque, StreamState state) const;
    // Sets the state of the stream with this opaque; false (and nothing
    // set) when it is not the vBucket's current one.
    bool setStreamState(engine::Vbid vbid, std::uint32_t opaque, StreamState state);
    // The replica stopped holding a streamed vBucket: closes the stream
    // on the producer and marks it Failed (asked for again only where the
    // replica holds it again).
    void dropStream(engine::Vbid vbid, std::uint32_t opaque);
    bool closeOnProducerLocked(engine::Vbid vbid, std::uint32_t opaque) REQUIRES(mutex_);
    void send(std::string bytes);
    // Appends to the output; true when the writer must be woken (after
    // the lock is let go).
    bool queueLocked(std::string bytes) REQUIRES(mutex_);
    void creditLocked(std::size_t bytes) REQUIRES(mutex_);

    engine::Bucket& bucket_;
    const ConsumerOptions options_;
    const std::function<void()> wakeWriter_;
    mutable kvexec::detail::Mutex mutex_;
    std::string output_ GUARDED_BY(mutex_);
    std::size_t controlsPending_ GUARDED_BY(mutex_) = 0;
    bool failed_ GUARDED_BY(mutex_) = false;
    std::size_t uncredited_ GUARDED_BY(mutex_) = 0;  // bytes processed, not yet acknowledged
    std::map<engine::Vbid, Stream> streams_ GUARDED_BY(mutex_);
    std::uint16_t generation_ GUARDED_BY(mutex_) = 0;  // of the last stream request
    bool heardSinceTick_ GUARDED_BY(mutex_) = false;
    std::optional<std::chrono::steady_clock::time_point> lastHeard_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::dcp
