// subdoc/virtual_xattr.h: the virtual xattrs a lookup may read (keys
// starting with `$`, never stored): `$document`, the document's metadata,
// and `$XTOC`, the keys of its stored xattrs. Also the `${$document...}`
// macros a mutation may use, which expand to the document's metadata
// before the mutation.
//
// Pure functions. Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "subdoc/document_meta.h"
#include "subdoc/json_text.h"
#include "subdoc/xattr.h"

namespace kvexec::subdoc {

// Hex as Couchbase writes CAS and seqno: "0x" and 16 lowercase digits.
std::string hex64(std::uint64_t v);
std::string hex32(std::uint32_t v);

// `$document`: CAS, vbucket_uuid, seqno (hex strings), revid ("1"), exptime, flags,
// value_bytes (numbers), datatype (["json","xattr"], ["raw"] ...),
// deleted, last_modified (seconds of the CAS as a string), value_crc32c.
Json documentVattr(const DocumentMeta& meta, std::string_view body);

// The virtual xattr `key` ($document, $vbucket: {"HLC": {"now", "mode"}},
// $XTOC); nullopt when there is no such virtual xattr.
std::optional<Json> virtualXattr(std::string_view key, const DocumentMeta& meta,
                                 std::string_view body, const std::vector<XattrPair>& xattrs);

}  // namespace kvexec::subdoc
