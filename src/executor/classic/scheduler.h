// scheduler.h: the Classic ("CB3") scheduler, with or without threads.
//
// One task locator (id -> Entry) and owner table under the scheduler's
// mutex, and one TaskQueue per TaskType. The Classic backend gives each
// queue worker threads; the Manual backend gives it none and runs tasks on
// the caller's thread through runDue()/runEarliest(). Both therefore share
// every rule of the contract, implemented once, here.
//
// Locking (the ground rules):
// - mutex_ guards locator_, owners_ and stopping_.
// - TaskQueue::mutex guards its heaps and the fields of its entries.
// - Order: mutex_ before a queue's mutex; never two queue mutexes at once.
// - User code (run(), description(), Taskable hooks, a Task's destructor)
//   is never called with either held.
// - resizeMutex_ serialises setThreadCount() and shutdown; taken before
//   the others.
#pragma once

#include <array>
#include <condition_variable>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "executor/classic/task_queue.h"
#include "executor/observability/pool_metrics.h"
#include "executor/task_access.h"
#include "executor/thread_annotations.h"
#include "kvexec/executor_pool.h"

namespace kvexec::classic {

class Scheduler final : public detail::TaskHost {
  public:
    enum class Mode { Threaded, Manual };

    Scheduler(Mode mode, const PoolConfig& config);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Stops the workers, cancels and drops every task (runs none of them).
    void shutdown();

    void registerTaskable(Taskable& owner);
    void unregisterTaskable(Taskable& owner, bool force);
    std::size_t taskableCount() const;

    TaskId schedule(TaskPtr task);
    bool cancel(TaskId id, bool remove);
    bool wake(TaskId id);
    bool snooze(TaskId id, Clock::duration d);

    std::size_t threadCount(TaskType type) const;
    void setThreadCount(TaskType type, std::size_t n);
    PoolStats stats() const;

    // Manual mode: run due tasks / the earliest task on the calling thread.
    std::size_t runDue(TaskType type);
    TaskId runEarliest(TaskType type);

    // detail::TaskHost
    void onTaskSnoozed(Task& task) noexcept override;
    void onTaskCancelled(Task& task) noexcept override;

  private:
    struct Owner {
        // Written under mutex_; read by entries under a queue mutex too.
        std::atomic<bool> unregistering{false};
        std::size_t tasks = 0;  // entries in locator_ owned by it
    };
    using Locator = std::unordered_map<TaskId, std::unique_ptr<Entry>>;

    TaskQueue& queueOf(TaskType type) { return *queues_[static_cast<std::size_t>(type)]; }
    const TaskQueue& queueOf(TaskType type) const {
        return *queues_[static_cast<std::size_t>(type)];
    }
    Entry* findLocked(TaskId id) REQUIRES(mutex_);
    Owner& ownerForScheduleLocked(const Task& task) REQUIRES(mutex_);
    TaskId reviveLocked(Entry& e) REQUIRES(mutex_);
    // Removes the entry from the locator; returns the reference for the
    // caller to pass to release(). Requires mutex_, entry in no heap.
    TaskPtr eraseLocked(Entry& e) REQUIRES(mutex_);
    // Drops erased references (a task's destructor may run here), then
    // counts them out of their owners: unregisterTaskable() returns only
    // once the pool holds no reference. Requires no lock held.
    void release(std::vector<TaskPtr>& erased) EXCLUDES(mutex_);
    bool cancelLocked(Entry& e, bool remove, std::vector<TaskPtr>& dropped) REQUIRES(mutex_);
    bool wakeLocked(Entry& e) REQUIRES(mutex_);
    bool rekeyToWakeTimeLocked(Entry& e) REQUIRES(mutex_);

    // Runs a taken (Running) entry unless it is Dead, then re-queues or
    // drops it. Returns true if run() was called.
    bool runEntry(Entry& e, detail::WorkerSlot* worker = nullptr);
    void finishRun(Entry& e, bool ran, bool again, std::uint32_t snoozeSeqBefore);
    void requeueAfterRunLocked(TaskQueue& q, Entry& e, std::uint32_t snoozeSeqBefore)
        REQUIRES(q.mutex);
    void dropFinished(Entry& e);
    void workerLoop(TaskQueue& q, std::size_t index, detail::WorkerSlot* slot);
    void runWorker(TaskQueue& q, std::size_t index, detail::WorkerSlot* slot);
    void drainOwnerInline(Taskable& owner, detail::UniqueLock& lock) REQUIRES(mutex_);
    void cancelOwnerTasksLocked(Taskable& owner, bool force, std::vector<TaskPtr>& dropped)
        REQUIRES(mutex_);

    const Mode mode_;
    // Null when the pool records no metrics; outlives the workers.
    const std::unique_ptr<detail::PoolMetrics> metrics_;
    mutable detail::Mutex mutex_;
    mutable std::condition_variable ownerDrained_;  // an owner's task count fell
    Locator locator_ GUARDED_BY(mutex_);
    std::unordered_map<const Taskable*, Owner> owners_ GUARDED_BY(mutex_);
    bool stopping_ GUARDED_BY(mutex_) = false;
    // stats() calls holding task references: unregisterTaskable() waits
    // for them too, so that it returns only when nothing holds its tasks.
    mutable std::size_t statsHoldingTasks_ GUARDED_BY(mutex_) = 0;

    std::array<std::unique_ptr<TaskQueue>, kTaskTypeCount> queues_;
    detail::Mutex resizeMutex_;
    std::array<std::vector<std::thread>, kTaskTypeCount> workers_ GUARDED_BY(resizeMutex_);
};

}  // namespace kvexec::classic
