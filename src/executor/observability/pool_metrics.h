// pool_metrics.h: what a pool measures about its runs, shared by every
// backend: per-kind histograms and slow-run counts (KindMetrics), and the
// worker view (WorkerSlot). One PoolMetrics per pool; null when the pool
// was built with PoolConfig::recordMetrics = false.
//
// Integration contract (what a backend calls):
// 1. Worker start: `slot = metrics->addWorker(type, name)` when the worker
//    is created (before its thread starts, so that stats() shows it when
//    setThreadCount() returns); worker stop: `metrics->removeWorker(slot)`
//    on the exiting thread. Threadless backends (Manual) add no worker.
// 2. Each run: `detail::runTask(task, RunSite{metrics, slot}, entry.kind)`
//    (task_runner.h), where `entry.kind` is a `KindMetrics*` the backend
//    keeps per held task, starting null: runTask resolves it on the task's
//    first run (one description() call; the registry's mutex only when the
//    worker's last kind differs) and reuses it after. The backend
//    must hand the entry from run to run under its own synchronisation (a
//    task never runs on two threads at once, so this is already so).
// 3. stats(): `metrics->fill(stats)` with no backend lock held (it takes
//    the registry's own mutex, never calls user code).
//
// Thread safety: kindFor(), addWorker(), removeWorker() and fill() lock
// the registry mutex (not on the per-run path once a task's kind is
// resolved). KindMetrics and WorkerSlot record without locks; a
// WorkerSlot is written only by its own worker thread. KindMetrics live as
// long as the PoolMetrics (addresses are stable).
#pragma once

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "executor/observability/striped_histogram.h"
#include "executor/observability/worker_slot.h"
#include "executor/thread_annotations.h"
#include "kvexec/executor_pool.h"
#include "kvexec/histogram.h"

namespace kvexec::detail {

struct KindMetrics {
    KindMetrics(TaskType t, std::string d) : type(t), description(std::move(d)) {}
    const TaskType type;
    const std::string description;
    StripedHistogram queueTime;
    StripedHistogram runTime;
    std::atomic<std::uint64_t> slowRuns{0};
};

class PoolMetrics {
  public:
    // The kind of a task (its type and description()), created on first
    // use. Calls task.description(): call with no pool lock held. With the
    // calling worker's slot, its last kind is tried first (no lock).
    KindMetrics& kindFor(const Task& task, WorkerSlot* worker) EXCLUDES(mutex_);

    WorkerSlot& addWorker(TaskType type, std::string name) EXCLUDES(mutex_);
    void removeWorker(WorkerSlot& slot) EXCLUDES(mutex_);

    // Fills stats.kinds and stats.workers.
    void fill(PoolStats& stats) const EXCLUDES(mutex_);

  private:
    using KindKey = std::pair<TaskType, std::string>;
    KindMetrics& findOrAddKind(KindKey key) EXCLUDES(mutex_);

    mutable Mutex mutex_;
    std::map<KindKey, std::unique_ptr<KindMetrics>> kinds_ GUARDED_BY(mutex_);
    std::list<WorkerSlot> workers_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::detail
