// entry.h: what the Classic scheduler keeps for each task it holds.
//
// An Entry lives in the scheduler's task locator (owned there) from
// schedule() until the task is dropped, and is in at most one of its
// queue's heaps at a time.
//
// Guarded by: the locator map (insert/erase) by Scheduler::mutex_; every
// field below by the mutex of the task's TaskQueue.
#pragma once

#include "executor/common/owner_registry.h"
#include "kvexec/task.h"

namespace kvexec::detail {
struct KindMetrics;
}

namespace kvexec::classic {

struct Entry {
    enum class Where : std::uint8_t {
        Future,     // in the future heap, waiting for its key
        Ready,      // in the ready heap, due
        Running,    // taken by a thread; its run() may be executing
        Finishing,  // its last run ended Dead; about to be dropped
    };

    Entry(TaskPtr t, detail::OwnerState& o) : task(std::move(t)), owner(o) {}

    // The key a wake time becomes: `now` for a task that must not sleep
    // (rule 9, OwnerState::mustNotSleep).
    Clock::time_point keyFor(Clock::time_point wakeTime, Clock::time_point now) const {
        return owner.mustNotSleep(*task) ? now : wakeTime;
    }

    TaskPtr task;
    detail::OwnerState& owner;  // outlives the entry
    // The wake time as the heaps order it; the task's own wakeTime() may be
    // newer (a snooze in progress) until the queue sees it under its lock.
    Clock::time_point key{};
    Where where = Where::Future;
    // wake() arrived while Running: handled when the run ends.
    bool notified = false;
    // A snooze reached the queue while Running (TaskRun::asap).
    bool snoozedWhileRunning = false;
    // schedule() revived the (Dead) task while Running or Finishing.
    bool revived = false;
    // What came while it ran has been acted on (re-queued), or no longer
    // counts (cancelled).
    void forgetRunMarks() { notified = snoozedWhileRunning = revived = false; }
    // The task's kind in the pool's metrics: resolved by its first run,
    // then only touched by the thread running it.
    detail::KindMetrics* kind = nullptr;
};

}  // namespace kvexec::classic
