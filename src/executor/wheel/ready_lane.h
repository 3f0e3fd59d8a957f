// ready_lane.h: one lane of a task type's due records (ready_queue.h
// splits each type's queue into lanes, so that producers and workers on
// different cores do not all meet on one lock).
//
// Records are kept in intrusive lists, one per priority (lower first), each
// sorted by key (wake time). Insertion scans from the tail: tasks mostly
// become due in wake-time order, so it is O(1) in practice; unlink is O(1).
// The lane publishes its best head (priority, key) so that a worker can
// choose between lanes without locking them.
//
// Thread safety: every member ending in Locked requires `mutex`; head() may
// be read by any thread (a hint: it may be stale by the time it is used).
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <vector>

#include "executor/thread_annotations.h"
#include "executor/wheel/record.h"

namespace kvexec::wheel {

class alignas(64) ReadyLane {
  public:
    // First: the mutex and what every push and pop writes share the
    // lane's first cache line (checked in ready_lane.cc), so that a
    // hand-off between two cores moves that line and the list heads' line,
    // no third one.
    mutable detail::Mutex mutex;

    // What a worker compares lanes by: the first record it would pop.
    struct Head {
        int priority = INT_MAX;  // INT_MAX: the lane is empty
        Clock::rep key = 0;
        bool before(const Head& o) const {
            return priority != o.priority ? priority < o.priority : key < o.key;
        }
    };

    // Links a record (state -> Ready). Requires its shard's lock too.
    void pushLocked(Record& r) REQUIRES(mutex);
    // Takes the first record of the best priority (Ready -> Running).
    Record* popLocked() REQUIRES(mutex);
    // Takes a Ready record out (state -> Timer). Requires its shard's lock
    // too: the caller arms or frees it next.
    void unlinkLocked(Record& r) REQUIRES(mutex);
    std::size_t sizeLocked() const REQUIRES(mutex) { return size_; }
    // Forgets every record (shutdown; the records are about to be freed).
    void clearLocked() REQUIRES(mutex);

    Head head() const noexcept {
        return {headPriority_.load(std::memory_order_relaxed),
                headKey_.load(std::memory_order_relaxed)};
    }

  private:
    struct PriorityList {
        int priority;
        Record* head = nullptr;
        Record* tail = nullptr;
    };
    PriorityList& listFor(int priority) REQUIRES(mutex);
    void detachLocked(Record& r, PriorityList& list) REQUIRES(mutex);  // list links only
    void publishHeadLocked() REQUIRES(mutex);

    std::size_t size_ GUARDED_BY(mutex) = 0;
    std::atomic<Clock::rep> headKey_{0};
    std::atomic<int> headPriority_{INT_MAX};
    // Sorted by priority, lowest first; the vector itself changes only
    // when a priority is first seen.
    std::vector<PriorityList> lists_ GUARDED_BY(mutex);

    friend struct ReadyLaneLayout;
};

}  // namespace kvexec::wheel
