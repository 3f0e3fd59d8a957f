// scheduler.cc: schedule, cancel, wake and snooze for the Classic scheduler.
#include "executor/classic/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kvexec::classic {

using detail::TaskAccess;

Entry* Scheduler::findLocked(TaskId id) {
    auto it = locator_.find(id);
    return it == locator_.end() ? nullptr : it->second.get();
}

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
    if (Entry* held = findLocked(id)) {
        return task->isDead() ? reviveLocked(*held) : id;
    }
    auto [it, inserted] = locator_.emplace(id, std::make_unique<Entry>(task, owner));
    Entry& e = *it->second;
    owners_.addTaskLocked(owner);
    TaskAccess::setState(*task, TaskState::Running);
    TaskAccess::setHost(*task, this);

    TaskQueue& q = queueOf(task->type());
    detail::MutexLock queueLock(q.mutex);
    e.key = task->wakeTime();
    if (q.pushLocked(e, Clock::now())) {
        q.wakeup.notify_one();
    }
    return id;
}

// A held task that is Dead: queued (cancelled, not yet dropped), running,
// or finishing. Make it Running again; a running one runs again after.
// The state changes under the queue lock: a worker ending a run decides
// under that lock whether the task is Dead (finishRun); flipping it to
// Running outside the lock let that worker overwrite it with Dead after the
// revive, and the revived entry was then queued Dead at its wake time,
// never run nor dropped (an unregister hang).
TaskId Scheduler::reviveLocked(Entry& e) {
    TaskQueue& q = queueOf(e.task->type());
    detail::MutexLock queueLock(q.mutex);
    TaskAccess::setState(*e.task, TaskState::Running);
    if (e.where == Entry::Where::Future || e.where == Entry::Where::Ready) {
        const auto now = Clock::now();
        if (q.rekeyLocked(e, e.keyFor(e.task->wakeTime(), now), now)) {
            q.wakeup.notify_one();
        }
    } else {
        e.revived = true;
    }
    return e.task->id();
}

void Scheduler::eraseLocked(Entry& e, detail::ReleasedTasks& out) {
    TaskPtr task = std::move(e.task);
    detail::OwnerState& owner = e.owner;
    TaskAccess::setHost(*task, nullptr);
    locator_.erase(task->id());  // destroys e
    out.add(std::move(task), owner);
}

bool Scheduler::cancelLocked(Entry& e, bool remove, detail::ReleasedTasks& dropped) {
    TaskAccess::setState(*e.task, TaskState::Dead);
    TaskQueue& q = queueOf(e.task->type());
    detail::UniqueLock queueLock(q.mutex);
    e.forgetRunMarks();
    const bool queued = e.where == Entry::Where::Future || e.where == Entry::Where::Ready;
    if (queued && remove) {
        q.removeLocked(e);
        queueLock.unlock();
        eraseLocked(e, dropped);
    } else if (e.where == Entry::Where::Future) {
        // CB3: make it due so that a worker drops it soon.
        if (q.rekeyLocked(e, Clock::now(), Clock::now())) {
            q.wakeup.notify_one();
        }
    }
    return true;
}

bool Scheduler::cancel(TaskId id, bool remove) {
    detail::ReleasedTasks dropped;
    bool held = false;
    {
        detail::MutexLock lock(owners_.mutex);
        Entry* e = findLocked(id);
        held = e != nullptr && cancelLocked(*e, remove, dropped);
    }
    owners_.release(dropped);
    return held;
}

bool Scheduler::wakeLocked(Entry& e) {
    if (e.task->isDead()) {
        return false;
    }
    TaskQueue& q = queueOf(e.task->type());
    detail::MutexLock queueLock(q.mutex);
    const auto now = Clock::now();
    switch (e.where) {
        case Entry::Where::Future:
            TaskAccess::setWakeTime(*e.task, now);
            if (q.rekeyLocked(e, now, now)) {
                q.wakeup.notify_one();
            }
            break;
        case Entry::Where::Ready:
            break;  // due already
        case Entry::Where::Running:
        case Entry::Where::Finishing:
            e.notified = true;  // no lost wake-up: runs again after this run
            break;
    }
    return true;
}

bool Scheduler::wake(TaskId id) {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(id);
    return e != nullptr && wakeLocked(*e);
}

// The task's wake time has changed: move a queued entry to match. A running
// one is re-queued by its worker after the run, at its wake time
// (snoozedWhileRunning: the run may have read the snooze's count already).
void Scheduler::rekeyInQueueLocked(TaskQueue& q, Entry& e) {
    if (e.where == Entry::Where::Future || e.where == Entry::Where::Ready) {
        const auto now = Clock::now();
        if (q.rekeyLocked(e, e.keyFor(e.task->wakeTime(), now), now)) {
            q.wakeup.notify_one();
        }
    } else if (e.where == Entry::Where::Running) {
        e.snoozedWhileRunning = true;  // its worker places it after the run
    }
}

bool Scheduler::snooze(TaskId id, Clock::duration d) {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(id);
    if (e == nullptr || e->task->isDead()) {
        return false;
    }
    // A negative duration means "due now", never a wake time in the past
    // (it would count as queue time).
    const auto after = std::max(d, Clock::duration::zero());
    // Under the queue's lock, which a run's end takes: one ending between
    // the snooze's two writes would set the wake time to now over it.
    TaskQueue& q = queueOf(e->task->type());
    detail::MutexLock queueLock(q.mutex);
    TaskAccess::snoozeUntilLocked(*e->task, detail::deadlineAfter(Clock::now(), after));
    rekeyInQueueLocked(q, *e);
    return true;
}

void Scheduler::onTaskSnoozed(Task& task, detail::SnoozeMade snooze) noexcept {
    detail::MutexLock lock(owners_.mutex);
    Entry* e = findLocked(task.id());
    if (e == nullptr || e->task.get() != &task || task.isDead()) {
        return;
    }
    // Both under the lock a run's end takes (finishRun), in one section: a
    // run ending between them would set the wake time to now again.
    TaskQueue& q = queueOf(task.type());
    detail::MutexLock queueLock(q.mutex);
    TaskAccess::reapplySnooze(task, snooze);
    rekeyInQueueLocked(q, *e);
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

}  // namespace kvexec::classic
