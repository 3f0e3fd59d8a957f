// protocol/dcp.h: the DCP wire codec (Couchbase's Database Change Protocol,
// kv_engine docs/dcp/): every message's struct, encoder and decoder (from
// dcp_connection.h, dcp_streams.h, dcp_documents.h), and what concerns
// all of them: which opcodes are DCP, checking any DCP request by its
// opcode, and what a message counts for flow control.
//
// Pure code: no I/O, no engine, no state. Safe from any thread.
#pragma once

#include <cstddef>
#include <optional>

#include "protocol/binary_request.h"
#include "protocol/binary_types.h"
#include "protocol/dcp_connection.h"
#include "protocol/dcp_documents.h"
#include "protocol/dcp_streams.h"
#include "protocol/dcp_types.h"

namespace kvexec::protocol::dcp {

// Whether `opcode` is one of the DCP messages this codec knows.
bool isDcp(Opcode opcode);

// Runs the decoder `request.opcode` names: empty when the request is a
// valid DCP message, else why not (an opcode that is not DCP included).
// For a dispatcher that validates before it routes, and for fuzzing.
std::optional<DecodeError> checkRequest(const Request& request);

// Whether a request the producer sends counts against the consumer's
// flow-control buffer: every stream message (snapshot markers, documents,
// SyncWrite messages, SET_VBUCKET_STATE, STREAM_END) but not NOOP
// (flow-control.md: a connection must always be able to answer a noop).
bool countsForFlowControl(Opcode opcode);

// The bytes a received message adds to what the consumer must later
// acknowledge with DCP_BUFFER_ACKNOWLEDGEMENT: the whole packet, header and
// framing extras included, or 0 when it does not count. (Couchbase's
// producers count 2 bytes more per prepare, MB-46634; a consumer of one
// adds them itself.)
std::size_t flowControlBytes(Opcode opcode, std::size_t packetSize);
std::size_t flowControlBytes(const Request& request);

}  // namespace kvexec::protocol::dcp
