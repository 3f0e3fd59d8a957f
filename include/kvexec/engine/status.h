// kvexec/engine/status.h: the outcome of an engine operation.
//
// Each Status has the numeric value of the memcached / Couchbase binary
// protocol status it stands for, so a server maps it to the wire one to one
// (static_cast<std::uint16_t>). Where the text protocol differs (NOT_STORED
// for an add of an existing key, EXISTS for a CAS mismatch), the server
// translates from these.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <string_view>

namespace kvexec::engine {

enum class Status : std::uint16_t {
    Success = 0x00,
    // The key does not exist (get, replace, delete, touch, incr without
    // an initial value, a CAS operation on a missing key).
    KeyNotFound = 0x01,
    // add of an existing key, or a CAS that does not match (both are
    // KEY_EEXISTS on the binary protocol).
    KeyExists = 0x02,
    TooBig = 0x03,         // value larger than BucketConfig::maxItemSize
    Invalid = 0x04,        // bad arguments: empty or oversized key, bad durability timeout
    NotStored = 0x05,      // append / prepend to a missing key
    DeltaBadValue = 0x06,  // incr / decr of a value that is not a decimal u64
    NotMyVbucket = 0x07,   // vbid >= BucketConfig::numVBuckets
    // The document is locked (getLocked) and the request does not carry the
    // lock's CAS; or getLocked of a document already locked.
    Locked = 0x09,
    NotLocked = 0x0e,  // unlock of a document that holds no lock
    NoMemory = 0x82,   // an item that could never fit the memory quota
    NotSupported = 0x83,
    // Persistence failed (e.g. ENOSPC) for the batch holding a durable write:
    // the write was rolled back in memory and is not acknowledged.
    Internal = 0x84,
    // Too many of something open at once (range scans); retry later.
    Busy = 0x85,
    // Temporary: the memory quota is full, or warmup has not finished.
    TempFail = 0x86,
    // The request names a collection the manifest does not hold (never
    // created, or dropped).
    UnknownCollection = 0x88,
    DurabilityInvalidLevel = 0xa0,
    DurabilityImpossible = 0xa1,
    SyncWriteInProgress = 0xa2,  // another SyncWrite on this key is pending
    // The SyncWrite timed out (or the bucket shut down) before its level was
    // met: it may or may not have been applied.
    SyncWriteAmbiguous = 0xa3,
    // The key has a SyncWrite inherited from an earlier term (a promoted
    // replica's, or one warmup kept) that may have been acknowledged: its
    // committed value may be stale until the prepare commits. Retry.
    SyncWriteReCommitInProgress = 0xa4,
    // A range scan cancelled while this continue of it read (range_scan.h).
    RangeScanCancelled = 0xa5,
    // A range scan's snapshot requirements named another history branch
    // of the vBucket (range_scan.h).
    VbUuidNotEqual = 0xa8,
};

// "Success", "KeyNotFound", ...
std::string_view to_string(Status status);

}  // namespace kvexec::engine
