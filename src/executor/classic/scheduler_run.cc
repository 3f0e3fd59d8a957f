// scheduler_run.cc: how a task taken from a queue is run and re-queued,
// the worker threads that do it, and the Manual backend's drivers.
#include <stdexcept>
#include <string>

#include "executor/classic/scheduler.h"
#include "executor/task_runner.h"
#include "executor/thread_name.h"
#include "executor/worker_identity.h"

namespace kvexec::classic {

using detail::TaskAccess;

bool Scheduler::runEntry(Entry& e, detail::WorkerSlot* worker) {
    Task& task = *e.task;  // stays valid: a Running entry is never erased
    const std::uint32_t seqBefore = TaskAccess::snoozeSeq(task);
    const bool ran = !task.isDead();
    const bool again = ran && detail::runTask(task, {metrics_.get(), worker}, e.kind);
    finishRun(e, ran, again, seqBefore);
    return ran;
}

void Scheduler::finishRun(Entry& e, bool ran, bool again, std::uint32_t snoozeSeqBefore) {
    TaskQueue& q = queueOf(e.task->type());
    {
        detail::MutexLock queueLock(q.mutex);
        if (ran) {
            ++q.executed;
        }
        if (e.revived || (again && !e.task->isDead())) {
            requeueAfterRunLocked(q, e, snoozeSeqBefore);
            return;
        }
        TaskAccess::setState(*e.task, TaskState::Dead);
        e.where = Entry::Where::Finishing;
    }
    dropFinished(e);
}

// Rule 4 and 5: at its wake time if the run snoozed, as soon as possible if
// it did not, or if it was woken (or revived) while it ran.
void Scheduler::requeueAfterRunLocked(TaskQueue& q, Entry& e, std::uint32_t snoozeSeqBefore) {
    const auto now = Clock::now();
    const bool snoozed = TaskAccess::snoozeSeq(*e.task) != snoozeSeqBefore;
    const bool asap = e.revived || e.notified || !snoozed;
    if (asap) {
        TaskAccess::setWakeTime(*e.task, now);
    }
    e.key = asap ? now : e.keyFor(e.task->wakeTime(), now);
    e.selfRescheduled = mode_ == Mode::Manual && asap && !e.notified && !e.revived;
    e.notified = false;
    e.revived = false;
    if (q.pushLocked(e, now)) {
        q.wakeup.notify_one();
    }
}

// The run ended Dead: drop the entry unless schedule() revived it meanwhile.
// A revived entry is queued like any other: at its wake time, at once if it
// was woken meanwhile or may not sleep (rule 9: unregister may have woken
// it while it was Finishing, and is waiting for it).
void Scheduler::dropFinished(Entry& e) {
    std::vector<TaskPtr> erased;
    {
        detail::MutexLock lock(mutex_);
        TaskQueue& q = queueOf(e.task->type());
        detail::UniqueLock queueLock(q.mutex);
        if (e.revived) {
            const auto now = Clock::now();
            if (e.notified) {
                TaskAccess::setWakeTime(*e.task, now);
            }
            e.key = e.keyFor(e.task->wakeTime(), now);
            e.revived = false;
            e.notified = false;
            if (q.pushLocked(e, now)) {
                q.wakeup.notify_one();
            }
            return;
        }
        queueLock.unlock();
        erased.push_back(eraseLocked(e));
    }
    release(erased);  // the task's destructor runs here, with no lock held
}

// `slot` was added to the worker view before the thread started, so that
// stats() shows every worker as soon as setThreadCount() returns.
void Scheduler::workerLoop(TaskQueue& q, std::size_t index, detail::WorkerSlot* slot) {
    detail::setCurrentThreadName(detail::workerThreadName(q.type(), index));
    detail::setCurrentWorker(&q, index);
    runWorker(q, index, slot);
    if (slot != nullptr) {
        metrics_->removeWorker(*slot);
    }
}

void Scheduler::runWorker(TaskQueue& q, std::size_t index, detail::WorkerSlot* slot) {
    detail::UniqueLock queueLock(q.mutex);
    while (!q.stopping && index < q.targetThreads) {
        Entry* e = q.popReadyLocked(Clock::now());
        if (e == nullptr) {
            ++q.sleeping;
            const auto next = q.nextWakeLocked();
            if (next == Clock::time_point::max()) {
                q.wakeup.wait(queueLock.native());
            } else {
                q.wakeup.wait_until(queueLock.native(), next);
            }
            --q.sleeping;
            continue;
        }
        e->selfRescheduled = false;
        queueLock.unlock();
        runEntry(*e, slot);
        queueLock.lock();
    }
    // A notify meant for work may have reached this exiting thread: pass it on.
    q.wakeup.notify_one();
}

std::size_t Scheduler::threadCount(TaskType type) const {
    if (mode_ == Mode::Manual) {
        return 0;
    }
    const TaskQueue& q = queueOf(type);
    detail::MutexLock queueLock(q.mutex);
    return q.targetThreads;
}

void Scheduler::setThreadCount(TaskType type, std::size_t n) {
    if (mode_ == Mode::Manual) {
        return;
    }
    detail::MutexLock resizeLock(resizeMutex_);
    TaskQueue& q = queueOf(type);
    auto& threads = workers_[static_cast<std::size_t>(type)];
    if (detail::callerIsWorkerAtOrAbove(&q, n)) {
        throw std::logic_error("kvexec: setThreadCount() would stop the calling worker thread");
    }
    {
        detail::MutexLock queueLock(q.mutex);
        if (q.stopping) {
            return;
        }
        q.targetThreads = n;
    }
    if (n > threads.size()) {
        for (std::size_t i = threads.size(); i < n; ++i) {
            detail::WorkerSlot* slot =
                metrics_ ? &metrics_->addWorker(type, detail::workerThreadName(type, i)) : nullptr;
            threads.emplace_back([this, &q, i, slot] { workerLoop(q, i, slot); });
        }
        return;
    }
    q.wakeup.notify_all();
    for (std::size_t i = n; i < threads.size(); ++i) {
        threads[i].join();  // a running task finishes its run first
    }
    threads.resize(n);
}

std::size_t Scheduler::runDue(TaskType type) {
    TaskQueue& q = queueOf(type);
    {
        detail::MutexLock queueLock(q.mutex);
        q.clearSelfRescheduledLocked();
    }
    std::size_t runs = 0;
    for (;;) {
        Entry* e = nullptr;
        {
            detail::MutexLock queueLock(q.mutex);
            e = q.popReadySkippingSelfRescheduledLocked(Clock::now());
            if (e != nullptr) {
                e->selfRescheduled = false;
            }
        }
        if (e == nullptr) {
            return runs;
        }
        runs += runEntry(*e) ? 1 : 0;
    }
}

TaskId Scheduler::runEarliest(TaskType type) {
    TaskQueue& q = queueOf(type);
    for (;;) {
        Entry* e = nullptr;
        {
            detail::MutexLock queueLock(q.mutex);
            e = q.popEarliestLocked();
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

}  // namespace kvexec::classic
