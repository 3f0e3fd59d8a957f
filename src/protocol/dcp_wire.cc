#include "protocol/dcp_wire.h"

#include <stdexcept>

#include "protocol/binary_response.h"

namespace kvexec::protocol::dcp::wire {

void Fields::put(std::uint64_t v, std::size_t width) {
    if (width > kCapacity - size_) {
        throw std::logic_error("DCP fields longer than any message's");
    }
    for (std::size_t i = 0; i < width; ++i) {
        bytes_[size_ + i] = static_cast<char>(v >> (8 * (width - 1 - i)));
    }
    size_ += width;
}

Fields& Fields::u8(std::uint8_t v) {
    put(v, 1);
    return *this;
}

Fields& Fields::be16(std::uint16_t v) {
    put(v, 2);
    return *this;
}

Fields& Fields::be32(std::uint32_t v) {
    put(v, 4);
    return *this;
}

Fields& Fields::be64(std::uint64_t v) {
    put(v, 8);
    return *this;
}

std::string joined(std::initializer_list<std::string_view> parts) {
    std::string out;
    for (std::string_view part : parts) {
        out += part;
    }
    return out;
}

namespace {

std::optional<std::string> checkPart(std::string_view what, std::string_view bytes, Part part) {
    if (part == Part::Required && bytes.empty()) {
        return joined({what, " is required"});
    }
    if (part == Part::Forbidden && !bytes.empty()) {
        return joined({what, " is not allowed"});
    }
    return std::nullopt;
}

std::string named(Opcode opcode, std::string_view what) {
    return joined({opcodeName(opcode), ": ", what});
}

}  // namespace

std::optional<std::string> checkShape(const Request& request, const Shape& shape) {
    if (request.opcode != shape.opcode) {
        return joined({"not a ", opcodeName(shape.opcode)});
    }
    if (request.framingStatus != Status::Success) {
        return named(shape.opcode, request.framingError);
    }
    if (request.extras.size() != shape.extras) {
        return named(shape.opcode, joined({"extras must be ", std::to_string(shape.extras),
                                           " bytes, not ", std::to_string(request.extras.size())}));
    }
    if (auto why = checkPart("key", request.key, shape.key)) {
        return named(shape.opcode, *why);
    }
    if (request.key.size() > shape.maxKey) {
        return named(shape.opcode,
                     joined({"key longer than ", std::to_string(shape.maxKey), " bytes"}));
    }
    if (auto why = checkPart("value", request.value, shape.value)) {
        return named(shape.opcode, *why);
    }
    if ((request.datatype & ~shape.datatypes) != 0) {
        return named(shape.opcode,
                     joined({"datatype ", std::to_string(request.datatype), " is not allowed"}));
    }
    if (shape.casMustBeZero && request.cas != 0) {
        return named(shape.opcode, "cas must be 0");
    }
    return std::nullopt;
}

void appendFailoverLog(std::string& out, const std::vector<FailoverEntry>& entries) {
    out.reserve(out.size() + 16 * entries.size());
    for (const FailoverEntry& entry : entries) {
        appendBe64(out, entry.uuid);
        appendBe64(out, entry.seqno);
    }
}

std::optional<std::vector<FailoverEntry>> parseFailoverLog(std::string_view value) {
    if (value.empty() || value.size() % 16 != 0) {
        return std::nullopt;
    }
    std::vector<FailoverEntry> entries;
    entries.reserve(value.size() / 16);
    for (std::size_t at = 0; at < value.size(); at += 16) {
        FailoverEntry entry{readBe64(value, at), readBe64(value, at + 8)};
        if (entry.uuid == 0) {
            return std::nullopt;
        }
        entries.push_back(entry);
    }
    return entries;
}

}  // namespace kvexec::protocol::dcp::wire
