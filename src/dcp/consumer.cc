#include "dcp/consumer.h"

#include <iostream>
#include <utility>

#include "dcp/events.h"
#include "protocol/binary_response.h"
#include "protocol/dcp.h"

namespace kvexec::dcp {
namespace {

namespace wire = protocol::dcp;
using protocol::Opcode;
using protocol::Status;

constexpr std::uint32_t kOpenOpaque = 1;
constexpr std::uint32_t kControlOpaque = 2;
// max_marker_version's own: a producer that refuses it (one from before it)
// sends v1 markers, and the connection goes on without purge seqnos.
constexpr std::uint32_t kMarkerVersionOpaque = 3;
// A stream's messages carry the opaque of its request: a generation
// (1-0xffff, one per request on the connection) in the high 16 bits and
// the vBucket in the low 16, so that a response or message names its
// vBucket and which request of it. So every stream opaque is at least
// this base.
constexpr std::uint32_t kStreamOpaqueBase = 0x10000;

engine::Vbid vbucketOf(std::uint32_t streamOpaque) {
    return streamOpaque & 0xffff;
}

bool isResponseMagic(char first) {
    const auto magic = static_cast<std::uint8_t>(first);
    return magic == 0x81 || magic == 0x18;
}

}  // namespace

DcpConsumer::DcpConsumer(engine::Bucket& bucket, ConsumerOptions options,
                         std::function<void()> wakeWriter)
    : bucket_(bucket), options_(std::move(options)), wakeWriter_(std::move(wakeWriter)) {}

void DcpConsumer::send(std::string bytes) {
    bool wake = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        wake = queueLocked(std::move(bytes));
    }
    if (wake) {
        wakeWriter_();
    }
}

bool DcpConsumer::queueLocked(std::string bytes) {
    const bool wake = output_.empty() && !bytes.empty();
    output_ += bytes;
    return wake;
}

std::string DcpConsumer::takeOutput() {
    kvexec::detail::MutexLock lock(mutex_);
    std::string out;
    out.swap(output_);
    return out;
}

void DcpConsumer::open() {
    std::string bytes;
    // The flag asks the other end to be the producer of this connection;
    // the consumer names itself with DCP_CONTROL consumer_name (DCP_OPEN's
    // value may carry a name only on a consumer's own open).
    // Xattrs are part of the document a replica keeps.
    wire::encodeOpen(
        bytes,
        {kOpenOpaque, wire::kOpenProducer | wire::kOpenIncludeXattrs, options_.connectionName, {}});
    const std::string bufferSize = std::to_string(options_.bufferSize);
    const std::string noopInterval = std::to_string(options_.noopInterval.count());
    const std::pair<std::string_view, std::string_view> controls[] = {
        {"connection_buffer_size", bufferSize},
        {"enable_sync_writes", "true"},
        {"consumer_name", options_.consumerName},
        {"enable_noop", "true"},
        {"set_noop_interval", noopInterval},
        {"enable_expiry_opcode", "true"},  // applied as deletions, kept as expiries
    };
    for (const auto& [key, value] : controls) {
        wire::encodeControl(bytes, {kControlOpaque, key, value});
    }
    // Disk snapshots carry their purge seqno.
    wire::encodeControl(bytes, {kMarkerVersionOpaque, "max_marker_version", "2.2"});
    {
        kvexec::detail::MutexLock lock(mutex_);
        controlsPending_ = 2 + std::size(controls);
    }
    send(std::move(bytes));
}

void DcpConsumer::requestStream(engine::Vbid vbid) {
    askForStream(vbid, std::nullopt);
}

