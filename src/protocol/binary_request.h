// protocol/binary_request.h: parses one binary request (classic magic 0x80
// or alternative magic 0x08 with framing extras) out of received bytes.
//
// Pure functions over caller-owned bytes: a Request's string_views point
// into the input, so the input must outlive the Request. Safe from any
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/binary_types.h"

namespace kvexec::protocol {

// Frame info 1: the write must reach `level` before it is acknowledged;
// `timeoutMs` is the client's bound (absent: the server's default).
struct DurabilityRequirement {
    DurabilityLevel level = DurabilityLevel::Majority;
    std::optional<std::uint16_t> timeoutMs;
};

struct Request {
    Magic magic = Magic::ClientRequest;
    Opcode opcode = Opcode::Noop;
    std::uint8_t datatype = 0;
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::string_view framingExtras;
    std::string_view extras;
    std::string_view key;
    std::string_view value;
    std::optional<DurabilityRequirement> durability;
    bool preserveTtl = false;
    // Success, or why the framing extras cannot be honoured (a durability
    // level or timeout out of range, an unknown or truncated frame info).
    // The packet itself is well framed, so the request is answered with this
    // status (and the static text `framingError`) and the connection goes on.
    Status framingStatus = Status::Success;
    std::string_view framingError;
};

enum class ParseOutcome {
    Incomplete,  // need more bytes; nothing consumed
    Ok,          // `request` is valid, `consumed` bytes belong to it
    Invalid,     // answer `status` (if the header was readable), then close
};

struct ParseResult {
    ParseOutcome outcome = ParseOutcome::Incomplete;
    Request request;  // header fields are filled as far as they were read
    std::size_t consumed = 0;
    bool headerRead = false;  // whether request.opcode/opaque can be echoed
    Status status = Status::Success;
    std::string reason;
};

struct RequestLimits {
    std::size_t maxBodyLength = 20 * 1024 * 1024;
};

// Parses the request at the front of `input`. Framing errors (unknown
// magic, a body over the limit, extras + key + framing extras longer than
// the body) are Invalid: the connection cannot find the next request.
// Framing extras that cannot be honoured (bad durability level or timeout,
// an unknown frame info) leave the request Ok but set its framingStatus to
// the status Couchbase gives them: the request must not run without the
// requirement the client asked for, yet the next request is found.
ParseResult parseRequest(std::string_view input, const RequestLimits& limits);

// Checks the extras/key/value shape each opcode requires (memcached's
// rules: e.g. SET has 8 bytes of extras and a key, GET has no value).
// Returns InvalidArguments with a reason, or Success.
Status validateShape(const Request& request, std::string& reason);

// Decodes framing extras; exposed for tests. Returns Success or the status
// to answer with.
Status decodeFramingExtras(std::string_view frames, Request& request, std::string& reason);

}  // namespace kvexec::protocol
