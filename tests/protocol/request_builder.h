// request_builder.h: builds binary requests byte by byte for the tests, so
// that every header field (including broken ones) can be chosen.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/binary_response.h"
#include "protocol/binary_types.h"

namespace kvexec::protocol::test {

struct RawRequest {
    std::uint8_t magic = 0x80;
    std::uint8_t opcode = 0;
    std::string framing;
    std::string extras;
    std::string key;
    std::string value;
    std::uint16_t vbucket = 0;
    std::uint32_t opaque = 0xdeadbeef;
    std::uint64_t cas = 0;
    // Overrides of the lengths the header claims (to build broken packets).
    std::int64_t bodyLength = -1;
    std::int64_t keyLength = -1;

    std::string encode() const {
        using protocol::appendBe16;
        using protocol::appendBe32;
        using protocol::appendBe64;
        std::string out;
        out.push_back(static_cast<char>(magic));
        out.push_back(static_cast<char>(opcode));
        const auto klen = static_cast<std::uint16_t>(keyLength >= 0 ? keyLength : key.size());
        if (magic == 0x08) {
            out.push_back(static_cast<char>(framing.size()));
            out.push_back(static_cast<char>(klen));
        } else {
            appendBe16(out, klen);
        }
        out.push_back(static_cast<char>(extras.size()));
        out.push_back(0);
        appendBe16(out, vbucket);
        const std::size_t body = framing.size() + extras.size() + key.size() + value.size();
        appendBe32(out, static_cast<std::uint32_t>(bodyLength >= 0 ? bodyLength : body));
        appendBe32(out, opaque);
        appendBe64(out, cas);
        return out + framing + extras + key + value;
    }
};

inline RawRequest request(protocol::Opcode op, std::string key = {}, std::string extras = {},
                          std::string value = {}) {
    RawRequest r;
    r.opcode = static_cast<std::uint8_t>(op);
    r.key = std::move(key);
    r.extras = std::move(extras);
    r.value = std::move(value);
    return r;
}

}  // namespace kvexec::protocol::test
