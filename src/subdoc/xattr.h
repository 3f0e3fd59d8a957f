// subdoc/xattr.h: the extended-attribute blob stored in front of a body
// whose datatype has the XATTR bit (docs/Document.md, "XAttr"):
//
//   u32 (big-endian) length of the pairs that follow (not counting itself)
//   repeated: u32 (big-endian) length of the pair, key, 0x00, value, 0x00
//
// Keys are xattr keys (subdoc/path.h), values JSON text. System xattrs
// are those whose key starts with `_`.
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvexec::subdoc {

inline constexpr std::uint8_t kDatatypeJson = 0x01;
inline constexpr std::uint8_t kDatatypeSnappy = 0x02;
inline constexpr std::uint8_t kDatatypeXattr = 0x04;

struct XattrPair {
    std::string key;
    std::string value;
    bool operator==(const XattrPair&) const = default;
};

struct SplitValue {
    std::vector<XattrPair> xattrs;
    std::string_view body;  // a view into the stored bytes
};

// Splits a stored value into its xattrs and body. Without the XATTR bit
// the whole value is the body. nullopt when the blob is malformed
// (lengths past the end, a pair without its two NULs, an empty key).
std::optional<SplitValue> splitValue(std::string_view stored, std::uint8_t datatype);

// The blob for `xattrs` (empty string when there are none: then the
// stored value carries no XATTR bit).
std::string encodeXattrs(const std::vector<XattrPair>& xattrs);

// Where each pair's value text starts inside encodeXattrs(xattrs)
// (same order), so that callers can patch values in place.
std::vector<std::size_t> valueOffsets(const std::vector<XattrPair>& xattrs);

}  // namespace kvexec::subdoc
