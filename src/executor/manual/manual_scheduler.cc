// manual_scheduler.cc: the Manual backend's scheduler: schedule, cancel,
// wake, snooze, the runDue/runEarliest drivers, owners and stats.
#include "executor/manual/manual_scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>

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
    e.woken = false;
    e.revived = false;
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
// running one is re-queued after its run, which sees the snooze.
void Scheduler::rekeyToWakeTimeLocked(Entry& e) {
    if (e.running || e.task->isDead()) {
        return;
    }
    const auto now = Clock::now();
    queueLocked(e, keyFor(e, now), now);
}

Scheduler::Entry* Scheduler::takeDueLocked(TaskType type, Clock::time_point now) {
    Entry* best = nullptr;
    for (auto& [id, entry] : entries_) {
        Entry& e = *entry;
        if (e.running || e.task->type() != type || e.key > now) {
            continue;
        }
        TaskAccess::setStateUnlessDead(*e.task, TaskState::Running);
        if (e.selfRequeued) {
            continue;
        }
        const auto rank = [](const Entry& x) {
            return std::make_tuple(x.task->priority(), x.key, x.queuedAt);
        };
        if (best == nullptr || rank(e) < rank(*best)) {
            best = &e;
        }
    }
    if (best != nullptr) {
        best->running = true;
    }
    return best;
}

Scheduler::Entry* Scheduler::takeEarliestLocked(TaskType type) {
    Entry* best = nullptr;
    for (auto& [id, entry] : entries_) {
        Entry& e = *entry;
        if (e.running || e.task->type() != type) {
            continue;
        }
        if (best == nullptr ||
            std::make_pair(e.key, e.queuedAt) < std::make_pair(best->key, best->queuedAt)) {
            best = &e;
        }
    }
    if (best != nullptr) {
        best->running = true;
    }
    return best;
}

// --- running ---------------------------------------------------------------

bool Scheduler::runEntry(Entry& e) {
    // *e.task stays valid: a running entry is erased only here.
    const detail::TaskRun run(*e.task, {metrics_.get(), nullptr}, e.kind);
    detail::ReleasedTasks erased;
    {
        detail::MutexLock lock(owners_.mutex);
        if (run.ran()) {
            ++executed_[static_cast<std::size_t>(e.task->type())];
        }
        if (run.requeue(e.revived)) {
            const auto now = Clock::now();
            const bool asap = run.asap(e.revived, e.woken);
            if (asap) {
                TaskAccess::setWakeTime(*e.task, now);
            }
            e.selfRequeued = asap && !e.woken && !e.revived;
            e.woken = false;
            e.revived = false;
            queueLocked(e, asap ? now : keyFor(e, now), now);
        } else {
            TaskAccess::setState(*e.task, TaskState::Dead);
            eraseLocked(e, erased);
        }
    }
    owners_.release(erased);  // the task's destructor runs here, with no lock held
    return run.ran();
}

std::size_t Scheduler::runDue(TaskType type) {
    {
        detail::MutexLock lock(owners_.mutex);
        for (auto& [id, e] : entries_) {
            if (e->task->type() == type) {
                e->selfRequeued = false;
            }
        }
    }
    std::size_t runs = 0;
    for (;;) {
        Entry* e = nullptr;
        {
            detail::MutexLock lock(owners_.mutex);
            e = takeDueLocked(type, Clock::now());
        }
        if (e == nullptr) {
            return runs;
        }
        runs += runEntry(*e) ? 1 : 0;
    }
}

TaskId Scheduler::runEarliest(TaskType type) {
    for (;;) {
        Entry* e = nullptr;
        {
            detail::MutexLock lock(owners_.mutex);
            e = takeEarliestLocked(type);
        }
        if (e == nullptr) {
            return 0;
        }
        const TaskId id = e->task->id();
        if (runEntry(*e)) {
            return id;
        }
        // It was Dead and has been dropped: look at the next one.
    }
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
    TaskAccess::snoozeUntil(*e->task, detail::deadlineAfter(Clock::now(), after));
    rekeyToWakeTimeLocked(*e);
    return true;
}

void Scheduler::onTaskSnoozed(Task& task) noexcept {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(task.id());
    if (e != nullptr && e->task.get() == &task) {
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

// There is no worker to run blockShutdown tasks: run them here. Unlocks and
// relocks owners_.mutex through the caller's lock, which the analysis cannot
// follow through a parameter: unchecked inside, REQUIRES still checked at
// the call.
void Scheduler::drainOwnerInline(Taskable& owner,
                                 detail::UniqueLock& lock) NO_THREAD_SAFETY_ANALYSIS {
    for (;;) {
        Entry* queued = nullptr;
        for (auto& [id, e] : entries_) {
            if (&e->task->owner() == &owner && !e->running) {
                queued = e.get();
                break;
            }
        }
        if (queued == nullptr) {
            return;
        }
        queued->running = true;
        lock.unlock();
        runEntry(*queued);
        lock.lock();
    }
}

// Unregistration (the steps of OwnerRegistry): refuse; drop the owner's
// queued tasks (blockShutdown ones are woken and run here instead, unless
// force); wait until the pool holds none of them (a run in progress on
// another caller's thread finishes), then forget the owner.
void Scheduler::unregisterTaskable(Taskable& owner, bool force) {
    detail::OwnerRegistry::checkNotOwnTask(owner);
    detail::ReleasedTasks dropped;
    detail::UniqueLock lock(owners_.mutex);
    if (owners_.beginUnregisterLocked(owner) == nullptr) {
        return;
    }
    std::vector<Entry*> owned;
    for (auto& [id, e] : entries_) {
        if (&e->task->owner() == &owner) {
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
    drainOwnerInline(owner, lock);
    owners_.awaitDrainedLocked(owner, lock);
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
