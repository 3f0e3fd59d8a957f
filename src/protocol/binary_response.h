// protocol/binary_response.h: encodes binary responses (magic 0x81) into
// an output buffer.
//
// Pure functions appending to a caller-owned std::string. Safe from any
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/binary_types.h"

namespace kvexec::protocol {

struct ResponseHeader {
    Opcode opcode = Opcode::Noop;
    Status status = Status::Success;
    std::uint32_t opaque = 0;
    std::uint64_t cas = 0;
    std::uint8_t datatype = 0;
};

// Appends header + extras + key + value.
void appendResponse(std::string& out, const ResponseHeader& header, std::string_view extras = {},
                    std::string_view key = {}, std::string_view value = {});

// Big-endian helpers shared by the codec and the command handlers.
void appendBe16(std::string& out, std::uint16_t v);
void appendBe32(std::string& out, std::uint32_t v);
void appendBe64(std::string& out, std::uint64_t v);
std::uint16_t readBe16(std::string_view bytes, std::size_t at);
std::uint32_t readBe32(std::string_view bytes, std::size_t at);
std::uint64_t readBe64(std::string_view bytes, std::size_t at);

}  // namespace kvexec::protocol