void DcpConsumer::askForStream(engine::Vbid vbid, std::optional<std::uint32_t> rolledBack) {
    // Not a replica (any more): from 0 with no history; the first message
    // is refused (NotMyVbucket), which ends that stream alone.
    const auto point = bucket_.replicaResumePoint(vbid).value_or(engine::StreamStart{});
    wire::StreamRequest request;
    request.vbucket = static_cast<std::uint16_t>(vbid);
    request.start = point.start;
    request.end = ~std::uint64_t{0};
    request.vbucketUuid = point.uuid;
    request.snapStart = point.snapStart;
    request.snapEnd = point.snapEnd;
    bool wake = false;
    {
        // The opaque is chosen, the stream recorded and the request queued
        // under one lock: requests of one vBucket from two threads (the
        // connection's, a rollback's) reach the producer in the order of
        // their generations, so the last one asked is the one it keeps.
        kvexec::detail::MutexLock lock(mutex_);
        if (rolledBack) {
            const auto it = streams_.find(vbid);
            if (it == streams_.end() || it->second.opaque != *rolledBack ||
                it->second.state != StreamState::RollingBack) {
                return;  // closed, or asked for again, while it rolled back
            }
        }
        generation_ = generation_ == 0xffff ? 1 : generation_ + 1;
        request.opaque = (std::uint32_t{generation_} << 16) | request.vbucket;
        streams_[vbid] = {StreamState::Requested, request.opaque};
        std::string bytes;
        wire::encodeStreamRequest(bytes, request);
        wake = queueLocked(std::move(bytes));
    }
    if (wake) {
        wakeWriter_();
    }
}

void DcpConsumer::closeStream(engine::Vbid vbid) {
    bool wake = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        const auto it = streams_.find(vbid);
        if (it == streams_.end()) {
            return;
        }
        // Requested or Open: the producer holds (or is about to hold) the
        // stream. It answers requests in order, so the close reaches it
        // after the request. Failed, Ended, RollingBack: it holds none.
        const auto state = it->second.state;
        if (state == StreamState::Requested || state == StreamState::Open) {
            wake = closeOnProducerLocked(vbid, it->second.opaque);
        }
        streams_.erase(it);
    }
    if (wake) {
        wakeWriter_();
    }
}

bool DcpConsumer::closeOnProducerLocked(engine::Vbid vbid, std::uint32_t opaque) {
    std::string bytes;
    wire::encodeCloseStream(bytes, {static_cast<std::uint16_t>(vbid), opaque});
    return queueLocked(std::move(bytes));
}

void DcpConsumer::dropStream(engine::Vbid vbid, std::uint32_t opaque) {
    bool wake = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        const auto it = streams_.find(vbid);
        if (it == streams_.end() || it->second.opaque != opaque) {
            return;
        }
        if (it->second.state == StreamState::Requested || it->second.state == StreamState::Open) {
            wake = closeOnProducerLocked(vbid, opaque);
        }
        it->second.state = StreamState::Failed;
    }
    std::cerr << "kvexec dcp: " << options_.connectionName << ": vb:" << vbid
              << " is no longer a replica here: its stream closes\n";
    if (wake) {
        wakeWriter_();
    }
}

bool DcpConsumer::receive(std::string_view input, std::size_t& consumed) {
    consumed = 0;
    if (!input.empty()) {
        kvexec::detail::MutexLock lock(mutex_);
        heardSinceTick_ = true;  // anything heard: the producer is alive
    }
    while (consumed < input.size()) {
        const auto rest = input.substr(consumed);
        if (isResponseMagic(rest.front())) {
            const auto parsed = protocol::parseResponse(rest);
            if (parsed.outcome == protocol::ResponseOutcome::Incomplete) {
                return true;
            }
            if (parsed.outcome != protocol::ResponseOutcome::Ok || !onResponse(parsed.response)) {
                return false;
            }
            consumed += parsed.consumed;
            continue;
        }
        const auto parsed = protocol::parseRequest(rest, {});
        if (parsed.outcome == protocol::ParseOutcome::Incomplete) {
            return true;
        }
        if (parsed.outcome != protocol::ParseOutcome::Ok || !onRequest(parsed.request)) {
            return false;
        }
        consumed += parsed.consumed;
        kvexec::detail::MutexLock lock(mutex_);
        creditLocked(wire::flowControlBytes(parsed.request));
    }
    return true;
}

// Credit is returned in steps of a fifth of the window, so that the
// producer never waits for a whole window's worth.
void DcpConsumer::creditLocked(std::size_t bytes) {
    uncredited_ += bytes;
    if (uncredited_ == 0 || uncredited_ < options_.bufferSize / 5) {
        return;
    }
    wire::encodeBufferAcknowledgement(output_, {0, static_cast<std::uint32_t>(uncredited_)});
    uncredited_ = 0;
}

