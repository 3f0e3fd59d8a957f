// worker_threads.h: the worker threads of a pool, per TaskType, and the
// rules for changing their number that every backend keeps (rule 10):
// setThreadCount() never stops its caller, starts new workers with their
// names and worker-view slots, and joins the workers it stops (a run in
// progress finishes first); shutdown stops and joins them all.
//
// What a worker does, and how a backend tells its workers to stop (a
// condition variable, parkers), stays with the backend: `retarget` and
// `stop` below, and the worker body.
//
// Thread safety: resize() and stopAll() may be called from any thread and
// are serialised; resize() from a worker that it would stop throws
// std::logic_error. Call them holding none of the pool's other locks.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "executor/thread_annotations.h"
#include "kvexec/task.h"

namespace kvexec::detail {

class PoolMetrics;
class WorkerSlot;

class WorkerThreads {
  public:
    // Worker `index` of a type: runs until it sees it must stop. `slot` is
    // its row in the worker view (null when the pool records no metrics).
    using Body = std::function<void(std::size_t index, WorkerSlot* slot)>;

    // metrics: null when the pool records none; must outlive the workers.
    explicit WorkerThreads(PoolMetrics* metrics) : metrics_(metrics) {}

    // setThreadCount(type, n). `queue` identifies the type's queue (the
    // workers' identity: worker_identity.h). `retarget` tells the queue the
    // new count and wakes its idle workers so that those at or above n
    // exit; it returns false if the pool is stopping (nothing more is done).
    void resize(TaskType type, std::size_t n, const void* queue,
                const std::function<bool()>& retarget, const Body& body) EXCLUDES(mutex_);
    // Shutdown: `stop` tells every queue to stop and wakes its workers;
    // then every worker is joined. Later resize() calls find the pool
    // stopping through their `retarget`.
    void stopAll(const std::function<void()>& stop) EXCLUDES(mutex_);

  private:
    void start(TaskType type, std::size_t index, const void* queue, const Body& body)
        REQUIRES(mutex_);

    PoolMetrics* const metrics_;
    Mutex mutex_;  // serialises resize() and stopAll()
    std::array<std::vector<std::thread>, kTaskTypeCount> threads_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::detail
