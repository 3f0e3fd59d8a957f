// task_access.h: the pool-side view of a Task (private to the library).
//
// Task keeps its scheduling state in atomics; backends change that state
// only through TaskAccess so that every write the pools make to a Task is in
// one place. TaskHost is what a Task calls back when snooze() or cancel()
// is called on the task itself rather than on its pool.
//
// Thread safety: every function here is safe from any thread (they are
// atomics), except snoozeUntilLocked(), which needs the backend's lock that
// orders the task's pool snoozes; keeping state transitions coherent is the
// caller's job (the backends do it under their queue locks).
#pragma once

#include <atomic>
#include <cstdint>

#include "kvexec/task.h"

namespace kvexec::detail {

// What one Task::snooze wrote: the wake time, and the sum of the counts as
// it saw them after its increment (snoozeUntil): equal to snoozeSeq() as
// long as neither count has moved since.
struct SnoozeMade {
    Clock::time_point until;
    std::uint32_t seq;
};

// Implemented by a backend. Called by Task::snooze() / Task::cancel() when
// the task is held by that backend and the call does not come from the
// task's own run(). The pool must still exist (see task.h).
class TaskHost {
  public:
    // The task's wake time has just been set by `snooze`; under the
    // backend's lock, TaskAccess::reapplySnooze(), then move the task in
    // the queues.
    virtual void onTaskSnoozed(Task& task, SnoozeMade snooze) noexcept = 0;
    // Cancel the task as ExecutorPool::cancel(id, false) does.
    virtual void onTaskCancelled(Task& task) noexcept = 0;

  protected:
    ~TaskHost() = default;
};

// Saturating now + d: kForever (or any overflow) gives time_point::max().
Clock::time_point deadlineAfter(Clock::time_point now, Clock::duration d) noexcept;

class TaskAccess {
  public:
    static bool run(Task& t) { return t.run(); }

    static void setState(Task& t, TaskState s) noexcept {
        t.state_.store(s, std::memory_order_release);
    }
    // Changes the state unless the task is Dead (snooze and wake never
    // revive a cancelled task).
    static void setStateUnlessDead(Task& t, TaskState s) noexcept;

    static void setWakeTime(Task& t, Clock::time_point when) noexcept {
        t.wakeTime_.store(when.time_since_epoch().count(), std::memory_order_release);
    }
    // What Task::snooze does, without calling back into the pool, from any
    // thread. Backends compare the sequence (snoozeSeq()) for equality
    // with a value read earlier (a run's start, the Wheel's due mark,
    // reapplySnooze), so each count must only ever move on: this one is
    // incremented atomically, as snoozes from other threads may race it.
    // The pool's count is read after the increment: so of racing
    // Task::snooze calls, the last to increment holds every pool snooze
    // before its read in its `seq`, and reapplySnooze puts its wake time
    // back unless a snooze came after that read. (Read before, two racing
    // calls could get one `seq` that matched neither, and both were lost
    // over a run's end.) That read must see a pool snooze that a run's end
    // saw before this increment: see snoozeSeqUnderLock().
    static SnoozeMade snoozeUntil(Task& t, Clock::time_point when) noexcept {
        setWakeTime(t, when);
        const std::uint32_t own = t.snoozeSeq_.fetch_add(1, std::memory_order_seq_cst) + 1;
        const std::uint32_t pool = t.poolSnoozeSeq_.load(std::memory_order_seq_cst);
        return {when, pool + own};
    }
    // A pool's snooze(id), under the backend's lock that every pool snooze
    // of this task takes (Classic's and Manual's owners mutex, the Wheel's
    // shard mutex; a task is held by one pool at a time): one such write at
    // a time, so a plain increment keeps the pool's count moving on.
    static void snoozeUntilLocked(Task& t, Clock::time_point when) noexcept {
        setWakeTime(t, when);
        t.poolSnoozeSeq_.store(t.poolSnoozeSeq_.load(std::memory_order_relaxed) + 1,
                               std::memory_order_release);
    }
    // For a snooze made outside the backend's lock (Task::snooze from
    // another thread), under that lock before the task is moved: a run's
    // end or a wake under the lock between the snooze's two writes read
    // the sequence before it, took the task as not snoozed and set its wake
    // time to now over the snooze's. Puts the snooze's back, unless a later
    // snooze came (a Task::snooze that incremented after this one, or a
    // pool snooze after this one read the pool's count); the snooze then
    // counts as made after them.
    static void reapplySnooze(Task& t, SnoozeMade snooze) noexcept {
        if (snoozeSeqUnderLock(t) == snooze.seq) {
            setWakeTime(t, snooze.until);
        }
    }
    // Starts loading what a snooze reads and writes (state, wake time,
    // sequence), which may straddle two cache lines.
    static void prefetchForSnooze(const Task& t) noexcept {
        __builtin_prefetch(&t.state_, 1);
        __builtin_prefetch(&t.snoozeSeq_, 1);  // and poolSnoozeSeq_ beside it
    }
    // The snoozes so far: both counts, each only moving on, so of two
    // reads ordered one after the other the sum differs whenever either
    // count moved in between (short of 2^32 snoozes).
    static std::uint32_t snoozeSeq(const Task& t) noexcept {
        return t.poolSnoozeSeq_.load(std::memory_order_acquire) +
               t.snoozeSeq_.load(std::memory_order_acquire);
    }
    // The same, read under the backend's lock by a run's end (TaskRun::asap)
    // or reapplySnooze, after a pool snooze made under that lock: a
    // Task::snooze whose increment comes after this read must then read
    // that pool snooze's count (snoozeUntil), or its `seq` would match
    // nothing and its wake time would not be put back. The C++ model
    // promises that only with a seq_cst fence here (the read-to-write
    // causality shape: the pool's write is a release store, this read is
    // not seq_cst); x86-64 (a locked read-modify-write drains the store
    // buffer) and AArch64 (other-multi-copy atomic, release then acquire
    // ordered) give it without one, so other targets take the fence.
    static std::uint32_t snoozeSeqUnderLock(const Task& t) noexcept {
#if !defined(__x86_64__) && !defined(__aarch64__)
        std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
        return snoozeSeq(t);
    }

    static void recordRun(Task& t, Clock::duration ran) noexcept;

    static TaskHost* host(const Task& t) noexcept {
        return t.host_.load(std::memory_order_acquire);
    }
    static void setHost(Task& t, TaskHost* h) noexcept {
        t.host_.store(h, std::memory_order_release);
    }
};

}  // namespace kvexec::detail
