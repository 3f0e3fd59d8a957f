// manual_run.cc: the Manual backend's drivers: picking what runs
// (runDue, runEarliest), one run and what follows it, and the inline run of
// blockShutdown tasks when their owner unregisters.
#include <tuple>
#include <utility>

#include "executor/manual/manual_scheduler.h"

namespace kvexec::manual {

using detail::TaskAccess;

// --- picking ----------------------------------------------------------------

Scheduler::Entry* Scheduler::queuedOfLocked(detail::OwnerRegistry::Registration registration) {
    for (auto& [id, e] : entries_) {
        if (e->owner.registration == registration && !e->running) {
            return e.get();
        }
    }
    return nullptr;
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
            const bool asap = run.asap(e.revived, e.woken, e.snoozed);
            if (asap) {
                TaskAccess::setWakeTime(*e.task, now);
            }
            e.selfRequeued = asap && !e.woken && !e.revived;
            e.forgetRunMarks();
            queueLocked(e, asap ? now : keyFor(e, now), now);
            owners_.wakeDrainWaitersLocked();  // an unregistering may run it now
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

// There is no worker to run blockShutdown tasks: run them here. Unlocks and
// relocks owners_.mutex through the caller's lock, which the analysis cannot
// follow through a parameter: unchecked inside, REQUIRES still checked at
// the call. Tasks are picked by the owner's registration: if another
// unregistering of the owner finishes while the lock is released and the
// owner is registered again, the new registration's tasks are not ours.
void Scheduler::drainOwnerInline(detail::OwnerRegistry::Registration registration,
                                 detail::UniqueLock& lock) NO_THREAD_SAFETY_ANALYSIS {
    for (;;) {
        Entry* queued = queuedOfLocked(registration);
        if (queued == nullptr) {
            return;
        }
        queued->running = true;
        lock.unlock();
        runEntry(*queued);
        lock.lock();
    }
}

}  // namespace kvexec::manual
