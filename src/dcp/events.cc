#include "dcp/events.h"

#include <utility>

#include "kvexec/engine/collections.h"
#include "kvexec/engine/xattrs.h"
#include "protocol/dcp.h"

namespace kvexec::dcp {
namespace {

namespace wire = protocol::dcp;
using engine::StreamEvent;
using engine::StreamEventKind;

// The key as it travels, or nullopt when this connection cannot carry it.
std::optional<std::string> wireKey(const engine::Item& item, bool collections) {
    if (collections) {
        return engine::encodeCollectionKey(item.collection, item.key);
    }
    if (item.collection != engine::kDefaultCollection) {
        return std::nullopt;
    }
    return item.key;
}

// The value and datatype a document travels with on this connection: its
// xattrs only if asked for, its body unless NoValue. Both are views of
// the item's value (the blob is its front, the body the rest).
std::pair<std::string_view, std::uint8_t> valueFor(const engine::Item& item,
                                                   const EncodeOptions& o) {
    const std::uint8_t datatype = item.meta.datatype;
    const std::string_view blob =
        o.xattrs ? engine::xattrBlob(item.value, datatype) : std::string_view{};
    std::uint8_t sent = blob.empty() ? datatype & ~engine::kDatatypeXattr : datatype;
    if (o.body == BodyMode::Whole) {
        if (blob.empty()) {
            return {engine::documentBody(item.value, datatype), sent};
        }
        return {item.value, sent};
    }
    if (o.body == BodyMode::None) {
        sent = blob.empty() ? 0 : engine::kDatatypeXattr;
    } else {
        sent = datatype;  // NoneKeepDatatype: the document's, as kv_engine (MB-31967)
    }
    return {blob, sent};
}

// The fields a mutation and a prepare share: a whole document.
template <typename Message>
Message documentMessage(const StreamEvent& event, const EncodeOptions& o, const std::string& key) {
    const auto& meta = event.item.meta;
    Message message;
    message.vbucket = o.vbucket;
    message.opaque = o.opaque;
    message.cas = meta.cas;
    message.bySeqno = meta.seqno;
    message.revSeqno = 1;
    message.flags = meta.flags;
    message.expiration = meta.expiry;
    message.key = key;
    const auto [value, datatype] = valueFor(event.item, o);
    message.value = value;
    message.datatype = datatype;
    return message;
}

// A tombstone's xattrs (the system ones a deletion or an expiry kept, or a
// staged transaction's) travel with it, as Couchbase's do, to a consumer
// that asked for xattrs.
template <class Message>
void attachTombstoneXattrs(Message& message, const StreamEvent& event, const EncodeOptions& o) {
    if (o.xattrs && (event.item.meta.datatype & engine::kDatatypeXattr) != 0 &&
        !event.item.value.empty()) {
        message.datatype = engine::kDatatypeXattr;
        message.value = event.item.value;
    }
}

void encodeDocument(std::string& out, const StreamEvent& event, const EncodeOptions& o,
                    const std::string& key) {
    const auto& meta = event.item.meta;
    if (meta.deleted) {
        wire::Deletion message;
        message.format = o.deleteTimes ? wire::DeletionFormat::V2 : wire::DeletionFormat::V1;
        message.vbucket = o.vbucket;
        message.opaque = o.opaque;
        message.cas = meta.cas;
        message.bySeqno = meta.seqno;
        message.revSeqno = 1;
        message.key = key;
        attachTombstoneXattrs(message, event, o);
        wire::encodeDeletion(out, message);
        return;
    }
    wire::encodeMutation(out, documentMessage<wire::Mutation>(event, o, key));
}

// A deletion an expiry made, for a consumer that asked to tell the two
// apart. Like a deletion, it carries the system xattrs it kept as its
// value; this engine keeps no delete time (the field is 0).
void encodeExpiration(std::string& out, const StreamEvent& event, const EncodeOptions& o,
                      const std::string& key) {
    wire::Expiration message;
    message.vbucket = o.vbucket;
    message.opaque = o.opaque;
    message.cas = event.item.meta.cas;
    message.bySeqno = event.item.meta.seqno;
    message.revSeqno = 1;
    message.key = key;
    attachTombstoneXattrs(message, event, o);
    wire::encodeExpiration(out, message);
}

void encodeSnapshot(std::string& out, const StreamEvent& event, const EncodeOptions& o) {
    wire::SnapshotMarker message;
    message.vbucket = o.vbucket;
    message.opaque = o.opaque;
    message.start = event.snapStart;
    message.end = event.snapEnd;
    message.flags =
        (event.fromDisk ? wire::kSnapshotDisk : wire::kSnapshotMemory) | wire::kSnapshotCheckpoint;
    if (event.fromDisk && o.markersV2_2) {
        message.format = wire::SnapshotMarkerFormat::V2_2;
        message.maxVisibleSeqno = event.maxVisibleSeqno;
        message.purgeSeqno = event.purgeSeqno;
    }
    wire::encodeSnapshotMarker(out, message);
}

void encodePrepare(std::string& out, const StreamEvent& event, const EncodeOptions& o,
                   const std::string& key) {
    auto message = documentMessage<wire::Prepare>(event, o, key);
    message.deleted = event.item.meta.deleted;
    message.level = static_cast<protocol::DurabilityLevel>(event.level);
    message.key = key;
    wire::encodePrepare(out, message);
}

}  // namespace

EncodeOptions valueOptionsOf(std::uint32_t openFlags) {
    EncodeOptions options;
    options.xattrs = (openFlags & wire::kOpenIncludeXattrs) != 0;
    options.deleteTimes = (openFlags & wire::kOpenIncludeDeleteTimes) != 0;
    if ((openFlags & wire::kOpenNoValue) != 0) {
        options.body = BodyMode::None;
    } else if ((openFlags & wire::kOpenNoValueWithUnderlyingDatatype) != 0) {
        options.body = BodyMode::NoneKeepDatatype;
    }
    return options;
}

bool encodeEvent(std::string& out, const StreamEvent& event, const EncodeOptions& options) {
    if (event.kind == StreamEventKind::Snapshot) {
        encodeSnapshot(out, event, options);
        return true;
    }
    const auto key = wireKey(event.item, options.collections);
    if (!key) {
        return false;
    }
    switch (event.kind) {
        case StreamEventKind::Mutation:
        case StreamEventKind::Deletion:
            encodeDocument(out, event, options, *key);
            return true;
        case StreamEventKind::Expiration:
            if (options.expirations) {
                encodeExpiration(out, event, options, *key);
            } else {
                encodeDocument(out, event, options, *key);  // the deletion it is
            }
            return true;
        case StreamEventKind::Commit:
            if (!options.syncWrites) {
                encodeDocument(out, event, options, *key);  // a consumer without prepares
                return true;
            }
            wire::encodeCommit(out, {options.vbucket, options.opaque, event.preparedSeqno,
                                     event.item.meta.seqno, *key});
            return true;
        case StreamEventKind::Prepare:
            if (options.syncWrites) {
                encodePrepare(out, event, options, *key);
            }
            return options.syncWrites;
        case StreamEventKind::Abort:
            // An abort whose prepare is unknown (0) cannot be sent; the
            // consumer's prepare then ends with the key's next change.
            if (!options.syncWrites || event.preparedSeqno == 0) {
                return false;
            }
            wire::encodeAbort(out, {options.vbucket, options.opaque, event.preparedSeqno,
                                    event.item.meta.seqno, *key});
            return true;
        case StreamEventKind::Snapshot:
        case StreamEventKind::BackfillFailed:  // the producer ends the stream instead
        case StreamEventKind::StateChanged:
            break;
    }
    return false;
}

bool isStreamEvent(protocol::Opcode opcode) {
    using protocol::Opcode;
    switch (opcode) {
        case Opcode::DcpSnapshotMarker:
        case Opcode::DcpMutation:
        case Opcode::DcpDeletion:
        case Opcode::DcpExpiration:
        case Opcode::DcpPrepare:
        case Opcode::DcpCommit:
        case Opcode::DcpAbort:
            return true;
        default:
            return false;
    }
}

namespace {

template <typename Message>
using Decoded = wire::Decoded<Message>;

DecodedEvent refused(const wire::DecodeError& error) {
    return {std::nullopt, error};
}

// Fills the item's key and collection from the wire key.
bool setKey(StreamEvent& event, std::string_view key, bool collections) {
    if (!collections) {
        event.item.key = std::string(key);
        return true;
    }
    const auto split = engine::splitCollectionKey(key);
    if (!split || split->key.empty()) {
        return false;
    }
    event.item.key = std::string(split->key);
    event.item.collection = split->collection;
    return true;
}

template <typename Message>
DecodedEvent document(const Decoded<Message>& decoded, StreamEventKind kind, bool deleted,
                      bool collections) {
    if (!decoded) {
        return refused(decoded.error);
    }
    StreamEvent event;
    event.kind = kind;
    event.item.vbid = decoded->vbucket;
    event.item.value = std::string(decoded->value);
    event.item.meta.cas = decoded->cas;
    event.item.meta.seqno = decoded->bySeqno;
    event.item.meta.datatype = decoded->datatype;
    event.item.meta.deleted = deleted;
    if constexpr (requires { decoded->flags; }) {
        event.item.meta.flags = decoded->flags;
        event.item.meta.expiry = decoded->expiration;
    }
    if (!setKey(event, decoded->key, collections)) {
        return refused({protocol::Status::InvalidArguments, "malformed collection key"});
    }
    return {event, {}};
}

DecodedEvent snapshot(const protocol::Request& request) {
    const auto decoded = wire::decodeSnapshotMarker(request);
    if (!decoded) {
        return refused(decoded.error);
    }
    StreamEvent event;
    event.kind = StreamEventKind::Snapshot;
    event.item.vbid = decoded->vbucket;
    event.snapStart = decoded->start;
    event.snapEnd = decoded->end;
    event.fromDisk = (decoded->flags & wire::kSnapshotDisk) != 0;
    event.maxVisibleSeqno = decoded->maxVisibleSeqno;
    event.purgeSeqno = decoded->purgeSeqno;
    return {event, {}};
}

DecodedEvent prepare(const protocol::Request& request, bool collections) {
    const auto decoded = wire::decodePrepare(request);
    auto out =
        document(decoded, StreamEventKind::Prepare, decoded && decoded->deleted, collections);
    if (out.event) {
        out.event->level = static_cast<engine::DurabilityLevel>(decoded->level);
    }
    return out;
}

template <typename Message>
DecodedEvent ending(const Decoded<Message>& decoded, StreamEventKind kind, engine::Seqno seqno,
                    bool collections) {
    if (!decoded) {
        return refused(decoded.error);
    }
    StreamEvent event;
    event.kind = kind;
    event.item.vbid = decoded->vbucket;
    event.item.meta.seqno = seqno;
    event.preparedSeqno = decoded->preparedSeqno;
    if (!setKey(event, decoded->key, collections)) {
        return refused({protocol::Status::InvalidArguments, "malformed collection key"});
    }
    return {event, {}};
}

}  // namespace

DecodedEvent decodeEvent(const protocol::Request& request, bool collections) {
    using protocol::Opcode;
    switch (request.opcode) {
        case Opcode::DcpSnapshotMarker:
            return snapshot(request);
        case Opcode::DcpMutation:
            return document(wire::decodeMutation(request), StreamEventKind::Mutation, false,
                            collections);
        case Opcode::DcpDeletion:
            return document(wire::decodeDeletion(request), StreamEventKind::Deletion, true,
                            collections);
        case Opcode::DcpExpiration:
            return document(wire::decodeExpiration(request), StreamEventKind::Expiration, true,
                            collections);
        case Opcode::DcpPrepare:
            return prepare(request, collections);
        case Opcode::DcpCommit: {
            const auto decoded = wire::decodeCommit(request);
            return ending(decoded, StreamEventKind::Commit, decoded ? decoded->commitSeqno : 0,
                          collections);
        }
        case Opcode::DcpAbort: {
            const auto decoded = wire::decodeAbort(request);
            return ending(decoded, StreamEventKind::Abort, decoded ? decoded->abortSeqno : 0,
                          collections);
        }
        default:
            return refused({protocol::Status::UnknownCommand, "not a DCP stream message"});
    }
}

}  // namespace kvexec::dcp