bool DcpConsumer::onResponse(const protocol::Response& response) {
    if (response.opcode == Opcode::DcpCloseStream) {
        // Success, or KeyNotFound when the producer had ended the stream
        // itself (its STREAM_END crossed our close): either way it is gone.
        return true;
    }
    if (response.opaque >= kStreamOpaqueBase) {
        return onStreamResponse(response);
    }
    if (response.opaque != kOpenOpaque && response.opaque != kControlOpaque &&
        response.opaque != kMarkerVersionOpaque) {
        return true;  // e.g. the answer to a noop we did not send: ignore
    }
    kvexec::detail::MutexLock lock(mutex_);
    if (response.status != Status::Success && response.opaque == kMarkerVersionOpaque) {
        std::cerr << "kvexec dcp: " << options_.connectionName
                  << ": the producer sends v1 snapshot markers (no purge seqno)\n";
    } else if (response.status != Status::Success) {
        std::cerr << "kvexec dcp: " << options_.connectionName << ": the producer refused "
                  << (response.opaque == kOpenOpaque ? "DCP_OPEN" : "a DCP_CONTROL") << " (0x"
                  << std::hex << static_cast<int>(response.status) << std::dec << " "
                  << response.value << ")\n";
        failed_ = true;
        return false;
    }
    controlsPending_ -= controlsPending_ > 0 ? 1 : 0;
    return true;
}

bool DcpConsumer::onStreamResponse(const protocol::Response& response) {
    const engine::Vbid vbid = vbucketOf(response.opaque);
    const std::uint32_t opaque = response.opaque;
    const auto decoded = wire::decodeStreamRequestResponse(response);
    if (!decoded) {
        return false;
    }
    if (!isCurrent(vbid, opaque, StreamState::Requested)) {
        // The answer to a request of a stream closed since, or asked for
        // again: the close (or the newer request) follows it.
        return true;
    }
    StreamState state = StreamState::Failed;
    if (decoded->status == Status::Success) {
        std::vector<engine::FailoverEntry> entries;
        for (const auto& entry : decoded->failoverLog) {
            entries.push_back({entry.uuid, entry.seqno});
        }
        try {
            const auto adopted =
                bucket_.adoptFailoverLog(vbid, engine::FailoverLog(std::move(entries)));
            if (adopted == engine::Status::NotMyVbucket) {
                dropStream(vbid, opaque);  // no longer a replica here
                return true;
            }
            state = StreamState::Open;
        } catch (const std::invalid_argument&) {
            return false;  // a malformed log from the producer
        }
    } else if (decoded->status == Status::Rollback) {
        if (rollBack(vbid, opaque, decoded->rollbackSeqno)) {
            return true;
        }
    } else if (decoded->status == Status::KeyExists) {
        // The producer still holds a stream of this vBucket that this side
        // forgot: closed there, the next request opens it afresh.
        bool wake = false;
        {
            kvexec::detail::MutexLock lock(mutex_);
            wake = closeOnProducerLocked(vbid, opaque);
        }
        if (wake) {
            wakeWriter_();
        }
    } else {
        std::cerr << "kvexec dcp: " << options_.connectionName << ": stream of vb:" << vbid
                  << " refused (status 0x" << std::hex << static_cast<int>(decoded->status)
                  << std::dec << ")\n";
    }
    if (!setStreamState(vbid, opaque, state)) {
        return true;
    }
    if (state == StreamState::Open) {
        // What the replica already holds is acknowledged again: an earlier
        // acknowledgement may have gone with the previous connection, and
        // the active (restarted, say) may be waiting for it.
        if (const auto held = bucket_.replicaHighPrepared(vbid); held != 0) {
            prepared(vbid, held);
        }
    }
    return true;
}

// The replica's history diverged: its flusher rolls it back to where the
// histories are shared (or below), and the stream is asked for again from
// there once that is on disk, so that a crash never pairs the diverged copy
// with the active's history (adopted when the stream opens).
bool DcpConsumer::rollBack(engine::Vbid vbid, std::uint32_t opaque, engine::Seqno to) {
    std::cerr << "kvexec dcp: " << options_.connectionName << ": vb:" << vbid
              << " rolls back (asked: to " << to << ")\n";
    setStreamState(vbid, opaque, StreamState::RollingBack);
    std::weak_ptr<DcpConsumer> self = weak_from_this();
    const auto status =
        bucket_.rollbackReplica(vbid, to, [self, vbid, opaque](engine::Status done) {
            const auto consumer = self.lock();
            if (!consumer) {
                return;  // the connection closed: the next one asks from where the replica stands
            }
            // Only for the stream still rolling back: one closed meanwhile
            // is not asked for again.
            if (done == engine::Status::Success) {
                consumer->askForStream(vbid, opaque);
            } else if (consumer->isCurrent(vbid, opaque, StreamState::RollingBack)) {
                consumer->setStreamState(vbid, opaque, StreamState::Failed);
            }
        });
    return status == engine::Status::Success;
}

