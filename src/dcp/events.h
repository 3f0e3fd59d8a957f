// dcp/events.h: the engine's replication-stream events
// (kvexec/engine/change_stream.h: StreamEvent) as DCP messages and back:
// what a producer sends for each event, and the event a consumer applies
// for each message it receives.
//
// Keys travel with their collection id in front (LEB128) when the
// connection negotiated collections; without, only the default
// collection's documents can be sent (others are skipped).
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kvexec/engine/change_stream.h"
#include "protocol/binary_request.h"
#include "protocol/dcp_types.h"

namespace kvexec::dcp {

// What of a document's value a message carries (DCP_OPEN's flags): the
// body (the value without its xattrs), or none of it (NoValue: raw
// datatype; NoValueWithUnderlyingDatatype: the document's datatype, its
// XATTR bit included whether or not the xattrs travel).
enum class BodyMode : std::uint8_t { Whole, None, NoneKeepDatatype };

struct EncodeOptions {
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;  // the stream's
    bool collections = true;   // keys carry their collection id
    bool syncWrites = true;    // prepares and aborts as such (else commits as mutations)
    bool expirations = false;  // expirations as DCP_EXPIRATION (else as deletions)
    bool markersV2_2 = false;  // disk snapshot markers in the v2.2 form (with the purge seqno)
    // DCP_OPEN IncludeXattrs: documents' (and tombstones') xattrs travel,
    // at the front of the value with the XATTR datatype bit; without, they
    // are cut off. With no body, a value of xattrs alone, as kv_engine.
    bool xattrs = true;
    BodyMode body = BodyMode::Whole;
    // DCP_OPEN IncludeDeleteTimes: deletions in the v2 form, with a delete
    // time (0: this engine keeps none).
    bool deleteTimes = false;
};

// The options DCP_OPEN's flags ask for (IncludeXattrs, NoValue,
// NoValueWithUnderlyingDatatype, IncludeDeleteTimes); the other fields
// keep their defaults.
EncodeOptions valueOptionsOf(std::uint32_t openFlags);

// Appends the message for `event`; false (nothing appended) when the
// event is not for this connection (another collection without
// collections, a prepare or abort without sync writes).
bool encodeEvent(std::string& out, const engine::StreamEvent& event, const EncodeOptions& options);

// The event a received DCP stream message stands for (snapshot marker,
// mutation, deletion, expiration, prepare, commit, abort), or why it is
// malformed. `collections`: keys carry their collection id.
struct DecodedEvent {
    std::optional<engine::StreamEvent> event;
    protocol::dcp::DecodeError error;
};
DecodedEvent decodeEvent(const protocol::Request& request, bool collections);

// Whether `opcode` is one of the messages decodeEvent takes.
bool isStreamEvent(protocol::Opcode opcode);

}  // namespace kvexec::dcp
