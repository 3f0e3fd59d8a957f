// kvexec/engine/xattrs.h: where a document's extended attributes live in
// its value. As in Couchbase, a value whose datatype has the XATTR bit
// starts with the attributes' blob (a big-endian u32 length, then that
// many bytes of key/value pairs) and the body follows. The engine keeps
// the blob across the mutations that change only the body (a set or
// replace whose datatype lacks the XATTR bit, append, prepend, incr and
// decr); reads return the whole value, and the server gives a client the
// body alone (documentBody). The blob's inside is the sub-document
// layer's business (src/subdoc/xattr.h).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvexec::engine {

inline constexpr std::uint8_t kDatatypeJson = 0x01;
inline constexpr std::uint8_t kDatatypeXattr = 0x04;

// The blob at the front of `value` (length prefix included); empty when the
// datatype has no XATTR bit. A blob that claims more bytes than the value
// has is taken to end with the value.
std::string_view xattrBlob(std::string_view value, std::uint8_t datatype);

// `value` without its blob.
std::string_view documentBody(std::string_view value, std::uint8_t datatype);

// A blob of the system xattrs alone (keys starting with '_'), which a
// deletion keeps in the tombstone as Couchbase does; empty when there are
// none or the blob is malformed (a pair running past its end).
std::string systemXattrs(std::string_view value, std::uint8_t datatype);

}  // namespace kvexec::engine
