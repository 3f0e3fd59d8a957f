// kvexec/engine/range_scan.h: range scans and random samples of one
// collection in one vBucket (Couchbase's RANGE_SCAN_CREATE / CONTINUE /
// CANCEL, docs/range_scans in kv_engine): what the SDKs' collection.scan
// (range, prefix and sampling scans) runs on, one scan per vBucket.
//
// A scan is created (Bucket::createRangeScan), then continued batch by
// batch until it completes (Bucket::continueRangeScan), or cancelled.
//
// What a scan returns (kvexec's snapshot, which differs from kv_engine's
// disk snapshot): creating it lists, under the vBucket's lock, the keys of
// the collection that are live then and in range (or sampled), in key
// order (bytes compared unsigned). Each continue reads those keys'
// current documents: a key deleted or expired since the create is skipped,
// one written since shows its newer value, and one created since is not
// returned. So every document that lives through the whole scan is
// returned exactly once, in key order. A SyncWrite still pending is not
// seen (its committed document, if any, is).
//
// Lifetime: a scan lives until it completes, is cancelled, or is left
// idle (not continued) for BucketConfig::rangeScanIdleTimeout (closed by
// the next create or continue, or by the expiry pager). A continue that
// finds its vBucket no longer active here, or active on a newer history
// branch than at the create (NotMyVbucket), or its collection dropped
// (UnknownCollection) also ends it.
//
// Thread safety: plain values.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kvexec/engine/collections.h"
#include "kvexec/engine/item.h"
#include "kvexec/engine/status.h"

namespace kvexec::engine {

// 16 bytes the engine makes up at random (a v4 UUID's worth); clients
// echo them back as they are.
using RangeScanId = std::array<std::uint8_t, 16>;

// The keys from start to end, each end inclusive unless marked exclusive.
struct KeyRange {
    std::string start;
    bool startExclusive = false;
    std::string end;
    bool endExclusive = false;
};

// About `samples` keys of the collection, each kept with probability
// samples / (live keys), drawn from a generator seeded with `seed` (the
// same seed over the same keys keeps the same ones). Every key when the
// collection holds no more than `samples`.
struct KeySample {
    std::uint64_t seed = 0;
    std::uint64_t samples = 0;  // must be above 0
};

// What the vBucket must be for the create to succeed (a client scanning
// "at least as new as" a mutation it saw).
struct SnapshotRequirements {
    std::uint64_t vbucketUuid = 0;  // its newest history branch (VbUuidNotEqual)
    Seqno seqno = 0;                // persisted up to here (TempFail until then)
    bool seqnoExists = false;       // a document still holds this seqno (NotStored)
    // How long the create with a callback waits for `seqno` to be
    // persisted before it answers TempFail (0: at once).
    std::chrono::milliseconds timeout{0};
};

struct RangeScanRequest {
    Vbid vbid = 0;
    CollectionId collection = kDefaultCollection;
    std::variant<KeyRange, KeySample> keys;
    bool keyOnly = false;  // batches carry keys and metadata, no values
    // Values keep their extended attributes (kvexec/engine/xattrs.h) and
    // the XATTR datatype bit; otherwise both are taken off. Not with keyOnly.
    bool includeXattrs = false;
    std::optional<SnapshotRequirements> snapshot;
};

// Success with the scan's id; KeyNotFound when no key is in range (no scan
// is kept); Invalid (a sample of 0, a key over 250 bytes, keyOnly with
// includeXattrs); NotMyVbucket;
// TempFail (pending vBucket, warmup, seqno not persisted yet);
// UnknownCollection; VbUuidNotEqual; NotStored (seqnoExists);
// Busy when BucketConfig::maxRangeScans scans are open.
struct RangeScanCreateResult {
    Status status = Status::Success;
    RangeScanId id{};
};
using RangeScanCreateCallback = std::function<void(const RangeScanCreateResult&)>;

// Where a continue stops; 0: no limit of that kind. It always returns at
// least one document unless the scan ends. Bytes count each document's
// key, value and 25 bytes of metadata.
struct RangeScanLimits {
    std::size_t items = 0;
    std::chrono::milliseconds time{0};
    std::size_t bytes = 0;
};

// Success with `items` (keys without their collection; values empty for a
// key-only scan) and whether the scan is complete (then it is closed);
// KeyNotFound for a scan that is not open (never created, completed,
// cancelled, or idle too long); Busy while another continue of it runs;
// RangeScanCancelled when a cancel came while this continue read (the
// items read are returned); NotMyVbucket (the vBucket is not active here,
// or became active again since the create) or UnknownCollection, which
// end the scan.
struct RangeScanBatch {
    Status status = Status::Success;
    bool complete = false;
    bool keyOnly = false;  // the scan's RangeScanRequest::keyOnly
    std::vector<Item> items;
};

}  // namespace kvexec::engine
