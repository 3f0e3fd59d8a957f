#include "protocol/binary_request.h"

#include "protocol/binary_response.h"

namespace kvexec::protocol {
namespace {

bool knownMagic(std::uint8_t magic) {
    return magic == static_cast<std::uint8_t>(Magic::ClientRequest) ||
           magic == static_cast<std::uint8_t>(Magic::AltClientRequest);
}

ParseResult invalid(ParseResult result, Status status, std::string reason) {
    result.outcome = ParseOutcome::Invalid;
    result.status = status;
    result.reason = std::move(reason);
    return result;
}

// One frame info: an id and a length in the high and low nibbles of the
// first byte; 15 in either means "15 + the next byte".
struct FrameInfo {
    std::uint32_t id = 0;
    std::string_view payload;
};

bool readNibble(std::string_view frames, std::size_t& at, std::uint32_t nibble,
                std::uint32_t& value) {
    value = nibble;
    if (nibble != 15) {
        return true;
    }
    if (at >= frames.size()) {
        return false;
    }
    value = 15 + static_cast<std::uint8_t>(frames[at++]);
    return true;
}

bool nextFrameInfo(std::string_view frames, std::size_t& at, FrameInfo& info) {
    const auto first = static_cast<std::uint8_t>(frames[at++]);
    std::uint32_t length = 0;
    if (!readNibble(frames, at, first >> 4, info.id) ||
        !readNibble(frames, at, first & 0x0f, length) || frames.size() - at < length) {
        return false;
    }
    info.payload = frames.substr(at, length);
    at += length;
    return true;
}

Status decodeDurability(std::string_view payload, Request& request, std::string_view& reason) {
    if (payload.size() != 1 && payload.size() != 3) {
        reason = "durability frame info must be 1 or 3 bytes";
        return Status::InvalidArguments;
    }
    const auto level = static_cast<std::uint8_t>(payload[0]);
    if (level < 1 || level > 3) {
        reason = "durability level must be 1, 2 or 3";
        return Status::DurabilityInvalidLevel;
    }
    DurabilityRequirement requirement;
    requirement.level = static_cast<DurabilityLevel>(level);
    if (payload.size() == 3) {
        const std::uint16_t timeout = readBe16(payload, 1);
        if (timeout == 0 || timeout == 0xffff) {
            reason = "durability timeout 0 and 0xffff are reserved";
            return Status::InvalidArguments;
        }
        requirement.timeoutMs = timeout;
    }
    request.durability = requirement;
    return Status::Success;
}

// decodeFramingExtras with static reasons (kept in the Request).
Status decodeFrames(std::string_view frames, Request& request, std::string_view& reason) {
    std::size_t at = 0;
    while (at < frames.size()) {
        FrameInfo info;
        if (!nextFrameInfo(frames, at, info)) {
            reason = "truncated frame info";
            return Status::InvalidArguments;
        }
        switch (static_cast<FrameInfoId>(info.id)) {
            case FrameInfoId::Reorder:
                break;  // we answer in order anyway
            case FrameInfoId::DurabilityRequirement:
                if (Status s = decodeDurability(info.payload, request, reason);
                    s != Status::Success) {
                    return s;
                }
                break;
            case FrameInfoId::PreserveTtl:
                request.preserveTtl = true;
                break;
            case FrameInfoId::OpenTracingContext:
                break;  // tracing context: accepted and ignored
            default:
                reason = "unsupported frame info id";
                return Status::NotSupported;
        }
    }
    return Status::Success;
}

}  // namespace

Status decodeFramingExtras(std::string_view frames, Request& request, std::string& reason) {
    std::string_view why;
    const Status status = decodeFrames(frames, request, why);
    reason.assign(why);
    return status;
}

ParseResult parseRequest(std::string_view input, const RequestLimits& limits) {
    ParseResult result;
    if (input.empty()) {
        return result;
    }
    const auto magic = static_cast<std::uint8_t>(input[0]);
    if (!knownMagic(magic)) {
        return invalid(result, Status::InvalidArguments, "unknown magic");
    }
    if (input.size() < kHeaderSize) {
        return result;
    }
    Request& r = result.request;
    r.magic = static_cast<Magic>(magic);
    r.opcode = static_cast<Opcode>(input[1]);
    const bool alt = r.magic == Magic::AltClientRequest;
    const std::size_t framingLength = alt ? static_cast<std::uint8_t>(input[2]) : 0;
    const std::size_t keyLength = alt ? static_cast<std::uint8_t>(input[3]) : readBe16(input, 2);
    const std::size_t extrasLength = static_cast<std::uint8_t>(input[4]);
    r.datatype = static_cast<std::uint8_t>(input[5]);
    r.vbucket = readBe16(input, 6);
    const std::size_t bodyLength = readBe32(input, 8);
    r.opaque = readBe32(input, 12);
    r.cas = readBe64(input, 16);
    result.headerRead = true;

    if (bodyLength > limits.maxBodyLength) {
        return invalid(result, Status::ValueTooLarge,
                       "body length " + std::to_string(bodyLength) + " over the limit " +
                           std::to_string(limits.maxBodyLength));
    }
    if (framingLength + extrasLength + keyLength > bodyLength) {
        return invalid(result, Status::InvalidArguments,
                       "framing extras + extras + key longer than the body");
    }
    if (input.size() < kHeaderSize + bodyLength) {
        return result;
    }
    std::string_view body = input.substr(kHeaderSize, bodyLength);
    r.framingExtras = body.substr(0, framingLength);
    r.extras = body.substr(framingLength, extrasLength);
    r.key = body.substr(framingLength + extrasLength, keyLength);
    r.value = body.substr(framingLength + extrasLength + keyLength);
    result.consumed = kHeaderSize + bodyLength;
    r.framingStatus = decodeFrames(r.framingExtras, r, r.framingError);
    result.outcome = ParseOutcome::Ok;
    return result;
}

namespace {

// What an opcode requires: extras lengths allowed (-1: any), whether a key
// is required / forbidden, whether a value is forbidden.
struct Shape {
    int extrasA = 0;
    int extrasB = 0;
    enum { KeyAny, KeyRequired, KeyForbidden } key = KeyAny;
    bool valueForbidden = false;
};

bool shapeFor(Opcode op, Shape& s) {
    using K = decltype(Shape::key);
    switch (loudVariant(op)) {
        case Opcode::Get:
        case Opcode::GetK:
        case Opcode::Delete:
            s = {0, 0, K::KeyRequired, true};
            return true;
        case Opcode::Set:
        case Opcode::Add:
        case Opcode::Replace:
            s = {8, 8, K::KeyRequired, false};
            return true;
        case Opcode::Increment:
        case Opcode::Decrement:
            s = {20, 20, K::KeyRequired, true};
            return true;
        case Opcode::Quit:
        case Opcode::Noop:
        case Opcode::Version:
        case Opcode::SaslListMechs:
            s = {0, 0, K::KeyForbidden, true};
            return true;
        case Opcode::Flush:
            s = {0, 4, K::KeyForbidden, true};
            return true;
        case Opcode::Append:
        case Opcode::Prepend:
            s = {0, 0, K::KeyRequired, false};
            return true;
        case Opcode::Stat:
            s = {0, 0, K::KeyAny, true};
            return true;
        case Opcode::Verbosity:
            s = {4, 4, K::KeyForbidden, true};
            return true;
        case Opcode::Touch:
        case Opcode::Gat:
            s = {4, 4, K::KeyRequired, true};
            return true;
        case Opcode::GetLocked:
            s = {0, 4, K::KeyRequired, true};
            return true;
        case Opcode::UnlockKey:
        case Opcode::GetReplica:
            s = {0, 0, K::KeyRequired, true};
            return true;
        case Opcode::SaslAuth:
        case Opcode::SaslStep:
        case Opcode::SelectBucket:
            s = {0, 0, K::KeyRequired, false};
            return true;
        case Opcode::GetMeta:
            s = {0, 1, K::KeyRequired, true};
            return true;
        case Opcode::GetClusterConfig:
            s = {0, 16, K::KeyForbidden, true};
            return true;
        case Opcode::ObserveSeqno:
        case Opcode::GetErrorMap:
            s = {0, 0, K::KeyForbidden, false};
            return true;
        case Opcode::SetVbucket:
            // The state in 1 byte (a JSON value may follow) or, as before
            // Couchbase 6.5, in 4 (network order).
            s = {1, 4, K::KeyForbidden, false};
            return true;
        case Opcode::GetVbucket:
            s = {0, 0, K::KeyForbidden, true};
            return true;
        case Opcode::RangeScanCreate:  // the scan in a JSON value
            s = {0, 0, K::KeyForbidden, false};
            return true;
        case Opcode::RangeScanContinue:  // id and limits
            s = {28, 28, K::KeyForbidden, true};
            return true;
        case Opcode::RangeScanCancel:  // id
            s = {16, 16, K::KeyForbidden, true};
            return true;
        case Opcode::Hello:
        case Opcode::GetCollectionsManifest:
        case Opcode::GetCollectionId:
        case Opcode::GetScopeId:
            s = {0, 0, K::KeyAny, false};
            return true;
        default:
            // Sub-document: a key and a value; the extras (path length,
            // flags, expiry, doc flags) are src/subdoc's to check.
            if (isSubdoc(op)) {
                s = {-1, -1, K::KeyRequired, false};
                return true;
            }
            return false;
    }
}

}  // namespace

Status validateShape(const Request& request, std::string& reason) {
    Shape s;
    if (!shapeFor(request.opcode, s)) {
        reason = "unknown command";
        return Status::UnknownCommand;
    }
    const auto extras = static_cast<int>(request.extras.size());
    if (s.extrasA >= 0 && extras != s.extrasA && extras != s.extrasB) {
        reason = std::string(opcodeName(request.opcode)) + ": extras length " +
                 std::to_string(extras) + " is invalid";
        return Status::InvalidArguments;
    }
    if (s.key == Shape::KeyRequired && request.key.empty()) {
        reason = std::string(opcodeName(request.opcode)) + " needs a key";
        return Status::InvalidArguments;
    }
    if (s.key == Shape::KeyForbidden && !request.key.empty()) {
        reason = std::string(opcodeName(request.opcode)) + " takes no key";
        return Status::InvalidArguments;
    }
    if (request.key.size() > kMaxBinaryKeyLength) {
        reason = "key longer than 250 bytes";
        return Status::InvalidArguments;
    }
    if (s.valueForbidden && !request.value.empty()) {
        reason = std::string(opcodeName(request.opcode)) + " takes no value";
        return Status::InvalidArguments;
    }
    if (request.opcode == Opcode::ObserveSeqno && request.value.size() != 8) {
        reason = "OBSERVE_SEQNO needs an 8-byte vbucket uuid";
        return Status::InvalidArguments;
    }
    if (request.opcode == Opcode::GetErrorMap && request.value.size() != 2) {
        reason = "GET_ERROR_MAP needs a 2-byte version";
        return Status::InvalidArguments;
    }
    if (request.opcode == Opcode::Hello && request.value.size() % 2 != 0) {
        reason = "HELLO features are 2 bytes each";
        return Status::InvalidArguments;
    }
    return Status::Success;
}

}  // namespace kvexec::protocol
