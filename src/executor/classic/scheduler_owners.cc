// scheduler_owners.cc: the lifecycle of owners and of the scheduler itself
// (register, unregister, shutdown), and stats.
#include "executor/classic/scheduler.h"
#include "executor/pool_config.h"
#include "executor/task_info.h"

namespace kvexec::classic {

using detail::TaskAccess;

Scheduler::Scheduler(const PoolConfig& config)
    : metrics_(config.recordMetrics ? std::make_unique<detail::PoolMetrics>() : nullptr),
      workers_(metrics_.get()) {
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        queues_[i] = std::make_unique<TaskQueue>(static_cast<TaskType>(i));
    }
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        const auto type = static_cast<TaskType>(i);
        setThreadCount(type, detail::threadsFor(config, type));
    }
}

Scheduler::~Scheduler() {
    shutdown();
}

// Shutdown, in order:
// 1. Refuse new tasks and mark every held task Dead, so nothing starts.
// 2. Stop the workers and join them; a run in progress finishes first.
// 3. Drop every reference, after the locks are released, so a task's
//    destructor may call back into the pool without deadlock.
void Scheduler::shutdown() {
    {
        detail::MutexLock lock(owners_.mutex);
        owners_.stopLocked();
        for (auto& [id, e] : locator_) {
            TaskAccess::setState(*e->task, TaskState::Dead);
        }
    }
    workers_.stopAll([this] {
        for (auto& q : queues_) {
            detail::MutexLock queueLock(q->mutex);
            q->stopping = true;
            q->wakeup.notify_all();
        }
    });
    detail::ReleasedTasks dropped;
    {
        detail::MutexLock lock(owners_.mutex);
        for (auto& [id, e] : locator_) {
            TaskAccess::setHost(*e->task, nullptr);
            dropped.add(std::move(e->task), e->owner);
        }
        locator_.clear();
    }
    owners_.release(dropped);
}

void Scheduler::registerTaskable(Taskable& owner) {
    owners_.registerOwner(owner);
}

std::size_t Scheduler::taskableCount() const {
    return owners_.count();
}

void Scheduler::cancelOwnerTasksLocked(Taskable& owner, bool force,
                                       detail::ReleasedTasks& dropped) {
    std::vector<Entry*> owned;
    for (auto& [id, e] : locator_) {
        if (&e->task->owner() == &owner) {
            owned.push_back(e.get());
        }
    }
    for (Entry* e : owned) {
        if (force || !e->task->blocksShutdown()) {
            cancelLocked(*e, true, dropped);
        } else {
            wakeLocked(*e);  // let it finish its work now, not at its wake time
        }
    }
}

// Unregistration (the steps of OwnerRegistry), in order:
// 1. Refuse: from now on schedule() for this owner throws.
// 2. Cancel and drop its queued tasks (blockShutdown ones are woken instead,
//    unless force); running ones are dropped by their worker when done.
// 3. Wait until the pool holds none of its tasks, then forget the owner.
void Scheduler::unregisterTaskable(Taskable& owner, bool force) {
    detail::OwnerRegistry::checkNotOwnTask(owner);
    detail::ReleasedTasks dropped;
    detail::UniqueLock lock(owners_.mutex);
    const auto registration = owners_.beginUnregisterLocked(owner);
    if (!registration) {
        return;
    }
    cancelOwnerTasksLocked(owner, force, dropped);
    if (!dropped.empty()) {
        lock.unlock();
        owners_.release(dropped);
        lock.lock();
    }
    owners_.awaitDrainedLocked(owner, *registration, lock);
}

PoolStats Scheduler::stats() const {
    PoolStats stats{};
    detail::StatsHold held(owners_);
    {
        detail::MutexLock lock(owners_.mutex);
        for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
            const TaskQueue& q = *queues_[i];
            detail::MutexLock queueLock(q.mutex);
            auto& s = stats.byType[i];
            s.threads = q.targetThreads;
            s.sleeping = q.sleeping;
            s.ready = q.readySizeLocked();
            s.future = q.futureSizeLocked();
            s.executed = q.executed;
        }
        held.tasks.reserve(locator_.size());
        for (const auto& [id, e] : locator_) {
            held.tasks.push_back(e->task);
        }
    }
    stats.tasks = detail::describeTasks(held.tasks);  // user code: no lock held
    if (metrics_) {
        metrics_->fill(stats);
    }
    return stats;
}

}  // namespace kvexec::classic
