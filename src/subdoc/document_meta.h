// subdoc/document_meta.h: what the engine knows of a stored document
// besides its bytes; the `$document` virtual xattr reports it.
//
// A plain value. Safe from any thread.
#pragma once

#include <cstdint>

namespace kvexec::subdoc {

struct DocumentMeta {
    std::uint64_t cas = 0;
    std::uint64_t seqno = 0;
    std::uint32_t expiry = 0;  // absolute unix seconds, 0 = none
    std::uint32_t flags = 0;
    std::uint8_t datatype = 0;      // 0x01 JSON, 0x04 XATTR (the stored value begins with a blob)
    bool deleted = false;           // a tombstone (only its xattrs remain)
    std::uint64_t vbucketUuid = 0;  // reported as `$document.vbucket_uuid`
    // The vBucket's hybrid logical clock now, in nanoseconds since the
    // epoch (the clock CAS values come from): `$vbucket.HLC.now`, which
    // transactions compare with the CAS their records were written at.
    std::uint64_t hlcNow = 0;
};

}  // namespace kvexec::subdoc
