#include "pillowfight/subdoc_request.h"

#include <cstdio>

#include "protocol/binary_response.h"
#include "subdoc/codec.h"
#include "subdoc/status.h"

namespace kvexec::pillowfight {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr std::uint16_t kFirstSubdocStatus = 0xc0;

bool isMultiPathFailure(Status status) {
    const auto code = static_cast<subdoc::Status>(status);
    return code == subdoc::Status::MultiPathFailure ||
           code == subdoc::Status::MultiPathFailureDeleted;
}

std::string describe(std::size_t index, std::uint16_t status) {
    char code[16];
    std::snprintf(code, sizeof code, " (0x%02x)", static_cast<unsigned>(status));
    return "spec " + std::to_string(index) + ": " + statusName(static_cast<Status>(status)) + code;
}

// Lookup body: per spec u16 status, u32 length, value.
std::string failedLookupSpec(std::string_view body) {
    constexpr std::size_t kSpecHeader = 6;
    for (std::size_t at = 0, index = 0; at + kSpecHeader <= body.size(); ++index) {
        const std::uint16_t status = protocol::readBe16(body, at);
        if (status != 0) {
            return describe(index, status);
        }
        at += kSpecHeader + protocol::readBe32(body, at + 2);
    }
    return {};
}

// Mutation failure body: u8 index, u16 status.
std::string failedMutationSpec(std::string_view body) {
    if (body.size() < 3) {
        return {};
    }
    return describe(static_cast<std::uint8_t>(body[0]), protocol::readBe16(body, 1));
}

}  // namespace

subdoc::Spec lookupSpec(std::string path) {
    return {subdoc::Opcode::Get, 0, std::move(path), {}};
}

subdoc::Spec upsertSpec(std::string path, std::string jsonValue) {
    return {subdoc::Opcode::DictUpsert, 0, std::move(path), std::move(jsonValue)};
}

void appendLookupIn(std::string& out, protocol::RequestHeader header, std::string_view key,
                    std::span<const subdoc::Spec> specs) {
    header.opcode = Opcode::SubdocMultiLookup;
    protocol::appendRequest(out, header, {}, {}, key, subdoc::encodeLookupSpecs(specs));
}

void appendMutateIn(std::string& out, protocol::RequestHeader header,
                    std::string_view framingExtras, std::string_view key,
                    std::span<const subdoc::Spec> specs) {
    header.opcode = Opcode::SubdocMultiMutation;
    protocol::appendRequest(out, header, framingExtras, {}, key,
                            subdoc::encodeMutationSpecs(specs));
}

std::string statusName(Status status) {
    if (static_cast<std::uint16_t>(status) >= kFirstSubdocStatus) {
        return subdoc::statusName(static_cast<subdoc::Status>(status));
    }
    return std::string(protocol::statusText(status));
}

std::string failedSpec(const protocol::Response& response) {
    if (!isMultiPathFailure(response.status)) {
        return {};
    }
    return response.opcode == Opcode::SubdocMultiLookup ? failedLookupSpec(response.value)
                                                        : failedMutationSpec(response.value);
}

}  // namespace kvexec::pillowfight
