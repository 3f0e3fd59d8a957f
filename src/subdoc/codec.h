// subdoc/codec.h: sub-document requests and responses on the wire
// (docs/SubDocument.md, "Wire Protocol Format"). The server's binary
// parser hands over the request's extras and its value (the bytes after
// the key); these functions turn them into specs, and outcomes into
// response bodies. Integers are big-endian.
//
//   single-path extras: u16 path length, u8 path flags, [u32 expiry
//                       [u32 user flags]], [u8 doc flags]: 3, 4, 7, 8, 11
//                       or 12 bytes (lookups 3 or 4); value: path, then the
//                       spec value
//   multi-path extras:  [u32 expiry [u32 user flags]], [u8 doc flags]: 0,
//                       1, 4, 5, 8 or 9 bytes (lookups 0 or 1); value:
//                       specs, each
//     lookup:   u8 opcode, u8 flags, u16 path length, path
//     mutation: u8 opcode, u8 flags, u16 path length, u32 value length,
//               path, value
//   multi-lookup response body:   per spec: u16 status, u32 length, value
//   multi-mutation response body: on success per result: u8 index,
//                                 u16 status, u32 length, value; on
//                                 failure: u8 index, u16 status
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "subdoc/executor.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"
#include "subdoc/validate.h"

namespace kvexec::subdoc {

struct DecodedRequest {
    // Success, InvalidArguments (bad extras, truncated specs), InvalidCombo
    // (no specs, more than 16), or any status of validateRequest. The
    // request's header status is this when not Success.
    Status status = Status::Success;
    RequestKind kind = RequestKind::Lookup;
    std::vector<Spec> specs;
    std::uint8_t docFlags = 0;
    std::optional<std::uint32_t> expiry;
    // The document's flags after a mutation (HELLO SubdocBinaryXattr lets
    // a client send them); none: the stored document's stay.
    std::optional<std::uint32_t> userFlags;
};

// A single-path request with opcode 0xc5-0xcf, 0xd2 or 0xd3.
DecodedRequest decodeSinglePath(std::uint8_t opcode, std::string_view extras,
                                std::string_view value);
DecodedRequest decodeMultiLookup(std::string_view extras, std::string_view value);
DecodedRequest decodeMultiMutation(std::string_view extras, std::string_view value);

// The request value of a multi-path request (what a client sends; tests
// and tools use it).
std::string encodeLookupSpecs(std::span<const Spec> specs);
std::string encodeMutationSpecs(std::span<const Spec> specs);

// Response bodies of multi-path requests. The header status is
// LookupOutcome::status / MutationOutcome::status; a lookup whose status is
// not Success/MultiPathFailure(/Deleted) answers with an empty body.
std::string encodeLookupResults(std::span<const SpecResult> results);
std::string encodeMutationResults(const MutationOutcome& outcome);

// A single-path request's response: the header status and the body.
struct SingleResponse {
    Status status = Status::Success;
    std::string value;
};
SingleResponse singleLookupResponse(const LookupOutcome& outcome);
SingleResponse singleMutationResponse(const MutationOutcome& outcome);

}  // namespace kvexec::subdoc
