// subdoc/path.h: sub-document paths (docs/SubDocument.md, "Path"): keys
// separated by dots, array indexes in brackets right after the array
// (`a.b[2].c`, `[0]` on a root array), `[-1]` for the last element, and
// backticks quoting the meta-characters . [ ] inside a key (a literal
// backtick inside quotes is written twice).
//
// An xattr path (the Xattr flag) starts with the xattr key, which runs to
// the first `.` or `[` and takes no backtick escapes
// (docs/ExtendedAttributes.md); the rest is an ordinary path.
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "subdoc/status.h"

namespace kvexec::subdoc {

struct PathComponent {
    // An index component when isIndex; -1 means the last element.
    bool isIndex = false;
    std::int64_t index = 0;
    std::string key;

    bool operator==(const PathComponent&) const = default;
};

struct ParsedPath {
    Status status = Status::Success;        // PathInvalid or PathTooBig on failure
    std::vector<PathComponent> components;  // empty: the root
};

// Parses a document path. The empty path is the root.
ParsedPath parsePath(std::string_view path);

// Parses an xattr path: components[0] is the xattr key (a key component),
// the rest its sub-path. Key naming violations give XattrInvalid.
ParsedPath parseXattrPath(std::string_view path);

// The xattr key of an xattr path: its bytes before the first `.` or `[`.
std::string_view xattrKeyOf(std::string_view path);

// Whether `key` is a valid xattr key: 1..15 bytes of valid UTF-8 with no
// NUL, `.` or `[`; a leading punctuation or control byte only when `_`
// (system) or `$` (virtual), and then at least 2 bytes.
bool isValidXattrKey(std::string_view key);

inline bool isSystemXattr(std::string_view key) {
    return !key.empty() && key[0] == '_';
}
inline bool isVirtualXattr(std::string_view key) {
    return !key.empty() && key[0] == '$';
}

}  // namespace kvexec::subdoc
