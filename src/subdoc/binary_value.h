// subdoc/binary_value.h: binary xattr values (the BinaryValue path flag,
// HELLO SubdocBinaryXattr 0x21). An xattr holds JSON, so bytes that are not
// JSON are kept as a JSON string, "cb-content-base64-encoded:" and their
// base64, as Couchbase keeps them (docs/ExtendedAttributes.md, "Binary
// values"): a mutation with the flag stores its value so, a GET with the
// flag returns the bytes again, and a GET without it returns the string.
//
// Pure functions. Safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvexec::subdoc {

inline constexpr std::string_view kBinaryValuePrefix = "cb-content-base64-encoded:";

// `bytes` as the JSON string that an xattr keeps (quotes included).
std::string encodeBinaryValue(std::string_view bytes);

// The bytes a JSON string made by encodeBinaryValue holds (quotes
// optional); nullopt when `json` is not such a string.
std::optional<std::string> decodeBinaryValue(std::string_view json);

}  // namespace kvexec::subdoc
