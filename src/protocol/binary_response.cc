#include "protocol/binary_response.h"

namespace kvexec::protocol {

void appendBe16(std::string& out, std::uint16_t v) {
    out.push_back(static_cast<char>(v >> 8));
    out.push_back(static_cast<char>(v));
}

void appendBe32(std::string& out, std::uint32_t v) {
    appendBe16(out, static_cast<std::uint16_t>(v >> 16));
    appendBe16(out, static_cast<std::uint16_t>(v));
}

void appendBe64(std::string& out, std::uint64_t v) {
    appendBe32(out, static_cast<std::uint32_t>(v >> 32));
    appendBe32(out, static_cast<std::uint32_t>(v));
}

std::uint16_t readBe16(std::string_view b, std::size_t at) {
    return static_cast<std::uint16_t>((static_cast<std::uint8_t>(b[at]) << 8) |
                                      static_cast<std::uint8_t>(b[at + 1]));
}

std::uint32_t readBe32(std::string_view b, std::size_t at) {
    return (static_cast<std::uint32_t>(readBe16(b, at)) << 16) | readBe16(b, at + 2);
}

std::uint64_t readBe64(std::string_view b, std::size_t at) {
    return (static_cast<std::uint64_t>(readBe32(b, at)) << 32) | readBe32(b, at + 4);
}

void appendResponse(std::string& out, const ResponseHeader& h, std::string_view extras,
                    std::string_view key, std::string_view value) {
    out.reserve(out.size() + kHeaderSize + extras.size() + key.size() + value.size());
    out.push_back(static_cast<char>(Magic::ClientResponse));
    out.push_back(static_cast<char>(h.opcode));
    appendBe16(out, static_cast<std::uint16_t>(key.size()));
    out.push_back(static_cast<char>(extras.size()));
    out.push_back(static_cast<char>(h.datatype));
    appendBe16(out, static_cast<std::uint16_t>(h.status));
    appendBe32(out, static_cast<std::uint32_t>(extras.size() + key.size() + value.size()));
    appendBe32(out, h.opaque);
    appendBe64(out, h.cas);
    out.append(extras);
    out.append(key);
    out.append(value);
}

}  // namespace kvexec::protocol
