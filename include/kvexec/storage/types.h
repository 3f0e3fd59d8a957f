// kvexec/storage/types.h: the vocabulary of the storage layer.
//
// A vBucket (Vbid) is one shard of a bucket's key space; it lives in its own
// append-only file. A Document is one mutation of a key as it is persisted:
// its value, its sequence number (seqno, strictly increasing per vBucket)
// and whether it is a deletion (a tombstone, kept until compaction purges
// it), and the metadata the engine keeps beside it (CAS, memcached flags,
// expiry, datatype), stored and returned as given. A Revision numbers the generations of one
// vBucket's file: compaction and delete-then-recreate move to a new revision, so a handle or an
// offset of an old revision is recognisably stale.
//
// Thread safety: plain values; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvexec::storage {

using Vbid = std::uint32_t;
using Seqno = std::uint64_t;
using Revision = std::uint64_t;

struct Document {
    std::string key;
    std::string value;
    Seqno seqno = 0;
    bool deleted = false;
    std::uint64_t cas = 0;
    std::uint32_t flags = 0;
    std::uint32_t expiry = 0;  // seconds since the Unix epoch; 0: never
    std::uint8_t datatype = 0;
    // Opaque to storage: the engine keeps a SyncWrite prepare's durability
    // level here (0 for every other document).
    std::uint8_t level = 0;
    // A tombstone that the document's expiry made, not a delete: change
    // streams tell the two apart (DCP_EXPIRATION).
    bool deletedByExpiry = false;

    friend bool operator==(const Document&, const Document&) = default;
};

// How saveDocs() makes a batch durable before acknowledging it.
//   None       no sync: the batch survives a process crash (it is in the
//              page cache) but not a power loss.
//   Fdatasync  fdatasync() after the batch: it survives a power loss.
enum class SyncMode : std::uint8_t { None, Fdatasync };
std::string_view to_string(SyncMode);

}  // namespace kvexec::storage
