// kvexec/engine/item.h: the values an engine operation takes and returns:
// documents with their metadata, durability requirements, mutation tokens.
//
// Times: `expiry` is an absolute time in seconds since the Unix epoch (0:
// never). The server converts the protocol's relative form (<= 30 days)
// itself. CAS values are never 0 for a stored document; a CAS of 0 in a
// request means "no CAS check".
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "kvexec/engine/collections.h"
#include "kvexec/engine/status.h"
#include "kvexec/storage/types.h"

namespace kvexec::engine {

using Vbid = storage::Vbid;
using Seqno = storage::Seqno;

// The metadata of a document (memcached's flags / exptime / datatype, and
// the engine's CAS and seqno).
struct ItemMeta {
    std::uint64_t cas = 0;
    Seqno seqno = 0;
    std::uint32_t flags = 0;
    std::uint32_t expiry = 0;   // seconds since the Unix epoch; 0: never
    std::uint8_t datatype = 0;  // raw bits, e.g. 0x01 JSON (not interpreted)
    bool deleted = false;
};

// The CAS a read reports for a document under a lock (getLocked): only the
// lock's owner, who got the real one, can write it.
inline constexpr std::uint64_t kLockedCas = ~std::uint64_t{0};

struct Item {
    Vbid vbid = 0;
    std::string key;  // without its collection
    std::string value;
    ItemMeta meta;
    CollectionId collection = kDefaultCollection;
};

// Identifies a mutation for observe-seqno and change streams: the
// vBucket's uuid (a new random value each time the bucket is opened: there
// is no persisted failover log yet) and the mutation's seqno.
struct MutationToken {
    std::uint64_t vbucketUuid = 0;
    Seqno seqno = 0;
};

// Durability levels of a SyncWrite (Couchbase's names): a majority of the
// vBucket's chain must hold the write, in memory (Majority), with the
// active's copy persisted (MajorityAndPersistToActive), or persisted on
// each node of the majority (PersistToMajority). On a single node the
// majority is the active alone: Majority commits once the write is queued,
// the two persist levels once it is persisted here.
enum class DurabilityLevel : std::uint8_t {
    None,
    Majority,
    MajorityAndPersistToActive,
    PersistToMajority,
};
std::string_view to_string(DurabilityLevel level);

struct Durability {
    DurabilityLevel level = DurabilityLevel::None;
    // 0: BucketConfig::defaultSyncWriteTimeout.
    std::chrono::milliseconds timeout{0};
};

}  // namespace kvexec::engine
