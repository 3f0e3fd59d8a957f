// shard.h: one slice of the Wheel backend's tasks, chosen by task id.
//
// Each shard has its own mutex, its own id -> Record map and its own timing
// wheel, so that callers re-arming different tasks (TimeoutAddCancel from
// several front-end threads) rarely meet on a lock.
//
// Thread safety: everything here, and the shard-guarded fields of its
// records (record.h), requires `mutex`.
#pragma once

#include <cassert>
#include <unordered_map>

#include "executor/thread_annotations.h"
#include "executor/wheel/record.h"
#include "kvexec/timer_wheel.h"

namespace kvexec::wheel {

// A task's shard is id % kShardCount, so id / kShardCount numbers a
// shard's ids densely: tasks created one after another land in neighbouring
// buckets, and re-arming a million timeouts in turn reads one bucket line per
// eight re-arms instead of one per re-arm (the 1M/1k flatness of
// TimeoutAddCancel went from about 0.5 to about 0.75).
inline constexpr std::size_t kShardCount = 16;
struct ShardIdHash {
    std::size_t operator()(TaskId id) const noexcept { return id / kShardCount; }
};

struct Shard {
    Shard() : wheel(Clock::now(), std::chrono::milliseconds(1)) {}

    Record* findLocked(TaskId id) REQUIRES(mutex) {
        auto it = records.find(id);
        return it == records.end() ? nullptr : &it->second;
    }

    detail::Mutex mutex;
    // Records live in the map's nodes (stable addresses, one allocation,
    // one cache miss fewer per lookup than a pointer to a separate record).
    std::unordered_map<TaskId, Record, ShardIdHash> records GUARDED_BY(mutex);
    TimerWheel wheel GUARDED_BY(mutex);
};

// Tells the analysis that `r`'s shard lock is the one held: `r` was found
// in `s` (checked when assertions are on), so r.shard is s. The Locked
// steps of WheelPool require r.shard.mutex.
inline void heldFor(const Shard& s, const Record& r) REQUIRES(s.mutex)
    ASSERT_CAPABILITY(r.shard.mutex) {
    assert(&r.shard == &s);
    (void)s;
    (void)r;
}

}  // namespace kvexec::wheel
