// shard.h: one slice of the Wheel backend's tasks, chosen by task id.
//
// Each shard has its own mutex, its own id -> Record index and its own timing
// wheel, so that callers re-arming different tasks (TimeoutAddCancel from
// several front-end threads) rarely meet on a lock.
//
// Thread safety: everything here, and the shard-guarded fields of its
// records (record.h), requires `mutex`.
#pragma once

#include <cassert>
#include <memory>
#include <utility>
#include <vector>

#include "executor/thread_annotations.h"
#include "executor/wheel/id_table.h"
#include "executor/wheel/record.h"
#include "executor/wheel/record_slab.h"
#include "kvexec/timer_wheel.h"

namespace kvexec::wheel {

// A task's shard is id % kShardCount, so id / kShardCount numbers a
// shard's ids densely: the index (id_table.h) keeps tasks created one after
// another in neighbouring slots. Eight, not more: a thread re-arming tasks
// created together walks every shard, and each shard is two memory streams
// (index slots, records); at 16 shards that was 33 streams with the tasks,
// more than the core's prefetcher follows (TimeoutAddCancel, a million
// timeouts, one thread: 13.9M -> 15.1M items/s at 8), while the hand-off
// rows, which meet on shard locks, measured level.
inline constexpr std::size_t kShardCount = 8;

// Cache-line aligned: threads working in neighbouring shards must not
// share a line (one's mutex beside the other's wheel).
struct alignas(64) Shard {
    Shard() : wheel(Clock::now(), std::chrono::milliseconds(1)) {}
    // WheelPool::shutdown() (run by the pool's destructor) frees every
    // record first: the slab's chunks go without running destructors.
    ~Shard() { assert(records.size() == 0); }
    Shard(const Shard&) = delete;
    Shard& operator=(const Shard&) = delete;

    using Records = IdTable<Record, Task, kShardCount>;

    Record* findLocked(TaskId id) REQUIRES(mutex) { return records.find(id).value; }
    // The record and its task, both from the index: a caller can start
    // fetching the task without waiting for the record.
    Records::Hit findWithTaskLocked(TaskId id) REQUIRES(mutex) {
        const Records::Hit hit = records.find(id);
        assert(hit.value == nullptr || hit.value->task.get() == hit.companion);
        return hit;
    }

    Record& addLocked(TaskPtr task, detail::OwnerState& owner) REQUIRES(mutex) {
        const TaskId id = task->id();
        Record* r = slab.make(std::move(task), owner, *this);
        records.insert(id, r, r->task.get());
        return *r;
    }

    // Takes the record of `id` out of the index and frees it (its task
    // already moved out).
    void removeLocked(TaskId id) REQUIRES(mutex) {
        Record* r = records.erase(id);
        assert(r != nullptr);
        freeLocked(r);
    }

    // Every record, for the rare walks (shutdown, unregister, stats).
    template <class F>
    void forEachLocked(F&& f) REQUIRES(mutex) {
        records.forEach(f);
    }

    // Shutdown: forgets every record; the caller frees each (freeLocked)
    // once done with it.
    std::vector<Record*> takeAllLocked() REQUIRES(mutex) { return records.takeAll(); }
    void freeLocked(Record* r) REQUIRES(mutex) { slab.destroy(r); }

    detail::Mutex mutex;
    RecordSlab slab GUARDED_BY(mutex);
    Records records GUARDED_BY(mutex);
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
