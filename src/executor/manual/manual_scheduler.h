// manual_scheduler.h: the Manual backend's scheduler: no threads; the
// caller runs tasks with runDue() / runEarliest() (ManualExecutorPool).
//
// Small on purpose: it serves deterministic tests, not load. One table of
// entries (id -> Entry) per pool; picking the next task scans the entries of
// its type. The owner rules and the decision after a run are the ones every
// backend shares (common/); what is Manual's own is here:
// - runDue() runs the due tasks of a type by priority, then wake time, then
//   the order they were queued in, and does not run a task again in the same
//   call when its own run re-queued it as soon as possible (it would run
//   forever); a task woken or revived during its run does run again.
// - runEarliest() runs the task with the earliest wake time, due or not.
// - unregisterTaskable(t, false) runs t's blockShutdown tasks on the calling
//   thread (there is no other thread to run them).
//
// Locking: owners_.mutex guards the table and every entry's fields; it is
// never held while user code runs (run(), description(), hooks, a task's
// destructor). Two threads may drive the pool at once: a taken entry is
// Running and no one else takes it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "executor/common/owner_registry.h"
#include "executor/common/task_run.h"
#include "executor/observability/pool_metrics.h"
#include "executor/task_access.h"
#include "executor/thread_annotations.h"
#include "kvexec/executor_pool.h"

namespace kvexec::manual {

class Scheduler final : public detail::TaskHost {
  public:
    Scheduler();
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    void registerTaskable(Taskable& owner);
    void unregisterTaskable(Taskable& owner, bool force);
    std::size_t taskableCount() const;

    TaskId schedule(TaskPtr task);
    bool cancel(TaskId id, bool remove);
    bool wake(TaskId id);
    bool snooze(TaskId id, Clock::duration d);
    PoolStats stats() const;

    std::size_t runDue(TaskType type);
    TaskId runEarliest(TaskType type);

    // detail::TaskHost
    void onTaskSnoozed(Task& task, detail::SnoozeMade snooze) noexcept override;
    void onTaskCancelled(Task& task) noexcept override;

  private:
    struct Entry {
        Entry(TaskPtr t, detail::OwnerState& o) : task(std::move(t)), owner(o) {}

        TaskPtr task;
        detail::OwnerState& owner;   // outlives the entry
        Clock::time_point key{};     // when it is due; its wake time, or now (rule 9)
        std::uint64_t queuedAt = 0;  // order among equal (priority, key)
        bool running = false;        // taken by a caller of runDue/runEarliest
        bool woken = false;          // woken while running
        bool snoozed = false;        // snoozed from outside while running
        bool revived = false;        // scheduled again (after cancel) while running
        // What came while it ran has been acted on (re-queued), or no
        // longer counts (cancelled).
        void forgetRunMarks() { woken = snoozed = revived = false; }
        // Re-queued as soon as possible by its own run in the current
        // runDue() call: that call does not run it again.
        bool selfRequeued = false;
        detail::KindMetrics* kind = nullptr;  // only used by the caller running it
    };

    Entry* findLocked(TaskId id) REQUIRES(owners_.mutex);
    // Queues the entry at `key` (the task's state follows: Running when due).
    void queueLocked(Entry& e, Clock::time_point key, Clock::time_point now)
        REQUIRES(owners_.mutex);
    Clock::time_point keyFor(const Entry& e, Clock::time_point now) const;
    void eraseLocked(Entry& e, detail::ReleasedTasks& out) REQUIRES(owners_.mutex);
    void cancelLocked(Entry& e, bool remove, detail::ReleasedTasks& out) REQUIRES(owners_.mutex);
    bool wakeLocked(Entry& e) REQUIRES(owners_.mutex);
    void rekeyToWakeTimeLocked(Entry& e) REQUIRES(owners_.mutex);
    // The best due entry of `type` not re-queued by itself in this call;
    // marks the due ones Running (their TaskState) on the way.
    Entry* takeDueLocked(TaskType type, Clock::time_point now) REQUIRES(owners_.mutex);
    Entry* takeEarliestLocked(TaskType type) REQUIRES(owners_.mutex);
    // A queued (not running) entry of the registration, or null.
    Entry* queuedOfLocked(detail::OwnerRegistry::Registration registration) REQUIRES(owners_.mutex);
    // Runs a taken entry unless its task is Dead, then re-queues or drops
    // it. Returns true if run() was called.
    bool runEntry(Entry& e) EXCLUDES(owners_.mutex);
    void drainOwnerInline(detail::OwnerRegistry::Registration registration,
                          detail::UniqueLock& lock) REQUIRES(owners_.mutex);
    void shutdown();

    // Null when the pool records no metrics (Manual always records).
    const std::unique_ptr<detail::PoolMetrics> metrics_;
    detail::OwnerRegistry owners_;
    std::unordered_map<TaskId, std::unique_ptr<Entry>> entries_ GUARDED_BY(owners_.mutex);
    std::uint64_t nextQueuedAt_ GUARDED_BY(owners_.mutex) = 0;
    std::array<std::uint64_t, kTaskTypeCount> executed_ GUARDED_BY(owners_.mutex){};
};

}  // namespace kvexec::manual
