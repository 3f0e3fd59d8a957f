// task_queue.h: the per-TaskType queue of the Classic ("CB3") design.
//
// Two heaps under one mutex: the future heap orders tasks by wake time, the
// ready heap by priority then wake time. Workers move due tasks from future
// to ready and take the best ready one. Changing the wake time of a task in
// the future heap (wake, snooze) finds it by a linear scan and rebuilds the
// heap with std::make_heap: O(n) per call. That is CB3's cost curve, kept on
// purpose: this backend is the baseline the benchmarks compare against.
//
// Thread safety: every member whose name ends in Locked requires `mutex`;
// the counters are guarded by it too. Worker threads wait on `wakeup`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <vector>

#include "executor/classic/entry.h"
#include "executor/thread_annotations.h"

namespace kvexec::classic {

class TaskQueue {
  public:
    explicit TaskQueue(TaskType type) : type_(type) {}

    TaskType type() const noexcept { return type_; }

    // Puts the entry in the ready heap if its key is due, else in the
    // future heap; sets its Where and the task's state. Returns true if a
    // sleeping worker should be told (ready work, or a new earliest key).
    bool pushLocked(Entry& e, Clock::time_point now) REQUIRES(mutex);
    // CB3's fetch: moves due tasks to the ready heap, then takes the best
    // ready one (marks it Running). Null when nothing is due.
    Entry* popReadyLocked(Clock::time_point now) REQUIRES(mutex);
    // Takes the entry out of whichever heap holds it (linear).
    void removeLocked(Entry& e) REQUIRES(mutex);
    // Gives a queued entry a new key and re-sorts (CB3: make_heap).
    // Returns true if a sleeping worker should be told.
    bool rekeyLocked(Entry& e, Clock::time_point key, Clock::time_point now) REQUIRES(mutex);

    // The earliest key in the future heap, or time_point::max().
    Clock::time_point nextWakeLocked() const REQUIRES(mutex);
    std::size_t readySizeLocked() const REQUIRES(mutex) { return ready_.size(); }
    std::size_t futureSizeLocked() const REQUIRES(mutex) { return future_.size(); }

    mutable detail::Mutex mutex;
    std::condition_variable wakeup;
    std::size_t sleeping GUARDED_BY(mutex) = 0;       // workers waiting on `wakeup`
    std::uint64_t executed GUARDED_BY(mutex) = 0;     // runs completed
    std::size_t targetThreads GUARDED_BY(mutex) = 0;  // workers with index >= this exit
    bool stopping GUARDED_BY(mutex) = false;          // the pool is being destroyed

  private:
    void moveDueLocked(Clock::time_point now) REQUIRES(mutex);
    Entry* takeReadyAtLocked(std::size_t index) REQUIRES(mutex);

    const TaskType type_;
    std::vector<Entry*> future_ GUARDED_BY(mutex);  // heap, earliest key on top
    std::vector<Entry*> ready_ GUARDED_BY(mutex);   // heap, best (priority, key) on top
};

}  // namespace kvexec::classic
