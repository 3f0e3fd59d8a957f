// wheel_threads.cc: the threads of the Wheel backend: workers that run due
// tasks and park when idle, their count (threadCount, setThreadCount), and
// the timer thread that moves expired tasks from the wheels to the ready
// queues.
#include <cassert>
#include <stdexcept>
#include <string>

#include "executor/common/task_run.h"
#include "executor/thread_name.h"
#include "executor/wheel/wheel_pool.h"

namespace kvexec::wheel {

using detail::TaskAccess;

// Runs a record a worker took from its ready queue, then re-queues it
// (rules 4 and 5) or leaves it in `dropped` for the worker to drop. False
// if the task was Dead and did not run.
bool WheelPool::runRecord(Record& r, detail::WorkerSlot* worker, detail::ReleasedTasks& dropped) {
    Task& task = *r.task;  // a running record is never erased by others
    const std::uint32_t snoozeSeq = TaskAccess::snoozeSeq(task);
    if (snoozeSeq != r.dueSnoozeSeq.load(std::memory_order_relaxed) && deferSnoozed(r)) {
        return false;
    }
    const detail::TaskRun run(task, {metrics_.get(), worker}, r.kind, snoozeSeq);
    Deferred out;
    {
        detail::MutexLock lock(r.shard.mutex);
        const Record::State state = r.loadState();
        const bool revived = state == Record::State::RunningRevived;
        if (run.requeue(revived)) {
            const auto now = Clock::now();
            const bool asap = run.asap(revived, state == Record::State::RunningWoken,
                                       state == Record::State::RunningSnoozed);
            if (asap) {
                TaskAccess::setWakeTime(task, now);
            }
            placeLocked(r, asap ? now : task.wakeTime(), now, out);
        } else {
            TaskAccess::setState(task, TaskState::Dead);
            eraseLocked(r, dropped);
        }
    }
    finish(out);
    return run.ran();
}

// The task was snoozed after its record became due and before this worker
// began its run (the record was handed to the worker, or popped, and the
// worker had not started): it waits for its new wake time (rules 1 and 6),
// unless it was woken after the snooze (a wake sets the wake time to now:
// wakeLocked), scheduled again after a cancel, or cancelled. True: the
// record is placed again and no longer this worker's.
bool WheelPool::deferSnoozed(Record& r) {
    Deferred out;
    {
        detail::MutexLock lock(r.shard.mutex);
        const Task& task = *r.task;
        const Record::State state = r.loadState();
        if (state == Record::State::RunningRevived || task.isDead() ||
            task.wakeTime() <= Clock::now()) {
            return false;
        }
        armLocked(r, task.wakeTime(), out);  // a wake before the snooze is forgotten
    }
    finish(out);
    return true;
}

// Started by workers_ (common/worker_threads.h), which names the thread
// and keeps its worker-view `slot`.
void WheelPool::workerLoop(TaskType type, std::size_t index, detail::WorkerSlot* slot) {
    ReadyQueue& q = readyOf(type);
    // Tasks whose last run ended here, dropped (and counted out of their
    // owners) once this worker has taken its next record, or before it
    // lists itself idle (waitForWork): right after a run, the thread the
    // run signalled is likely allocating its next task, and freeing this
    // one then meets it on the allocator's lock (glibc's sleeps at once on
    // a collision). A record taken first waits for those destructors, so
    // a destructor must not wait for another task of its type to run.
    detail::ReleasedTasks dropped;
    Parker& me = q.parker(index);
    for (;;) {
        // A record handed to this worker is run even while the pool stops
        // (a Dead task does not run, and its record is dropped): it is in
        // no lane that shutdown would clear.
        Record* r = me.takeHandedOff();
        if (r == nullptr) {
            if (q.stopping() || index >= q.targetThreads()) {
                break;
            }
            bool more = false;
            r = q.pop(more);
            if (r == nullptr) {
                waitForWork(q, index, dropped);
                continue;
            }
            if (more) {
                if (Parker* helper = q.takeIdle()) {  // more work queued: share it
                    helper->unpark();
                }
            }
        }
        me.beforeRun(spinGate_, r->task->lastRuntime());  // a running record is ours
        owners_.release(dropped);
        if (runRecord(*r, slot, dropped)) {
            me.countRun();
        }
    }
    me.leaveGate(spinGate_);
    // An unpark meant for work may have reached this exiting worker: pass
    // it on.
    if (q.anyQueued()) {
        if (Parker* helper = q.takeIdle()) {
            helper->unpark();
        }
    }
    owners_.release(dropped);
}

// Enlists as idle, looks for work once more (a producer that queued work
// before the enlisting could not see this worker: idle_workers.h), then
// parks. Every exit from the idle set is one of: taken by a producer (who
// unparks), or withdrawn by the worker itself (owed nothing).
//
// The tasks it dropped are released (destructors run) while it is in no
// idle set: a destructor may take long, or wait for another task of this
// type, and a producer that took this worker meanwhile would leave its
// work waiting behind it while other workers sleep.
void WheelPool::waitForWork(ReadyQueue& q, std::size_t index, detail::ReleasedTasks& dropped) {
    Parker& me = q.parker(index);
    IdleWorkers& idle = q.idle();
    const auto mustLook = [&q, index] {
        return q.anyQueued() || q.stopping() || index >= q.targetThreads();
    };
    me.prepare();
    const SpinMode mode =
        q.targetThreads() <= spinGate_.cores() ? SpinMode::Yield : SpinMode::Pause;
    const bool spinning = me.claimSpin(spinGate_, mode);
    if (!spinning) {
        owners_.release(dropped);  // before it enlists: see below
    }
    idle.enlist(index, spinning);
    if (mustLook() && idle.withdraw(index, spinning)) {
        me.unpark();  // park() returns at once (a claimed spin catches it)
    }
    me.park(spinGate_, mode, [&](bool spun) {
        if (!spun) {
            return true;
        }
        // From the spinning idle workers to the sleeping ones; in between,
        // producers cannot see this worker, so it looks again.
        if (!idle.withdraw(index, /*spinning=*/true)) {
            return true;  // taken: the unpark is on its way
        }
        owners_.release(dropped);
        idle.enlist(index, /*spinning=*/false);
        return !(mustLook() && idle.withdraw(index, /*spinning=*/false));
    });
}

void WheelPool::checkThreadCount(std::size_t n) {
    if (n > ReadyQueue::kMaxWorkers) {
        throw std::invalid_argument("kvexec: the Wheel backend runs at most " +
                                    std::to_string(ReadyQueue::kMaxWorkers) +
                                    " workers per task type");
    }
}

std::size_t WheelPool::threadCount(TaskType type) const {
    return readyOf(type).targetThreads();
}

void WheelPool::setThreadCount(TaskType type, std::size_t n) {
    checkThreadCount(n);
    ReadyQueue& q = readyOf(type);
    const auto retarget = [&q, n] {
        {
            detail::MutexLock lock(q.control);
            if (q.stopping()) {
                return false;
            }
            q.makeParkersLocked(n);  // before the threads
            q.setTargetLocked(n);
        }
        q.wakeAllIdle();  // each looks at whether it must stop
        return true;
    };
    workers_.resize(type, n, &q, retarget,
                    [this, type](std::size_t index, detail::WorkerSlot* slot) {
                        workerLoop(type, index, slot);
                    });
}

// --- the timer -------------------------------------------------------------

void WheelPool::notifyTimer() {
    detail::MutexLock lock(timerMutex_);
    timerPending_ = true;
    timerCv_.notify_one();
}

void WheelPool::fireExpired(Clock::time_point now, Deferred& out) {
    out.batch = true;
    for (auto& shard : shards_) {
        detail::MutexLock lock(shard->mutex);
        shard->wheel.advance(now, [&](TimerWheel::Entry& e) {
            auto& r = static_cast<Record&>(e);
            shard->mutex.assertHeld();  // advance() calls back under it
            heldFor(*shard, r);
            assert(r.loadState() == Record::State::Timer &&
                   "an armed record that is not in the timer");
            const Clock::time_point deadline = r.task->wakeTime();
            if (deadline > now) {
                shard->wheel.arm(r, deadline);  // re-armed later meanwhile (lazy re-arm)
            } else {
                queueLocked(r, deadline, out);
            }
        });
    }
}

// The timer protocol. The thread publishes "scanning" (timerWakeAt_ = max)
// before it visits the shards, so an arm that lands in a shard after its
// visit reads either max or the final wake time, and in both cases notifies
// if it is earlier. Notifications set timerPending_ under timerMutex_, which
// the thread checks before it sleeps: no arm is missed, and an idle pool
// sleeps until its earliest deadline.
void WheelPool::timerLoop() {
    detail::setCurrentThreadName("Wheel_timer");
    detail::UniqueLock lock(timerMutex_);
    while (!timerStop_) {
        timerPending_ = false;
        lock.unlock();
        timerWakeAt_.store(Clock::time_point::max().time_since_epoch().count());
        Deferred out;
        fireExpired(Clock::now(), out);
        auto next = Clock::time_point::max();
        for (auto& shard : shards_) {
            detail::MutexLock shardLock(shard->mutex);
            if (auto expiry = shard->wheel.nextExpiry()) {
                next = std::min(next, *expiry);
            }
        }
        finish(out);
        lock.lock();
        if (timerPending_ || timerStop_) {
            continue;
        }
        timerWakeAt_.store(next.time_since_epoch().count());
        if (next == Clock::time_point::max()) {
            timerCv_.wait(lock.native(),
                          [&]() REQUIRES(timerMutex_) { return timerPending_ || timerStop_; });
        } else {
            timerCv_.wait_until(lock.native(), next, [&]() REQUIRES(timerMutex_) {
                return timerPending_ || timerStop_;
            });
        }
    }
}

}  // namespace kvexec::wheel
