#include "protocol/framing.h"

#include "protocol/binary_response.h"

namespace kvexec::protocol {
namespace {

std::size_t binaryExtent(std::string_view head, const RequestLimits& limits) {
    auto result = parseRequest(head, limits);
    if (result.outcome != ParseOutcome::Incomplete) {
        // Refused from its header, or a complete request without a body.
        return result.outcome == ParseOutcome::Ok ? result.consumed : head.size();
    }
    if (!result.headerRead) {
        return kHeaderSize;
    }
    return kHeaderSize + readBe32(head, 8);  // within the limit: parseRequest checked it
}

}  // namespace

std::size_t responseExtent(std::string_view head, const RequestLimits& limits) {
    if (head.size() < kHeaderSize) {
        return kHeaderSize;
    }
    const std::size_t bodyLength = readBe32(head, 8);
    return bodyLength > limits.maxBodyLength ? head.size() : kHeaderSize + bodyLength;
}

namespace {

std::size_t textExtent(std::string_view head, const TextLimits& limits) {
    auto result = parseTextCommand(head, limits);
    switch (result.outcome) {
        case TextOutcome::Incomplete:
            // A storage command waits for its data; a line for its end.
            return result.needed != 0 ? result.needed : head.size() + 1;
        case TextOutcome::Fatal:
            // Refused from the line's length alone; the same whatever
            // follows the line.
            return result.consumed != 0 ? result.consumed : lineLimit(head, limits) + 1;
        case TextOutcome::Ok:
        case TextOutcome::Error:
            break;
    }
    return result.consumed;
}

}  // namespace

Wire wireOf(char first) {
    const auto c = static_cast<unsigned char>(first);
    const bool text = (c >= 0x20 && c < 0x7f) || (c >= '\t' && c <= '\r');
    return text ? Wire::Text : Wire::Binary;
}

std::size_t probeLength(Wire wire, const FramingLimits& limits) {
    // One byte past the longest line, to tell a long line from a complete one.
    return wire == Wire::Binary ? kHeaderSize : limits.text.maxGetLineLength + 1;
}

std::size_t requestExtent(Wire wire, std::string_view head, const FramingLimits& limits) {
    return wire == Wire::Binary ? binaryExtent(head, limits.binary) : textExtent(head, limits.text);
}

}  // namespace kvexec::protocol
