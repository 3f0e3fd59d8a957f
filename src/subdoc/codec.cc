#include "subdoc/codec.h"

namespace kvexec::subdoc {

namespace {

std::uint32_t readBE(std::string_view bytes, std::size_t at, std::size_t width) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < width; ++i) {
        v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    }
    return v;
}

void appendBE(std::string& out, std::uint32_t v, std::size_t width) {
    for (std::size_t i = width; i-- > 0;) {
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
}

// Reads a mutation's optional extras after `at`: [u32 expiry [u32 user
// flags]], [u8 doc flags], told apart by their length.
bool readMutationExtras(std::string_view extras, std::size_t at, DecodedRequest& out) {
    const std::size_t n = extras.size() - at;
    if (n != 0 && n != 1 && n != 4 && n != 5 && n != 8 && n != 9) {
        return false;
    }
    if (n >= 4) {
        out.expiry = readBE(extras, at, 4);
    }
    if (n >= 8) {
        out.userFlags = readBE(extras, at + 4, 4);
    }
    if (n % 2 == 1) {
        out.docFlags = static_cast<std::uint8_t>(extras.back());
    }
    return true;
}

// Reads multi-path extras (expiry, user flags and doc flags by length).
bool readMultiExtras(std::string_view extras, bool mutation, DecodedRequest& out) {
    if (mutation) {
        return readMutationExtras(extras, 0, out);
    }
    if (extras.size() == 1) {
        out.docFlags = static_cast<std::uint8_t>(extras[0]);
    }
    return extras.size() <= 1;
}

// Reads the specs of a multi-path value; InvalidArguments when one is
// truncated, InvalidCombo when more than kMaxSpecs are present.
Status readSpecs(std::string_view value, bool mutation, std::vector<Spec>& specs) {
    const std::size_t header = mutation ? 8 : 4;
    std::size_t at = 0;
    while (at < value.size()) {
        if (specs.size() == kMaxSpecs) {
            return Status::InvalidCombo;
        }
        if (value.size() - at < header) {
            return Status::InvalidArguments;
        }
        Spec spec;
        spec.opcode = static_cast<Opcode>(static_cast<std::uint8_t>(value[at]));
        spec.flags = static_cast<std::uint8_t>(value[at + 1]);
        const std::size_t pathLength = readBE(value, at + 2, 2);
        const std::size_t valueLength = mutation ? readBE(value, at + 4, 4) : 0;
        at += header;
        if (pathLength > value.size() - at || valueLength > value.size() - at - pathLength) {
            return Status::InvalidArguments;
        }
        spec.path = std::string(value.substr(at, pathLength));
        spec.value = std::string(value.substr(at + pathLength, valueLength));
        at += pathLength + valueLength;
        specs.push_back(std::move(spec));
    }
    return Status::Success;
}

DecodedRequest decodeMulti(std::string_view extras, std::string_view value, bool mutation) {
    DecodedRequest out;
    out.kind = mutation ? RequestKind::Mutation : RequestKind::Lookup;
    if (!readMultiExtras(extras, mutation, out)) {
        out.status = Status::InvalidArguments;
        return out;
    }
    out.status = readSpecs(value, mutation, out.specs);
    if (out.status == Status::Success) {
        out.status = validateRequest(out.specs, out.kind, out.docFlags);
    }
    if (out.status != Status::Success) {
        out.specs.clear();
    }
    return out;
}

std::string encodeSpecs(std::span<const Spec> specs, bool mutation) {
    std::string out;
    for (const Spec& spec : specs) {
        out.push_back(static_cast<char>(spec.opcode));
        out.push_back(static_cast<char>(spec.flags));
        appendBE(out, static_cast<std::uint32_t>(spec.path.size()), 2);
        if (mutation) {
            appendBE(out, static_cast<std::uint32_t>(spec.value.size()), 4);
        }
        out += spec.path;
        if (mutation) {
            out += spec.value;
        }
    }
    return out;
}

}  // namespace

