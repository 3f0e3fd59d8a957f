// kvexec/engine/operations.h: the requests a Bucket accepts and the results
// their completion callbacks receive.
//
// Thread safety: plain values. Where each callback runs is documented in
// bucket.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "kvexec/engine/item.h"
#include "kvexec/engine/status.h"

namespace kvexec::engine {

// set: store unconditionally (or only if `cas` matches, when non-zero).
// add: only if the key does not exist (a tombstone counts as absent).
// replace: only if the key exists (and `cas` matches, when non-zero).
// append / prepend: add `value` after / before the existing value; the
// existing flags, expiry and datatype are kept; NotStored if missing.
enum class StoreOperation : std::uint8_t { Set, Add, Replace, Append, Prepend };
std::string_view to_string(StoreOperation op);

struct StoreRequest {
    StoreOperation operation = StoreOperation::Set;
    Vbid vbid = 0;
    std::string key;
    std::string value;
    std::uint32_t flags = 0;
    std::uint32_t expiry = 0;
    std::uint8_t datatype = 0;
    std::uint64_t cas = 0;  // 0: no CAS check
    // Set / replace of an existing document keep its expiry and ignore
    // `expiry` (Couchbase's PreserveTtl); a new document takes `expiry`.
    // Append and prepend always keep it.
    bool preserveExpiry = false;
    Durability durability;
    // Optional: called once the write has its CAS and seqno, before anyone
    // can see it, to write them into the value (Couchbase's xattr macros
    // ${Mutation.CAS}). Runs under the vBucket's lock on the caller's
    // thread; it may rewrite bytes but must not change the value's size,
    // and must not call the bucket.
    std::function<void(std::string& value, std::uint64_t cas, Seqno seqno)> beforeQueue;
    CollectionId collection = kDefaultCollection;
    // `value` is the whole document, xattrs included: the current one's are
    // not kept even without the XATTR bit (a sub-document write that
    // removed the last one).
    bool replacesXattrs = false;
    // Set, add and replace only (else Invalid). A tombstone counts as the
    // current document: `cas` is checked against its CAS, replace takes
    // it, add fails on it (KeyExists).
    bool accessDeleted = false;
    // Store a tombstone: `value` must be xattrs only (no body; Invalid
    // otherwise), which the tombstone keeps; no expiry.
    bool storeDeleted = false;
};

struct RemoveRequest {
    Vbid vbid = 0;
    std::string key;
    std::uint64_t cas = 0;  // 0: no CAS check
    Durability durability;
    CollectionId collection = kDefaultCollection;
};

// incr / decr of a decimal unsigned 64-bit value. incr wraps at 2^64; decr
// stops at 0 (memcached's rules). A missing key is created with `initial`
// when `createIfMissing`, else the result is KeyNotFound.
struct ArithmeticRequest {
    Vbid vbid = 0;
    std::string key;
    bool increment = true;
    std::uint64_t delta = 1;
    std::uint64_t initial = 0;
    bool createIfMissing = false;
    std::uint32_t expiry = 0;  // for a created document
    std::uint64_t cas = 0;
    Durability durability;
    CollectionId collection = kDefaultCollection;
};

// The outcome of a mutation: on Success, the new CAS and mutation token.
struct MutationResult {
    Status status = Status::Success;
    std::uint64_t cas = 0;
    MutationToken token;
};

struct ArithmeticResult {
    Status status = Status::Success;
    std::uint64_t value = 0;  // the counter after the operation
    std::uint64_t cas = 0;
    MutationToken token;
};

// get / touch (get-and-touch): the document. getMeta: the item has no value
// and may be a tombstone (meta.deleted).
struct GetResult {
    Status status = Status::Success;
    Item item;
};

// One live document as Bucket::listKeys reports it: its key, metadata and
// value size, without the value.
struct KeySummary {
    std::string key;
    ItemMeta meta;
    std::size_t valueSize = 0;
    CollectionId collection = kDefaultCollection;
};

// The persisted and the current (in-memory) high seqno of a vBucket.
struct ObserveSeqnoResult {
    Status status = Status::Success;
    std::uint64_t vbucketUuid = 0;
    Seqno persistedSeqno = 0;
    Seqno currentSeqno = 0;
    Seqno purgeSeqno = 0;  // tombstones below it may be gone (compaction)
};

using MutationCallback = std::function<void(const MutationResult&)>;
using ArithmeticCallback = std::function<void(const ArithmeticResult&)>;
using GetCallback = std::function<void(const GetResult&)>;
using StatusCallback = std::function<void(Status)>;

}  // namespace kvexec::engine
