// protocol/client_codec.h: the client's side of the binary protocol:
// encodes requests (classic magic 0x80, or 0x08 when framing extras such as
// a durability requirement are present) and parses responses (0x81 and the
// alternative 0x18, whose framing extras carry e.g. the server's duration)
// and the requests a server pushes (0x82).
//
// Pure functions over caller-owned bytes: a Response's string_views point
// into the input, so the input must outlive the Response. Safe from any
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/binary_types.h"

namespace kvexec::protocol {

struct RequestHeader {
    Opcode opcode = Opcode::Noop;
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::uint8_t datatype = 0;
};

// Frame info 1 for `level`, with the client's timeout when given.
std::string durabilityFrame(DurabilityLevel level,
                            std::optional<std::uint16_t> timeoutMs = std::nullopt);

// Appends one request: the alternative magic when `framingExtras` is not
// empty. Throws std::invalid_argument when a part exceeds what its header
// field can say (framing extras or extras over 255 bytes, key over 65535).
void appendRequest(std::string& out, const RequestHeader& header,
                   std::string_view framingExtras = {}, std::string_view extras = {},
                   std::string_view key = {}, std::string_view value = {});

struct Response {
    Magic magic = Magic::ClientResponse;
    Opcode opcode = Opcode::Noop;
    Status status = Status::Success;
    std::uint8_t datatype = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::string_view framingExtras;
    std::string_view extras;
    std::string_view key;
    std::string_view value;
};

enum class ResponseOutcome {
    Incomplete,  // need more bytes; nothing consumed
    Ok,          // `response` is valid, `consumed` bytes belong to it
    Invalid,     // not a response (bad magic, lengths over the body): close
};

struct ResponseParse {
    ResponseOutcome outcome = ResponseOutcome::Incomplete;
    Response response;
    std::size_t consumed = 0;
};

// Parses the response at the front of `input`; bodies over `maxBodyLength`
// are Invalid.
ResponseParse parseResponse(std::string_view input,
                            std::size_t maxBodyLength = 20 * 1024 * 1024 + 1024);
// The same, but a server request (magic 0x82: a cluster-map push, on a
// connection that asked for them) is also a packet; its `magic` tells it
// from a response, and its `status` means nothing.
ResponseParse parseServerPacket(std::string_view input,
                                std::size_t maxBodyLength = 20 * 1024 * 1024 + 1024);

}  // namespace kvexec::protocol