DecodedRequest decodeSinglePath(std::uint8_t opcode, std::string_view extras,
                                std::string_view value) {
    DecodedRequest out;
    const auto traits = traitsOf(opcode);
    const std::size_t n = extras.size();
    if (!traits || !traits->singlePath) {
        out.status = Status::InvalidArguments;
        return out;
    }
    out.kind = traits->mutation ? RequestKind::Mutation : RequestKind::Lookup;
    const bool validLength =
        n >= 3 && (traits->mutation ? readMutationExtras(extras, 3, out) : (n == 3 || n == 4));
    if (!validLength || readBE(extras, 0, 2) > value.size()) {
        out.status = Status::InvalidArguments;
        return out;
    }
    const std::size_t pathLength = readBE(extras, 0, 2);
    Spec spec;
    spec.opcode = static_cast<Opcode>(opcode);
    spec.flags = static_cast<std::uint8_t>(extras[2]);
    spec.path = std::string(value.substr(0, pathLength));
    spec.value = std::string(value.substr(pathLength));
    if (n == 4 && !traits->mutation) {
        out.docFlags = static_cast<std::uint8_t>(extras[3]);
    }
    out.specs.push_back(std::move(spec));
    out.status = validateRequest(out.specs, out.kind, out.docFlags);
    // As in Couchbase, only a single path needs Mkdoc or Add beside
    // CreateAsDeleted; a multi-mutation may restage a tombstone with its
    // CAS (transactions do).
    const bool creates = (out.docFlags & (doc_flag::Mkdoc | doc_flag::Add)) != 0;
    if (out.status == Status::Success && (out.docFlags & doc_flag::CreateAsDeleted) && !creates) {
        out.status = Status::InvalidArguments;
    }
    if (out.status != Status::Success) {
        out.specs.clear();
    }
    return out;
}

DecodedRequest decodeMultiLookup(std::string_view extras, std::string_view value) {
    return decodeMulti(extras, value, false);
}

DecodedRequest decodeMultiMutation(std::string_view extras, std::string_view value) {
    return decodeMulti(extras, value, true);
}

std::string encodeLookupSpecs(std::span<const Spec> specs) {
    return encodeSpecs(specs, false);
}

std::string encodeMutationSpecs(std::span<const Spec> specs) {
    return encodeSpecs(specs, true);
}

std::string encodeLookupResults(std::span<const SpecResult> results) {
    std::string out;
    for (const SpecResult& r : results) {
        appendBE(out, wireValue(r.status), 2);
        appendBE(out, static_cast<std::uint32_t>(r.value.size()), 4);
        out += r.value;
    }
    return out;
}

std::string encodeMutationResults(const MutationOutcome& outcome) {
    std::string out;
    if (outcome.status == Status::MultiPathFailure ||
        outcome.status == Status::MultiPathFailureDeleted) {
        out.push_back(static_cast<char>(outcome.failedIndex));
        appendBE(out, wireValue(outcome.failedStatus), 2);
        return out;
    }
    if (outcome.status != Status::Success && outcome.status != Status::SuccessDeleted) {
        return out;
    }
    for (const auto& [index, value] : outcome.results) {
        out.push_back(static_cast<char>(index));
        appendBE(out, wireValue(Status::Success), 2);
        appendBE(out, static_cast<std::uint32_t>(value.size()), 4);
        out += value;
    }
    return out;
}

SingleResponse singleLookupResponse(const LookupOutcome& outcome) {
    if (outcome.results.empty()) {
        return {outcome.status, {}};
    }
    const SpecResult& r = outcome.results.front();
    if (r.status == Status::Success && outcome.status == Status::SuccessDeleted) {
        return {Status::SuccessDeleted, r.value};
    }
    return {r.status, r.value};
}

SingleResponse singleMutationResponse(const MutationOutcome& outcome) {
    if (outcome.status == Status::MultiPathFailure ||
        outcome.status == Status::MultiPathFailureDeleted) {
        return {outcome.failedStatus, {}};
    }
    SingleResponse response{outcome.status, {}};
    if (!outcome.results.empty()) {
        response.value = outcome.results.front().second;
    }
    return response;
}

}  // namespace kvexec::subdoc
