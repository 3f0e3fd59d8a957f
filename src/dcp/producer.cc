#include "dcp/producer.h"

#include <charconv>
#include <iostream>

#include "dcp/events.h"
#include "protocol/binary_response.h"
#include "protocol/dcp.h"

namespace kvexec::dcp {
namespace {

namespace wire = protocol::dcp;
using protocol::Opcode;
using protocol::Status;

std::optional<std::size_t> parseSize(std::string_view text) {
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// The opaque of the producer's noops (the consumer echoes it).
constexpr std::uint32_t kNoopOpaque = 0xd0c0'0000;

}  // namespace

// One vBucket's stream on this connection. `generation` changes whenever
// its engine stream is replaced, so that a delivery already running for
// an old one is recognised and dropped.
struct DcpProducer::Stream {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    engine::Seqno lastSent = 0;
    std::uint64_t generation = 0;
    bool paused = false;  // its engine stream is closed until the window has room
    std::shared_ptr<engine::ChangeStream> engineStream;
};

DcpProducer::DcpProducer(engine::Bucket& bucket, ProducerOptions options,
                         std::function<void()> wakeWriter)
    : bucket_(bucket), wakeWriter_(std::move(wakeWriter)), options_(std::move(options)) {}

DcpProducer::~DcpProducer() {
    close();
}

void DcpProducer::close() {
    std::map<std::uint16_t, std::unique_ptr<Stream>> streams;
    {
        kvexec::detail::MutexLock lock(mutex_);
        closed_ = true;
        streams.swap(streams_);
    }
    for (auto& [vbucket, stream] : streams) {
        if (stream->engineStream) {
            stream->engineStream->close();
        }
    }
}

std::string DcpProducer::takeOutput() {
    kvexec::detail::MutexLock lock(mutex_);
    std::string out;
    out.swap(output_);
    return out;
}

std::size_t DcpProducer::unacknowledgedBytes() const {
    kvexec::detail::MutexLock lock(mutex_);
    return unacked_;
}

std::size_t DcpProducer::openStreams() const {
    kvexec::detail::MutexLock lock(mutex_);
    return streams_.size();
}

bool DcpProducer::handle(const protocol::Request& request) {
    switch (request.opcode) {
        case Opcode::DcpControl:
            return control(request);
        case Opcode::DcpStreamReq:
            return streamRequest(request);
        case Opcode::DcpCloseStream:
            return closeStream(request);
        case Opcode::DcpBufferAcknowledgement:
            return bufferAcknowledged(request);
        case Opcode::DcpSeqnoAcknowledged:
            return seqnoAcknowledged(request);
        case Opcode::DcpNoop:
            respond(request, Status::Success);
            return true;
        default:
            return false;  // not a message a consumer sends its producer
    }
}

bool DcpProducer::handleResponse(protocol::Opcode opcode, std::uint32_t opaque) {
    if (opcode != Opcode::DcpNoop || opaque != kNoopOpaque) {
        return false;
    }
    kvexec::detail::MutexLock lock(mutex_);
    noopAnswered_ = true;
    return true;
}

bool DcpProducer::tick(std::chrono::steady_clock::time_point now) {
    kvexec::detail::MutexLock lock(mutex_);
    if (!noopEnabled_ || closed_) {
        return true;
    }
    if (noopSentAt_ && now - *noopSentAt_ < noopInterval_) {
        return true;
    }
    if (!noopAnswered_) {
        return false;  // a whole interval without the answer: the consumer is gone
    }
    std::string bytes;
    wire::encodeNoop(bytes, {kNoopOpaque});
    appendLocked(std::move(bytes));
    noopSentAt_ = now;
    noopAnswered_ = false;
    return true;
}

void DcpProducer::respond(const protocol::Request& request, Status status, std::string_view value) {
    std::string bytes;
    protocol::appendResponse(bytes, {request.opcode, status, request.opaque, 0, 0}, {}, {}, value);
    kvexec::detail::MutexLock lock(mutex_);
    appendLocked(std::move(bytes));
}

void DcpProducer::appendLocked(std::string bytes) {
    if (closed_) {
        return;
    }
    const bool wasEmpty = output_.empty();
    output_ += bytes;
    if (wasEmpty && !output_.empty()) {
        wakeWriter_();
    }
}

bool DcpProducer::control(const protocol::Request& request) {
    const auto decoded = wire::decodeControl(request);
    if (!decoded) {
        return false;
    }
    Status status = Status::Success;
    {
        kvexec::detail::MutexLock lock(mutex_);
        const auto key = decoded->key;
        const auto value = decoded->value;
        if (key == "connection_buffer_size") {
            const auto size = parseSize(value);
            status = size ? Status::Success : Status::InvalidArguments;
            bufferSize_ = size.value_or(bufferSize_);
        } else if (key == "enable_sync_writes") {
            syncWrites_ = value == "true";
        } else if (key == "enable_expiry_opcode") {
            expirations_ = value == "true";
        } else if (key == "max_marker_version") {
            // 2.2 lets disk snapshot markers carry the purge seqno.
            status = value == "1.0" || value == "2.0" || value == "2.2" ? Status::Success
                                                                        : Status::InvalidArguments;
            if (status == Status::Success) {
                markersV2_2_ = value == "2.2";
            }
        } else if (key == "consumer_name") {
            options_.consumerName = std::string(value);
        } else if (key == "enable_noop") {
            noopEnabled_ = value == "true";
        } else if (key == "set_noop_interval") {
            const auto seconds = parseSize(value);
            status = seconds && *seconds > 0 && *seconds <= 3600 ? Status::Success
                                                                 : Status::InvalidArguments;
            if (status == Status::Success) {
                noopInterval_ = std::chrono::seconds(*seconds);
            }
        } else if (key == "set_priority" || key == "supports_cursor_dropping_vulcan") {
            // accepted; this producer has no priorities
        } else {
            status = Status::InvalidArguments;
        }
    }
    respond(request, status);
    return true;
}

bool DcpProducer::streamRequest(const protocol::Request& request) {
    const auto decoded = wire::decodeStreamRequest(request);
    if (!decoded) {
        respond(request, decoded.error.status);  // a refused stream, not a broken connection
        return true;
    }
    const auto vb = decoded->vbucket;
    const auto assignment = bucket_.vbucketAssignment(vb);
    if (!assignment || assignment->state != engine::VBucketState::Active) {
        respond(request, Status::NotMyVbucket);
        return true;
    }
    const auto log = bucket_.failoverLog(vb);
    const auto seqnos = bucket_.observeSeqno(vb);
    const auto decision = engine::decideRollback(
        *log, seqnos.currentSeqno, seqnos.purgeSeqno,
        {decoded->vbucketUuid, decoded->start, decoded->snapStart, decoded->snapEnd});
    wire::StreamRequestResponse answer;
    answer.opaque = request.opaque;
    std::string bytes;
    kvexec::detail::MutexLock lock(mutex_);
    if (streams_.contains(vb)) {
        answer.status = Status::KeyExists;
    } else if (decision.rollback) {
        answer.status = Status::Rollback;
        answer.rollbackSeqno = decision.to;
    } else {
        for (const auto& entry : log->entries()) {
            answer.failoverLog.push_back({entry.uuid, entry.seqno});
        }
    }
    wire::encodeStreamRequestResponse(bytes, answer);
    appendLocked(std::move(bytes));
    if (answer.status == Status::Success && !closed_) {
        auto stream = std::make_unique<Stream>();
        stream->vbucket = vb;
        stream->opaque = request.opaque;
        stream->lastSent = decoded->start;
        auto& added = *streams_.emplace(vb, std::move(stream)).first->second;
        if (!startLocked(added)) {
            endLocked(vb, protocol::dcp::StreamEndReason::StateChanged);
        }
    }
    return true;
}

// A stream the engine cannot serve ends, and the consumer is told: it asks
// again (and is refused until its vBucket is active here again).
void DcpProducer::endLocked(std::uint16_t vbucket, protocol::dcp::StreamEndReason reason) {
    const auto it = streams_.find(vbucket);
    if (it == streams_.end()) {
        return;
    }
    std::string bytes;
    wire::encodeStreamEnd(bytes, {vbucket, it->second->opaque, reason});
    appendLocked(std::move(bytes));
    streams_.erase(it);
}

bool DcpProducer::startLocked(Stream& stream) {
    stream.paused = false;
    const auto generation = ++stream.generation;
    const auto vb = stream.vbucket;
    std::weak_ptr<DcpProducer> self = weak_from_this();
    engine::Status status = engine::Status::Success;
    stream.engineStream = bucket_.openReplicationStream(
        {vb, stream.lastSent},
        [self, vb, generation](const engine::StreamEvent& event) {
            if (const auto producer = self.lock()) {
                producer->onEvent(vb, generation, event);
            }
        },
        &status);
    if (!stream.engineStream) {
        std::cerr << "kvexec dcp: cannot stream vb:" << vb << " to " << options_.connectionName
                  << ": " << engine::to_string(status) << '\n';
        return false;
    }
    return true;
}

void DcpProducer::onEvent(std::uint16_t vbucket, std::uint64_t generation,
                          const engine::StreamEvent& event) {
    kvexec::detail::MutexLock lock(mutex_);
    const auto it = streams_.find(vbucket);
    if (closed_ || it == streams_.end() || it->second->generation != generation ||
        it->second->paused) {
        return;  // from an engine stream that was replaced or closed
    }
    if (event.kind == engine::StreamEventKind::BackfillFailed) {
        // The engine stream ended itself; told, the consumer asks again.
        endLocked(vbucket, protocol::dcp::StreamEndReason::BackfillFailed);
        return;
    }
    if (event.kind == engine::StreamEventKind::StateChanged) {
        endLocked(vbucket, protocol::dcp::StreamEndReason::StateChanged);
        return;
    }
    auto& stream = *it->second;
    std::string bytes;
    EncodeOptions options{vbucket,     stream.opaque, options_.collections,
                          syncWrites_, expirations_,  markersV2_2_};
    options.xattrs = options_.xattrs;
    options.body = options_.body;
    options.deleteTimes = options_.deleteTimes;
    if (encodeEvent(bytes, event, options)) {
        unacked_ += bytes.size();
        appendLocked(std::move(bytes));
    }
    if (event.kind != engine::StreamEventKind::Snapshot) {
        stream.lastSent = event.item.meta.seqno;
    }
    if (windowFullLocked()) {
        // Cursor dropping: nothing more is buffered for this consumer
        // until it acknowledges; the stream resumes from lastSent.
        stream.paused = true;
        stream.engineStream->close();
        stream.engineStream.reset();
    }
}

bool DcpProducer::windowFullLocked() const {
    return bufferSize_ != 0 && unacked_ >= bufferSize_;
}

bool DcpProducer::bufferAcknowledged(const protocol::Request& request) {
    const auto decoded = wire::decodeBufferAcknowledgement(request);
    if (!decoded) {
        return false;
    }
    kvexec::detail::MutexLock lock(mutex_);
    unacked_ -= std::min<std::size_t>(unacked_, decoded->bytes);
    if (windowFullLocked()) {
        return true;
    }
    std::vector<std::uint16_t> ended;
    for (auto& [vbucket, stream] : streams_) {
        if (stream->paused && !startLocked(*stream)) {
            ended.push_back(vbucket);
        }
    }
    for (const auto vbucket : ended) {
        endLocked(vbucket, protocol::dcp::StreamEndReason::StateChanged);
    }
    return true;
}

bool DcpProducer::seqnoAcknowledged(const protocol::Request& request) {
    const auto decoded = wire::decodeSeqnoAcknowledged(request);
    if (!decoded) {
        return false;
    }
    std::string node;
    {
        kvexec::detail::MutexLock lock(mutex_);
        node = options_.consumerName;
    }
    const auto status = bucket_.seqnoAcknowledged(decoded->vbucket, node, decoded->preparedSeqno);
    if (status != engine::Status::Success) {
        std::cerr << "kvexec dcp: an acknowledgement of vb:" << decoded->vbucket << " from \""
                  << node << "\" was not taken: " << engine::to_string(status) << '\n';
    }
    return true;
}

bool DcpProducer::closeStream(const protocol::Request& request) {
    const auto decoded = wire::decodeCloseStream(request);
    if (!decoded) {
        return false;
    }
    std::unique_ptr<Stream> stream;
    {
        kvexec::detail::MutexLock lock(mutex_);
        const auto it = streams_.find(decoded->vbucket);
        if (it != streams_.end()) {
            stream = std::move(it->second);
            streams_.erase(it);
        }
    }
    if (stream && stream->engineStream) {
        stream->engineStream->close();
    }
    respond(request, stream ? Status::Success : Status::KeyNotFound);
    return true;
}

}  // namespace kvexec::dcp
