// engine/stored_value.h: a document as a vBucket's hash table holds it
// (hash_table.h): its value and metadata, live or a tombstone.
//
// Thread safety: plain data; its vBucket's mutex guards it (vbucket.h).
#pragma once

#include <string>

#include "kvexec/engine/item.h"

namespace kvexec::engine {

struct StoredValue {
    std::string value;
    ItemMeta meta;
    // A tombstone its expiry made (expireLocked, or its active's
    // expiration on a replica): it is queued, persisted and streamed as
    // an Expiration rather than a Deletion.
    bool deletedByExpiry = false;
};

}  // namespace kvexec::engine
