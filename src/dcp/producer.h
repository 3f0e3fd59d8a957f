// dcp/producer.h: the active side of one DCP connection. It answers a
// consumer's DCP_CONTROL, DCP_STREAM_REQ, DCP_CLOSE_STREAM,
// DCP_BUFFER_ACKNOWLEDGEMENT and DCP_SEQNO_ACKNOWLEDGED, and turns each
// stream's engine events (Bucket::openReplicationStream) into DCP
// messages, within the consumer's flow-control window.
//
// Sans I/O: the producer appends what it sends to its own output buffer
// and calls `wakeWriter` when that buffer goes from empty to non-empty;
// the connection then takes the bytes (takeOutput) on its own thread.
//
// Flow control: with a buffer size (DCP_CONTROL connection_buffer_size),
// the bytes sent and not yet acknowledged stay within it. A stream that
// reaches the limit closes its engine stream (the engine buffers nothing
// for a slow consumer) and reopens it from its last sent seqno once
// acknowledgements free room: it resumes from disk if it fell behind
// memory. So a slow consumer bounds the producer's memory.
//
// A stream ends with DCP_STREAM_END when the engine cannot serve it: its
// vBucket is no longer active here (StateChanged), or its backfill could
// not read the disk (BackfillFailed, as kv_engine says). The consumer then
// asks for it again.
//
// Liveness: with DCP_CONTROL enable_noop true, tick() (the connection calls
// it about every second) sends DCP_NOOP once per set_noop_interval seconds
// (default 5) and says the connection is dead when a noop went a whole
// interval unanswered.
//
// Expirations: a deletion that a document's expiry made goes as
// DCP_EXPIRATION only to a consumer that sent DCP_CONTROL
// enable_expiry_opcode true; any other gets it as DCP_DELETION. (Couchbase
// also wants DCP_OPEN's include-delete-times flag first, as its
// expirations share the v2 deletion's delete time; this producer sends no
// delete times, so the control alone decides.)
//
// Acknowledgements: DCP_SEQNO_ACKNOWLEDGED goes to the bucket as the
// acknowledgement of the node the consumer named (DCP_OPEN's
// consumer_name or DCP_CONTROL consumer_name).
//
// Thread safety: handle() and takeOutput() from the connection's thread;
// the engine's stream tasks call in on NonIO workers. State is guarded by
// one mutex; the bucket is called without it, except to open and close
// engine streams (lock order: the producer's mutex, then the engine's).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "dcp/events.h"
#include "executor/thread_annotations.h"
#include "kvexec/engine/bucket.h"
#include "protocol/binary_request.h"
#include "protocol/dcp_types.h"

namespace kvexec::dcp {

struct ProducerOptions {
    std::string connectionName;  // DCP_OPEN's key
    std::string consumerName;    // from DCP_OPEN's value; DCP_CONTROL may set it
    bool collections = true;     // the connection negotiated collections
    // What of a document travels (DCP_OPEN's IncludeXattrs and NoValue
    // flags, dcp::valueOptionsOf): by default all of it, as replication
    // asks.
    bool xattrs = true;
    BodyMode body = BodyMode::Whole;
    bool deleteTimes = false;  // DCP_OPEN IncludeDeleteTimes
};

class DcpProducer : public std::enable_shared_from_this<DcpProducer> {
  public:
    DcpProducer(engine::Bucket& bucket, ProducerOptions options, std::function<void()> wakeWriter);
    ~DcpProducer();
    DcpProducer(const DcpProducer&) = delete;
    DcpProducer& operator=(const DcpProducer&) = delete;

    // A message from the consumer. Appends its answer, if any, to the
    // output. False when it is malformed or not for a producer: the
    // connection should close.
    bool handle(const protocol::Request& request);
    // A response from the consumer: only the answer to a noop is expected.
    // False for any other (the connection should close).
    bool handleResponse(protocol::Opcode opcode, std::uint32_t opaque);
    // Sends a noop when one is due; false when the consumer left the last
    // one unanswered for a whole interval (the connection should close).
    bool tick(std::chrono::steady_clock::time_point now);
    // Everything sent since the last call.
    std::string takeOutput();
    // Ends every stream; nothing is sent afterwards.
    void close();

    std::size_t unacknowledgedBytes() const;
    std::size_t openStreams() const;

  private:
    struct Stream;
    bool control(const protocol::Request& request);
    bool streamRequest(const protocol::Request& request);
    bool closeStream(const protocol::Request& request);
    bool bufferAcknowledged(const protocol::Request& request);
    bool seqnoAcknowledged(const protocol::Request& request);
    void respond(const protocol::Request& request, protocol::Status status,
                 std::string_view value = {});
    void appendLocked(std::string bytes) REQUIRES(mutex_);
    // Opens (or reopens, after a pause) the stream's engine stream.
    // Opens the stream's engine stream from its last sent seqno; false if
    // the engine refused (the vBucket is no longer active here).
    bool startLocked(Stream& stream) REQUIRES(mutex_);
    // Sends DCP_STREAM_END and forgets the stream.
    void endLocked(std::uint16_t vbucket, protocol::dcp::StreamEndReason reason) REQUIRES(mutex_);
    void onEvent(std::uint16_t vbucket, std::uint64_t generation, const engine::StreamEvent& event);
    bool windowFullLocked() const REQUIRES(mutex_);

    engine::Bucket& bucket_;
    const std::function<void()> wakeWriter_;
    mutable kvexec::detail::Mutex mutex_;
    ProducerOptions options_ GUARDED_BY(mutex_);
    bool syncWrites_ GUARDED_BY(mutex_) = false;
    bool expirations_ GUARDED_BY(mutex_) = false;    // enable_expiry_opcode
    bool markersV2_2_ GUARDED_BY(mutex_) = false;    // max_marker_version 2.2
    std::size_t bufferSize_ GUARDED_BY(mutex_) = 0;  // 0: no flow control
    std::size_t unacked_ GUARDED_BY(mutex_) = 0;
    bool closed_ GUARDED_BY(mutex_) = false;
    bool noopEnabled_ GUARDED_BY(mutex_) = false;
    std::chrono::seconds noopInterval_ GUARDED_BY(mutex_){5};
    std::optional<std::chrono::steady_clock::time_point> noopSentAt_ GUARDED_BY(mutex_);
    bool noopAnswered_ GUARDED_BY(mutex_) = true;
    std::string output_ GUARDED_BY(mutex_);
    std::map<std::uint16_t, std::unique_ptr<Stream>> streams_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::dcp
