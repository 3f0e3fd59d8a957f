// scheduler.h: the Classic ("CB3") scheduler.
//
// One task locator (id -> Entry) and owner table under the scheduler's
// mutex, and one TaskQueue per TaskType with its worker threads.
//
// Owners (register, unregister, the stats hold), worker threads and the
// decision after a run are the rules every backend shares (common/).
//
// Locking (the ground rules):
// - owners_.mutex (the scheduler's mutex) guards locator_ and the owners.
// - TaskQueue::mutex guards its heaps and the fields of its entries.
// - Order: owners_.mutex before a queue's mutex; never two queue mutexes
//   at once.
// - User code (run(), description(), Taskable hooks, a Task's destructor)
//   is never called with either held.
// - workers_ serialises setThreadCount() and shutdown; taken before the
//   queue mutexes.
#pragma once

#include <array>
#include <condition_variable>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "executor/classic/task_queue.h"
#include "executor/common/owner_registry.h"
#include "executor/common/task_run.h"
#include "executor/common/worker_threads.h"
#include "executor/observability/pool_metrics.h"
#include "executor/task_access.h"
#include "executor/thread_annotations.h"
#include "kvexec/executor_pool.h"

namespace kvexec::classic {

class Scheduler final : public detail::TaskHost {
  public:
    explicit Scheduler(const PoolConfig& config);
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

    // detail::TaskHost
    void onTaskSnoozed(Task& task, detail::SnoozeMade snooze) noexcept override;
    void onTaskCancelled(Task& task) noexcept override;

  private:
    using Locator = std::unordered_map<TaskId, std::unique_ptr<Entry>>;

    TaskQueue& queueOf(TaskType type) { return *queues_[static_cast<std::size_t>(type)]; }
    const TaskQueue& queueOf(TaskType type) const {
        return *queues_[static_cast<std::size_t>(type)];
    }
    Entry* findLocked(TaskId id) REQUIRES(owners_.mutex);
    TaskId reviveLocked(Entry& e) REQUIRES(owners_.mutex);
    // Removes the entry from the locator and leaves its reference in `out`
    // for owners_.release() once no lock is held. Entry in no heap.
    void eraseLocked(Entry& e, detail::ReleasedTasks& out) REQUIRES(owners_.mutex);
    bool cancelLocked(Entry& e, bool remove, detail::ReleasedTasks& dropped)
        REQUIRES(owners_.mutex);
    bool wakeLocked(Entry& e) REQUIRES(owners_.mutex);
    // After a snooze: moves a queued entry to the task's wake time, or
    // marks a running one (its queue's lock: where a run's end writes).
    void rekeyInQueueLocked(TaskQueue& q, Entry& e) REQUIRES(owners_.mutex, q.mutex);

    // Runs a taken (Running) entry unless it is Dead, then re-queues or
    // drops it.
    void runEntry(Entry& e, detail::WorkerSlot* worker);
    void finishRun(Entry& e, const detail::TaskRun& run);
    void requeueAfterRunLocked(TaskQueue& q, Entry& e, const detail::TaskRun& run)
        REQUIRES(q.mutex);
    void dropFinished(Entry& e);
    void runWorker(TaskQueue& q, std::size_t index, detail::WorkerSlot* slot);
    void cancelOwnerTasksLocked(Taskable& owner, bool force, detail::ReleasedTasks& dropped)
        REQUIRES(owners_.mutex);

    // Null when the pool records no metrics; outlives the workers.
    const std::unique_ptr<detail::PoolMetrics> metrics_;
    detail::OwnerRegistry owners_;
    Locator locator_ GUARDED_BY(owners_.mutex);

    std::array<std::unique_ptr<TaskQueue>, kTaskTypeCount> queues_;
    detail::WorkerThreads workers_;
};

}  // namespace kvexec::classic