bool DcpConsumer::isCurrent(engine::Vbid vbid, std::uint32_t opaque, StreamState state) const {
    kvexec::detail::MutexLock lock(mutex_);
    const auto it = streams_.find(vbid);
    return it != streams_.end() && it->second.opaque == opaque && it->second.state == state;
}

bool DcpConsumer::setStreamState(engine::Vbid vbid, std::uint32_t opaque, StreamState state) {
    kvexec::detail::MutexLock lock(mutex_);
    const auto it = streams_.find(vbid);
    if (it == streams_.end() || it->second.opaque != opaque) {
        return false;
    }
    it->second.state = state;
    return true;
}

bool DcpConsumer::onRequest(const protocol::Request& request) {
    if (isStreamEvent(request.opcode)) {
        const auto decoded = decodeEvent(request, options_.collections);
        if (!decoded.event) {
            std::cerr << "kvexec dcp: " << options_.connectionName
                      << ": malformed message: " << decoded.error.reason << '\n';
            return false;
        }
        const engine::Vbid vbid = decoded.event->item.vbid;
        if (!isCurrent(vbid, request.opaque, StreamState::Open)) {
            return true;  // from a stream closed or asked for again since: dropped
        }
        const auto status = bucket_.applyReplicated(vbid, *decoded.event);
        if (status == engine::Status::NotMyVbucket) {
            // The map took the vBucket from this replica before the
            // connection heard: only its stream ends.
            dropStream(vbid, request.opaque);
            return true;
        }
        if (status != engine::Status::Success) {
            std::cerr << "kvexec dcp: " << options_.connectionName
                      << ": vb:" << decoded.event->item.vbid << " refused a "
                      << engine::to_string(decoded.event->kind) << ": " << engine::to_string(status)
                      << '\n';
            return false;
        }
        return true;
    }
    switch (request.opcode) {
        case Opcode::DcpNoop: {
            std::string bytes;
            protocol::appendResponse(bytes,
                                     {request.opcode, Status::Success, request.opaque, 0, 0});
            send(std::move(bytes));
            return true;
        }
        case Opcode::DcpStreamEnd: {
            const auto decoded = wire::decodeStreamEnd(request);
            if (!decoded) {
                return false;
            }
            // The producer forgot the stream (a stale one's end is ignored).
            setStreamState(decoded->vbucket, decoded->opaque, StreamState::Ended);
            return true;
        }
        default:
            return false;  // not a message a producer sends its consumer
    }
}

void DcpConsumer::prepared(engine::Vbid vbid, engine::Seqno seqno) {
    bool wake = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        const auto it = streams_.find(vbid);
        if (it == streams_.end() || it->second.state != StreamState::Open) {
            return;
        }
        std::string bytes;
        wire::encodeSeqnoAcknowledged(bytes,
                                      {static_cast<std::uint16_t>(vbid), it->second.opaque, seqno});
        wake = queueLocked(std::move(bytes));
    }
    if (wake) {
        wakeWriter_();
    }
}

std::optional<DcpConsumer::StreamState> DcpConsumer::streamState(engine::Vbid vbid) const {
    kvexec::detail::MutexLock lock(mutex_);
    const auto it = streams_.find(vbid);
    if (it == streams_.end()) {
        return std::nullopt;
    }
    return it->second.state;
}

bool DcpConsumer::tick(std::chrono::steady_clock::time_point now) {
    kvexec::detail::MutexLock lock(mutex_);
    const bool heard = std::exchange(heardSinceTick_, false);
    if (!lastHeard_ || heard) {
        lastHeard_ = now;
        return true;
    }
    return now - *lastHeard_ < 2 * options_.noopInterval;
}

bool DcpConsumer::established() const {
    kvexec::detail::MutexLock lock(mutex_);
    return controlsPending_ == 0 && !failed_;
}

}  // namespace kvexec::dcp
