// engine/range_scans.h: the bucket's open range scans (range_scan.h), by
// id: each scan's sorted keys and how far it has got.
//
// A continue takes its scan out of service (checkOut) for the time it
// reads, so that two continues of one scan never interleave (the second
// gets Busy), and puts it back (checkIn) or closes it (close). A cancel
// of a checked-out scan marks it; its continue's checkIn closes it and
// the continue answers RangeScanCancelled.
//
// Thread safety: every member may be called from any thread; one mutex
// guards the table. A checked-out scan's fields belong to the thread that
// checked it out. Lock order: a vBucket's mutex may be held when this one
// is taken, never the other way round.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "executor/thread_annotations.h"
#include "kvexec/engine/range_scan.h"

namespace kvexec::engine {

struct OpenRangeScan {
    Vbid vbid = 0;
    CollectionId collection = kDefaultCollection;
    bool keyOnly = false;
    bool includeXattrs = false;
    // The vBucket's history branch at the create: a continue on another
    // (it stopped being active here, then became active again) ends the
    // scan with NotMyVbucket.
    std::uint64_t vbucketUuid = 0;
    std::vector<std::string> keys;  // stored keys (collection prefix in front), sorted
    std::size_t next = 0;           // the first key not returned yet
    std::chrono::steady_clock::time_point lastUsed;
    bool checkedOut = false;
};

class RangeScans {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    RangeScans(std::size_t maxOpen, std::chrono::milliseconds idleTimeout)
        : maxOpen_(maxOpen), idleTimeout_(idleTimeout) {}

    // Keeps `scan` under a new id; nullopt (nothing kept) when maxOpen
    // scans are open after closing those idle too long.
    std::optional<RangeScanId> open(std::unique_ptr<OpenRangeScan> scan, TimePoint now)
        EXCLUDES(mutex_);
    // The scan, now checked out; null with `status` KeyNotFound (not open
    // on that vBucket) or Busy (checked out already).
    OpenRangeScan* checkOut(Vbid vbid, const RangeScanId& id, Status& status, TimePoint now)
        EXCLUDES(mutex_);
    // Puts it back; false (and closed) if it was cancelled meanwhile.
    bool checkIn(const RangeScanId& id, TimePoint now) EXCLUDES(mutex_);
    // Closes a checked-out scan (completed or failed).
    void close(const RangeScanId& id) EXCLUDES(mutex_);
    // Success, or KeyNotFound. A checked-out scan is closed when its
    // continue ends (checkIn then closes it).
    Status cancel(Vbid vbid, const RangeScanId& id) EXCLUDES(mutex_);
    std::size_t size() const EXCLUDES(mutex_);
    // Closes the scans left idle for the timeout (the expiry pager calls
    // it; open and checkOut do too).
    void closeIdle(TimePoint now) EXCLUDES(mutex_);

  private:
    struct Entry {
        std::unique_ptr<OpenRangeScan> scan;
        bool cancelled = false;
    };
    // The open scan `id` of vBucket `vbid`, not cancelled; or null.
    Entry* findLocked(Vbid vbid, const RangeScanId& id) REQUIRES(mutex_);
    void closeIdleLocked(TimePoint now) REQUIRES(mutex_);
    RangeScanId newIdLocked() REQUIRES(mutex_);

    const std::size_t maxOpen_;
    const std::chrono::milliseconds idleTimeout_;
    mutable kvexec::detail::Mutex mutex_;
    std::map<RangeScanId, Entry> scans_ GUARDED_BY(mutex_);
    std::mt19937_64 idSource_ GUARDED_BY(mutex_){std::random_device{}()};
};

}  // namespace kvexec::engine
