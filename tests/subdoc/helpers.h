// Helpers shared by the sub-document tests: specs, documents and a
// stored value with xattrs, written briefly.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "subdoc/executor.h"
#include "subdoc/spec.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc::test {

inline Spec spec(Opcode op, std::string path, std::string value = {}, std::uint8_t flags = 0) {
    return Spec{op, flags, std::move(path), std::move(value)};
}

inline Spec xspec(Opcode op, std::string path, std::string value = {}, std::uint8_t flags = 0) {
    return Spec{op, static_cast<std::uint8_t>(flags | path_flag::Xattr), std::move(path),
                std::move(value)};
}

inline DocumentMeta jsonMeta() {
    DocumentMeta meta;
    meta.cas = 0x1234;
    meta.datatype = kDatatypeJson;
    return meta;
}

// One lookup spec over a plain JSON document.
inline SpecResult lookupOne(std::string_view doc, const Spec& s) {
    const std::vector<Spec> specs{s};
    auto outcome = lookup(doc, jsonMeta(), specs);
    return outcome.results.empty() ? SpecResult{outcome.status, {}} : outcome.results.front();
}

// One mutation spec over a plain JSON document.
inline MutationOutcome mutateOne(std::optional<std::string_view> doc, const Spec& s,
                                 std::uint8_t docFlags = 0) {
    const std::vector<Spec> specs{s};
    return mutate(doc, jsonMeta(), specs, docFlags);
}

// The status a single spec ended with (failedStatus on a multi-path failure).
inline Status statusOf(const MutationOutcome& o) {
    return o.status == Status::MultiPathFailure || o.status == Status::MultiPathFailureDeleted
               ? o.failedStatus
               : o.status;
}

}  // namespace kvexec::subdoc::test
