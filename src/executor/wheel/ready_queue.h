// ready_queue.h: the due tasks of one TaskType, and its idle workers.
//
// Records are kept in intrusive lists, one per priority (lower first), each
// sorted by key (wake time). Insertion scans from the tail: tasks mostly
// become due in wake-time order, so it is O(1) in practice; unlink is O(1).
// Idle workers enlist here; a producer that queues work takes one that
// spins, else the most recently idle one, to unpark.
//
// Thread safety: every member ending in Locked requires `mutex`; so do the
// public fields.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "executor/thread_annotations.h"
#include "executor/wheel/parker.h"
#include "executor/wheel/record.h"

namespace kvexec::wheel {

class ReadyQueue {
  public:
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

    // `spinning`: the worker will spin before it sleeps (Parker::claimSpin).
    void enlistIdleLocked(Parker& p, bool spinning) REQUIRES(mutex);
    // The most recently idle worker that spins, else the most recently
    // idle one; taken off its list. Null if none is idle.
    Parker* takeIdleLocked() REQUIRES(mutex);
    std::vector<Parker*> takeAllIdleLocked() REQUIRES(mutex);
    std::size_t idleLocked() const REQUIRES(mutex);  // O(idle workers): for stats()
    // The parker of worker `index`, made on first use; lives as long as this.
    Parker& parkerLocked(std::size_t index) REQUIRES(mutex);
    // Runs of this type's tasks so far: every worker's count, in its
    // parker (workers that left keep theirs there).
    std::uint64_t runsLocked() const REQUIRES(mutex);

    // The mutex and what every hand-off writes under it (the count of
    // queued records, the two idle stacks) share one cache line: a hand-off
    // between two cores moves that line, and no second one.
    alignas(64) mutable detail::Mutex mutex;

  private:
    std::size_t size_ GUARDED_BY(mutex) = 0;
    // Idle workers, two stacks linked through Parker::nextIdle_.
    Parker* idleSpinning_ GUARDED_BY(mutex) = nullptr;
    Parker* idleSleeping_ GUARDED_BY(mutex) = nullptr;

  public:
    std::size_t targetThreads GUARDED_BY(mutex) = 0;  // workers with index >= this exit
    bool stopping GUARDED_BY(mutex) = false;

  private:
    struct PriorityList {
        int priority;
        Record* head = nullptr;
        Record* tail = nullptr;
    };
    PriorityList& listFor(int priority) REQUIRES(mutex);
    void detachLocked(Record& r, PriorityList& list) REQUIRES(mutex);  // list links only

    std::vector<PriorityList> lists_ GUARDED_BY(mutex);  // sorted by priority, lowest first
    std::vector<std::unique_ptr<Parker>> parkers_ GUARDED_BY(mutex);
};

}  // namespace kvexec::wheel
