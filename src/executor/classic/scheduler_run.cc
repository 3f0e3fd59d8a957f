// scheduler_run.cc: how a task taken from a queue is run and re-queued,
// and the worker threads that do it (their loop and their count).
#include "executor/classic/scheduler.h"

namespace kvexec::classic {

using detail::TaskAccess;

void Scheduler::runEntry(Entry& e, detail::WorkerSlot* worker) {
    // *e.task stays valid: a Running entry is never erased
    const detail::TaskRun run(*e.task, {metrics_.get(), worker}, e.kind);
    finishRun(e, run);
}

void Scheduler::finishRun(Entry& e, const detail::TaskRun& run) {
    TaskQueue& q = queueOf(e.task->type());
    {
        detail::MutexLock queueLock(q.mutex);
        if (run.ran()) {
            ++q.executed;
        }
        if (run.requeue(e.revived)) {
            requeueAfterRunLocked(q, e, run);
            return;
        }
        TaskAccess::setState(*e.task, TaskState::Dead);
        e.where = Entry::Where::Finishing;
    }
    dropFinished(e);
}

// Rules 4 and 5 (TaskRun): at once, or at its wake time.
void Scheduler::requeueAfterRunLocked(TaskQueue& q, Entry& e, const detail::TaskRun& run) {
    const auto now = Clock::now();
    const bool asap = run.asap(e.revived, e.notified, e.snoozedWhileRunning);
    if (asap) {
        TaskAccess::setWakeTime(*e.task, now);
    }
    e.key = asap ? now : e.keyFor(e.task->wakeTime(), now);
    e.forgetRunMarks();
    if (q.pushLocked(e, now)) {
        q.wakeup.notify_one();
    }
}

// The run ended Dead: drop the entry unless schedule() revived it meanwhile.
// A revived entry is queued like any other: at its wake time, at once if it
// was woken meanwhile or may not sleep (rule 9: unregister may have woken
// it while it was Finishing, and is waiting for it).
void Scheduler::dropFinished(Entry& e) {
    detail::ReleasedTasks erased;
    {
        detail::MutexLock lock(owners_.mutex);
        TaskQueue& q = queueOf(e.task->type());
        detail::UniqueLock queueLock(q.mutex);
        if (e.revived) {
            const auto now = Clock::now();
            if (e.notified) {
                TaskAccess::setWakeTime(*e.task, now);
            }
            e.key = e.keyFor(e.task->wakeTime(), now);
            e.forgetRunMarks();
            if (q.pushLocked(e, now)) {
                q.wakeup.notify_one();
            }
            return;
        }
        queueLock.unlock();
        eraseLocked(e, erased);
    }
    owners_.release(erased);  // the task's destructor runs here, with no lock held
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
        queueLock.unlock();
        runEntry(*e, slot);
        queueLock.lock();
    }
    // A notify meant for work may have reached this exiting thread: pass it on.
    q.wakeup.notify_one();
}

std::size_t Scheduler::threadCount(TaskType type) const {
    const TaskQueue& q = queueOf(type);
    detail::MutexLock queueLock(q.mutex);
    return q.targetThreads;
}

void Scheduler::setThreadCount(TaskType type, std::size_t n) {
    TaskQueue& q = queueOf(type);
    const auto retarget = [&q, n] {
        {
            detail::MutexLock queueLock(q.mutex);
            if (q.stopping) {
                return false;
            }
            q.targetThreads = n;
        }
        q.wakeup.notify_all();  // workers at or above n exit
        return true;
    };
    workers_.resize(type, n, &q, retarget, [this, &q](std::size_t index, detail::WorkerSlot* slot) {
        runWorker(q, index, slot);
    });
}

}  // namespace kvexec::classic
