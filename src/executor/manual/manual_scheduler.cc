// manual_scheduler.cc: the Manual backend's scheduler: its table, schedule,
// cancel, wake, snooze, owners and stats (the drivers: manual_run.cc).
#include "executor/manual/manual_scheduler.h"

#include <algorithm>
#include <stdexcept>

#include "executor/task_info.h"

namespace kvexec::manual {

using detail::TaskAccess;

Scheduler::Scheduler() : metrics_(std::make_unique<detail::PoolMetrics>()) {}

Scheduler::~Scheduler() {
    shutdown();
}

// Marks every task Dead and drops every reference (runs none of them).
void Scheduler::shutdown() {
    detail::ReleasedTasks dropped;
    {
        detail::MutexLock lock(owners_.mutex);
        owners_.stopLocked();
        for (auto& [id, e] : entries_) {
            TaskAccess::setState(*e->task, TaskState::Dead);
            TaskAccess::setHost(*e->task, nullptr);
            dropped.add(std::move(e->task), e->owner);
        }
        entries_.clear();
    }
    owners_.release(dropped);
}

// --- locked steps ----------------------------------------------------------

Scheduler::Entry* Scheduler::findLocked(TaskId id) {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : it->second.get();
}

Clock::time_point Scheduler::keyFor(const Entry& e, Clock::time_point now) const {
    return e.owner.mustNotSleep(*e.task) ? now : e.task->wakeTime();
}

void Scheduler::queueLocked(Entry& e, Clock::time_point key, Clock::time_point now) {
    e.running = false;
    e.key = key;
    e.queuedAt = nextQueuedAt_++;
    TaskAccess::setStateUnlessDead(*e.task, key <= now ? TaskState::Running : TaskState::Snoozed);
}

void Scheduler::eraseLocked(Entry& e, detail::ReleasedTasks& out) {
    TaskPtr task = std::move(e.task);
    detail::OwnerState& owner = e.owner;
    TaskAccess::setHost(*task, nullptr);
    entries_.erase(task->id());  // destroys e
    out.add(std::move(task), owner);
}

// Dead at once. A queued task is dropped at once with `remove`, else made
// due so that the next runDue() drops it; a running one finishes its run.
void Scheduler::cancelLocked(Entry& e, bool remove, detail::ReleasedTasks& out) {
    TaskAccess::setState(*e.task, TaskState::Dead);
    e.forgetRunMarks();
    if (e.running) {
        return;
    }
    if (remove) {
        eraseLocked(e, out);
        return;
    }
    const auto now = Clock::now();
    if (e.key > now) {
        queueLocked(e, now, now);
    }
}

bool Scheduler::wakeLocked(Entry& e) {
    if (e.task->isDead()) {
        return false;
    }
    const auto now = Clock::now();
    if (e.running) {
        e.woken = true;  // no lost wake-up: runs again after this run
    } else if (e.key > now) {
        TaskAccess::setWakeTime(*e.task, now);
        queueLocked(e, now, now);
    } else {
        e.selfRequeued = false;  // due already; may run again in this runDue()
    }
    return true;
}

// The task's wake time has changed: re-queue a queued entry to match. A
// running one is marked and re-queued after its run, at its wake time (a
// snooze from another thread counts before it takes this lock, so the run
// may have read the new count already).
void Scheduler::rekeyToWakeTimeLocked(Entry& e) {
    if (e.task->isDead()) {
        return;
    }
    if (e.running) {
        e.snoozed = true;  // placed after the run (TaskRun::asap)
        return;
    }
    const auto now = Clock::now();
    queueLocked(e, keyFor(e, now), now);
}

// --- the API ---------------------------------------------------------------

TaskId Scheduler::schedule(TaskPtr task) {
    if (!task) {
        throw std::invalid_argument("kvexec: schedule() of a null TaskPtr");
    }
    detail::MutexLock lock(owners_.mutex);
    detail::OwnerState& owner = owners_.admitLocked(*task);
    auto* host = TaskAccess::host(*task);
    if (host != nullptr && host != this) {
        throw std::logic_error("kvexec: schedule() of a task held by another pool");
    }
    const TaskId id = task->id();
    const auto now = Clock::now();
    if (Entry* held = findLocked(id)) {
        if (task->isDead()) {  // rule 1: revive it
            TaskAccess::setState(*task, TaskState::Running);
            if (held->running) {
                held->revived = true;
            } else {
                queueLocked(*held, keyFor(*held, now), now);
            }
        }
        return id;
    }
    auto [it, inserted] = entries_.emplace(id, std::make_unique<Entry>(task, owner));
    owners_.addTaskLocked(owner);
    TaskAccess::setState(*task, TaskState::Running);
    TaskAccess::setHost(*task, this);
    queueLocked(*it->second, task->wakeTime(), now);
    return id;
}

bool Scheduler::cancel(TaskId id, bool remove) {
    detail::ReleasedTasks dropped;
    bool held = false;
    {
        detail::MutexLock lock(owners_.mutex);
        if (Entry* e = findLocked(id)) {
            cancelLocked(*e, remove, dropped);
            held = true;
        }
    }
    owners_.release(dropped);
    return held;
}

bool Scheduler::wake(TaskId id) {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(id);
    return e != nullptr && wakeLocked(*e);
}

bool Scheduler::snooze(TaskId id, Clock::duration d) {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(id);
    if (e == nullptr || e->task->isDead()) {
        return false;
    }
    // A negative duration means "due now", never a wake time in the past.
    const auto after = std::max(d, Clock::duration::zero());
    TaskAccess::snoozeUntilLocked(*e->task, detail::deadlineAfter(Clock::now(), after));
    rekeyToWakeTimeLocked(*e);
    return true;
}

void Scheduler::onTaskSnoozed(Task& task, detail::SnoozeMade snooze) noexcept {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(task.id());
    if (e != nullptr && e->task.get() == &task && !task.isDead()) {
        TaskAccess::reapplySnooze(task, snooze);
        rekeyToWakeTimeLocked(*e);
    }
}

void Scheduler::onTaskCancelled(Task& task) noexcept {
    detail::ReleasedTasks dropped;  // stays empty: remove = false
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(task.id());
    if (e != nullptr && e->task.get() == &task) {
        cancelLocked(*e, false, dropped);
    } else {
        TaskAccess::setState(task, TaskState::Dead);
    }
}

// --- owners and stats --------------------------------------------------------

void Scheduler::registerTaskable(Taskable& owner) {
    owners_.registerOwner(owner);
}

std::size_t Scheduler::taskableCount() const {
    return owners_.count();
}

// Unregistration (the steps of OwnerRegistry): refuse; drop the owner's
// queued tasks (blockShutdown ones are woken and run here instead, unless
// force); wait until the pool holds none of them (a run in progress on
// another caller's thread finishes; a blockShutdown task that run queues
// again is run here too), then forget the owner.
void Scheduler::unregisterTaskable(Taskable& owner, bool force) {
    detail::OwnerRegistry::checkNotOwnTask(owner);
    detail::ReleasedTasks dropped;
    detail::UniqueLock lock(owners_.mutex);
    const auto registration = owners_.beginUnregisterLocked(owner);
    if (!registration) {
        return;
    }
    std::vector<Entry*> owned;
    for (auto& [id, e] : entries_) {
        if (e->owner.registration == *registration) {
            owned.push_back(e.get());
        }
    }
    for (Entry* e : owned) {
        if (force || !e->task->blocksShutdown()) {
            cancelLocked(*e, true, dropped);
        } else {
            wakeLocked(*e);
        }
    }
    if (!dropped.empty()) {
        lock.unlock();
        owners_.release(dropped);
        lock.lock();
    }
    const auto hasQueued = [&]() REQUIRES(owners_.mutex) {
        return queuedOfLocked(*registration) != nullptr;
    };
    do {
        drainOwnerInline(*registration, lock);
    } while (!owners_.awaitDrainedLocked(owner, *registration, lock, hasQueued));
}

PoolStats Scheduler::stats() const {
    PoolStats stats{};
    detail::StatsHold held(owners_);
    {
        detail::MutexLock lock(owners_.mutex);
        const auto now = Clock::now();
        for (const auto& [id, e] : entries_) {
            auto& s = stats.byType[static_cast<std::size_t>(e->task->type())];
            if (!e->running) {
                ++(e->key <= now ? s.ready : s.future);
            }
            held.tasks.push_back(e->task);
        }
        for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
            stats.byType[i].executed = executed_[i];
        }
    }
    stats.tasks = detail::describeTasks(held.tasks);  // user code: no lock held
    metrics_->fill(stats);
    return stats;
}

}  // namespace kvexec::manual
