#include "protocol/client_codec.h"

#include <stdexcept>

#include "protocol/binary_response.h"

namespace kvexec::protocol {

std::string durabilityFrame(DurabilityLevel level, std::optional<std::uint16_t> timeoutMs) {
    // A frame info's first byte: id in the high nibble, length in the low.
    const auto id = static_cast<std::uint8_t>(FrameInfoId::DurabilityRequirement);
    std::string out;
    out.push_back(static_cast<char>((id << 4) | (timeoutMs ? 3 : 1)));
    out.push_back(static_cast<char>(level));
    if (timeoutMs) {
        appendBe16(out, *timeoutMs);
    }
    return out;
}

void appendRequest(std::string& out, const RequestHeader& h, std::string_view framingExtras,
                   std::string_view extras, std::string_view key, std::string_view value) {
    const bool alt = !framingExtras.empty();
    if (framingExtras.size() > 0xff || extras.size() > 0xff ||
        key.size() > (alt ? 0xffu : 0xffffu)) {
        throw std::invalid_argument("request part too long for its header field");
    }
    out.push_back(static_cast<char>(alt ? Magic::AltClientRequest : Magic::ClientRequest));
    out.push_back(static_cast<char>(h.opcode));
    if (alt) {
        out.push_back(static_cast<char>(framingExtras.size()));
        out.push_back(static_cast<char>(key.size()));
    } else {
        appendBe16(out, static_cast<std::uint16_t>(key.size()));
    }
    out.push_back(static_cast<char>(extras.size()));
    out.push_back(static_cast<char>(h.datatype));
    appendBe16(out, h.vbucket);
    appendBe32(out, static_cast<std::uint32_t>(framingExtras.size() + extras.size() + key.size() +
                                               value.size()));
    appendBe32(out, h.opaque);
    appendBe64(out, h.cas);
    out.append(framingExtras);
    out.append(extras);
    out.append(key);
    out.append(value);
}

namespace {

// A packet in the layout of a response (classic or alternative): the
// responses, and the server requests, whose status field is reserved.
bool responseLayout(Magic magic) {
    return magic == Magic::ClientResponse || magic == Magic::AltClientResponse ||
           magic == Magic::ServerRequest;
}

}  // namespace

ResponseParse parseResponse(std::string_view input, std::size_t maxBodyLength) {
    if (!input.empty() && static_cast<Magic>(input[0]) == Magic::ServerRequest) {
        return {ResponseOutcome::Invalid, {}, 0};
    }
    return parseServerPacket(input, maxBodyLength);
}

ResponseParse parseServerPacket(std::string_view input, std::size_t maxBodyLength) {
    ResponseParse result;
    if (input.size() < kHeaderSize) {
        return result;
    }
    const auto magic = static_cast<Magic>(input[0]);
    const bool alt = magic == Magic::AltClientResponse;
    if (!responseLayout(magic)) {
        result.outcome = ResponseOutcome::Invalid;
        return result;
    }
    const std::size_t framingLength = alt ? static_cast<std::uint8_t>(input[2]) : 0;
    const std::size_t keyLength = alt ? static_cast<std::uint8_t>(input[3]) : readBe16(input, 2);
    const std::size_t extrasLength = static_cast<std::uint8_t>(input[4]);
    const std::size_t bodyLength = readBe32(input, 8);
    if (bodyLength > maxBodyLength || framingLength + extrasLength + keyLength > bodyLength) {
        result.outcome = ResponseOutcome::Invalid;
        return result;
    }
    if (input.size() < kHeaderSize + bodyLength) {
        return result;
    }
    Response& r = result.response;
    r.magic = magic;
    r.opcode = static_cast<Opcode>(input[1]);
    r.datatype = static_cast<std::uint8_t>(input[5]);
    r.status = static_cast<Status>(readBe16(input, 6));
    r.opaque = readBe32(input, 12);
    r.cas = readBe64(input, 16);
    std::size_t at = kHeaderSize;
    r.framingExtras = input.substr(at, framingLength);
    at += framingLength;
    r.extras = input.substr(at, extrasLength);
    at += extrasLength;
    r.key = input.substr(at, keyLength);
    at += keyLength;
    r.value = input.substr(at, kHeaderSize + bodyLength - at);
    result.outcome = ResponseOutcome::Ok;
    result.consumed = kHeaderSize + bodyLength;
    return result;
}

}  // namespace kvexec::protocol
