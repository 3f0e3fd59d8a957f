// protocol/dcp_connection.h: the DCP messages that set up and keep a
// connection rather than a stream: DCP_OPEN (0x50) names the connection and
// makes it a producer or a consumer, DCP_CONTROL (0x5e) negotiates its
// options, DCP_NOOP (0x5c) proves the peer alive, and
// DCP_BUFFER_ACKNOWLEDGEMENT (0x5d) returns flow-control credit.
//
// Each message has an encoder appending the whole request packet and a
// decoder over a parsed Request (binary_request.h) that refuses anything
// malformed. Their answers are plain status responses (appendResponse).
// Messages hold views into caller-owned bytes: encoders read them, decoders
// point them into the parsed packet. Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/binary_request.h"
#include "protocol/dcp_types.h"

namespace kvexec::protocol::dcp {

// DCP_OPEN flags.
inline constexpr std::uint32_t kOpenProducer = 0x01;  // clear: a consumer
inline constexpr std::uint32_t kOpenIncludeXattrs = 0x04;
inline constexpr std::uint32_t kOpenNoValue = 0x08;
inline constexpr std::uint32_t kOpenIncludeDeleteTimes = 0x20;  // deletions in the v2 form
inline constexpr std::uint32_t kOpenNoValueWithUnderlyingDatatype = 0x40;
inline constexpr std::uint32_t kOpenIncludeDeletedUserXattrs = 0x100;
inline constexpr std::uint32_t kOpenSkipDeletesInInitialBackfill = 0x200;

// Couchbase's bound on a connection name.
inline constexpr std::size_t kMaxConnectionNameLength = 200;

struct Open {
    std::uint32_t opaque = 0;
    std::uint32_t flags = 0;
    std::string_view name{};  // the key: "service:unique-information"
    // The value: empty, or a JSON object whose only key is "consumer_name"
    // (a consumer's name for itself towards its producer).
    std::string_view json{};
    friend bool operator==(const Open&, const Open&) = default;
};

void encodeOpen(std::string& out, const Open& message);
// Refuses unknown flags and the combinations Couchbase refuses (no-value
// twice, deleted user xattrs without xattrs, skipping deletes on a
// consumer), names over 200 bytes, and a value that is not such an object.
Decoded<Open> decodeOpen(const Request& request);

// One option, e.g. ("enable_noop", "true"), ("connection_buffer_size",
// "10485760"), ("enable_sync_writes", "true"), ("consumer_name", "n1").
// Which keys and values are accepted is the producer's business.
struct Control {
    std::uint32_t opaque = 0;
    std::string_view key{};
    std::string_view value{};
    friend bool operator==(const Control&, const Control&) = default;
};

void encodeControl(std::string& out, const Control& message);
Decoded<Control> decodeControl(const Request& request);

// The producer's liveness probe; the consumer answers it with a success
// response of the same opaque.
struct Noop {
    std::uint32_t opaque = 0;
    friend bool operator==(const Noop&, const Noop&) = default;
};

void encodeNoop(std::string& out, const Noop& message);
Decoded<Noop> decodeNoop(const Request& request);

// The consumer has processed `bytes` more bytes of what counts for flow
// control (dcp.h: flowControlBytes); the producer may send that much more.
struct BufferAcknowledgement {
    std::uint32_t opaque = 0;
    std::uint32_t bytes = 0;
    friend bool operator==(const BufferAcknowledgement&, const BufferAcknowledgement&) = default;
};

void encodeBufferAcknowledgement(std::string& out, const BufferAcknowledgement& message);
Decoded<BufferAcknowledgement> decodeBufferAcknowledgement(const Request& request);

}  // namespace kvexec::protocol::dcp
