// wheel_pool.cc: schedule, wake, snooze and cancel for the Wheel backend.
// Each is one shard lock (plus a ready lane's lock when a task becomes
// due), O(1), and never waits for another thread.
#include "executor/wheel/wheel_pool.h"

#include <cassert>
#include <stdexcept>
#include <string>

namespace kvexec::wheel {

using detail::TaskAccess;

// --- shard-locked steps --------------------------------------------------

// Makes the record due (ready queue) or arms it, by its key.
void WheelPool::placeLocked(Record& r, Clock::time_point key, Clock::time_point now,
                            Deferred& out) {
    if (key <= now) {
        queueLocked(r, key, out);
    } else {
        armLocked(r, key, out);
    }
}

// The one place a record is made due (record.h): it leaves the wheel here,
// whatever made it due, and goes straight to an idle worker when no record
// is queued before it (and no other may become due in this section:
// Deferred::batch), else into a ready list.
//
// With more workers than cores only a spinning worker is handed a record:
// a sleeper must first get a core that busy threads hold, while a record
// in a lane goes to whichever worker frees up first (the sleeper woken
// beside it helps if it gets there first). Handing records to sleepers
// there too made LongLivedScheduleRun at 4-16 threads on 2 vCPUs 0.53-0.76x
// of the lanes alone, at 1.4-1.8x the CPU per round trip.
void WheelPool::queueLocked(Record& r, Clock::time_point key, Deferred& out) {
    if (r.armed()) {
        r.shard.wheel.cancel(r);
    }
    r.key = key;
    TaskAccess::setStateUnlessDead(*r.task, TaskState::Running);
    ReadyQueue& q = readyOf(r.task->type());
    r.dueSnoozeSeq.store(TaskAccess::snoozeSeq(*r.task), std::memory_order_relaxed);
    const bool sleepersToo = q.targetThreads() <= spinGate_.cores();
    Parker* worker = out.batch ? nullptr : q.takeIdleForHandOff(sleepersToo);
    if (worker != nullptr) {
        r.setState(Record::State::Running);  // taken, as a pop would
        worker->handOff(&r);
        out.unpark.add(worker);
        return;
    }
    q.push(r);  // -> Ready
    if (Parker* p = q.takeIdle()) {
        out.unpark.add(p);
    }
}

// Lazy re-arm: most timeouts (a SyncWrite's, re-armed on every write) are
// moved later again and again and never fire. Moving an armed entry later only records the new
// deadline in the record; the wheel keeps the earlier one, and when that
// fires, fireExpired() re-arms the entry at its real deadline. So a re-arm
// touches no wheel list (no cache misses on list neighbours), and an entry
// still never fires early.
void WheelPool::armLocked(Record& r, Clock::time_point deadline, Deferred& out) {
    // Rule 9: while its owner is being unregistered, a blockShutdown task
    // is never put to sleep (not by its own run, not by a snooze from
    // outside): it runs until it returns false, and unregister waits for it.
    // A record still armed (a lazy re-arm) leaves the wheel in queueLocked.
    if (r.owner.mustNotSleep(*r.task)) {
        queueLocked(r, Clock::now(), out);
        return;
    }
    // A re-arm of a Timer record writes nothing into the record unless it
    // moves in the wheel: among a million timeouts that is a dirty cache
    // line fewer to write back per re-arm. (Its deadline is the task's
    // wake time, which fireExpired() reads: record.h.)
    if (r.loadState() != Record::State::Timer) {
        r.setState(Record::State::Timer);
    }
    TaskAccess::setStateUnlessDead(*r.task, TaskState::Snoozed);
    if (r.armed() && r.deadline() <= deadline) {
        return;
    }
    r.shard.wheel.arm(r, deadline);
    // Read after arming: see the timer protocol in timerLoop().
    if (deadline.time_since_epoch().count() < timerWakeAt_.load()) {
        out.notifyTimer = true;
    }
}

// A worker has it. Ready and Running differ only under the record's lane
// lock (a worker takes a record holding that lock alone). A record seen
// Running* needs no look there: only its worker moves it on, under the
// shard lock held here.
bool WheelPool::isRunningLocked(const Record& r) {
    const Record::State state = r.loadState();
    if (state != Record::State::Ready) {
        return state != Record::State::Timer;
    }
    detail::MutexLock lock(readyOf(r.task->type()).laneOf(r).mutex);
    return r.running();
}

void WheelPool::eraseLocked(Record& r, detail::ReleasedTasks& released) {
    if (r.armed()) {
        r.shard.wheel.cancel(r);
    }
    TaskPtr task = std::move(r.task);
    detail::OwnerState& owner = r.owner;
    TaskAccess::setHost(*task, nullptr);
    r.shard.removeLocked(task->id());  // r is gone from here
    released.add(std::move(task), owner);
}

// Dead at once; dropped at once unless a worker is running it (then the
// worker drops it when the run ends). Queued work is unlinked directly.
void WheelPool::cancelLocked(Record& r, Deferred& out) {
    TaskAccess::setState(*r.task, TaskState::Dead);
    if (r.loadState() != Record::State::Timer) {
        ReadyQueue& q = readyOf(r.task->type());
        detail::MutexLock lock(q.laneOf(r).mutex);
        if (r.running()) {
            r.setState(Record::State::Running);  // forget a wake or revive
            return;
        }
        q.unlinkLocked(r);
    }
    eraseLocked(r, out.released);
}

bool WheelPool::wakeLocked(Record& r, Deferred& out) {
    if (r.task->isDead()) {
        return false;
    }
    if (r.loadState() == Record::State::Timer) {
        const auto now = Clock::now();
        TaskAccess::setWakeTime(*r.task, now);
        queueLocked(r, now, out);
    } else if (isRunningLocked(r)) {
        // No lost wake-up: runs again after this run (a revive already does),
        // as soon as possible: its wake time is now (rule 5). Set on every
        // wake, also of a record woken before: a worker that has the record
        // and has not started its run tells a snooze after the last wake
        // from one before it by the wake time (deferSnoozed), so a wake, a
        // snooze and a wake again must leave it at now.
        TaskAccess::setWakeTime(*r.task, Clock::now());
        const Record::State state = r.loadState();
        if (state == Record::State::Running || state == Record::State::RunningSnoozed) {
            r.setState(Record::State::RunningWoken);
        }
    }
    return true;
}

// The task's wake time changed: re-arm, make due, or (when running) leave
// it to the worker, which sees the snooze by its sequence number.
void WheelPool::rekeyToWakeTimeLocked(Record& r, Clock::time_point now, Deferred& out) {
    const auto when = r.task->wakeTime();
    if (r.loadState() == Record::State::Timer) {
        if (when <= now) {
            queueLocked(r, when, out);
        } else {
            armLocked(r, when, out);  // O(1) re-arm
        }
        return;
    }
    if (r.loadState() != Record::State::Ready || when <= now) {
        if (r.running()) {
            snoozedWhileHeldLocked(r);
        }
        return;  // or due anyway
    }
    ReadyQueue& q = readyOf(r.task->type());
    detail::UniqueLock lock(q.laneOf(r).mutex);
    if (r.loadState() == Record::State::Ready) {  // not taken by a worker meanwhile
        q.unlinkLocked(r);
        lock.unlock();
        armLocked(r, when, out);
    } else {
        snoozedWhileHeldLocked(r);
    }
}

// A snooze reached a record a worker holds: the worker places it after the
// run, at its wake time (RunningSnoozed: the run may have read the
// snooze's count already, as a Task::snooze from another thread counts
// before it takes this lock). One that has not started the run must see
// the snooze even if the snooze's count was read when the record became
// due: deferSnoozed.
void WheelPool::snoozedWhileHeldLocked(Record& r) {
    r.dueSnoozeSeq.store(TaskAccess::snoozeSeq(*r.task) - 1, std::memory_order_relaxed);
    if (r.loadState() == Record::State::Running) {
        r.setState(Record::State::RunningSnoozed);
    }
}

// --- after the locks -----------------------------------------------------

void WheelPool::finish(Deferred& out) {
    out.unpark.unparkAll();
    if (out.notifyTimer) {
        notifyTimer();
    }
    owners_.release(out.released);  // destructors run here, with no lock held
}

// --- the API -------------------------------------------------------------

TaskId WheelPool::schedule(TaskPtr task) {
    if (!task) {
        throw std::invalid_argument("kvexec: schedule() of a null TaskPtr");
    }
    auto* host = TaskAccess::host(*task);
    if (host != nullptr && host != static_cast<detail::TaskHost*>(this)) {
        throw std::logic_error("kvexec: schedule() of a task held by another pool");
    }
    const TaskId id = task->id();
    // The shard's and the ready lane's lock lines were last written by a
    // worker: start taking them over while the task is admitted.
    __builtin_prefetch(&shardOf(id), 1);
    readyOf(task->type()).prefetchForPush();
    // Admitted through the admission stripe of this core, not under the
    // owners lock: schedule() calls on many cores would otherwise all
    // meet on that lock.
    detail::OwnerState* const owner = owners_.admit(*task);
    if (owner == nullptr) {
        throw owners_.refusedError(*task);
    }
    Deferred out;
    Admission admission = Admission::Refused;
    try {
        insert(task, *owner, admission, out);
    } catch (...) {
        if (admission != Admission::Inserted) {  // else the record holds the count
            owners_.uncount(*owner);
        }
        throw;
    }
    finish(out);
    if (admission == Admission::AlreadyHeld) {
        owners_.uncount(*owner);
    } else if (admission == Admission::Refused) {
        // Made before the count out: the error names the owner, which may
        // be gone once unregisterTaskable() sees its last task counted out.
        const std::logic_error refused = owners_.refusedError(*task);
        owners_.uncount(*owner);
        throw refused;
    }
    return id;
}

// Under the shard lock: refused if the owner began unregistering or the
// pool stopping since admission (owner_registry.h: refusesNow); a task the
// pool holds already is run again if a worker runs it Dead (a schedule
// after a cancel), and otherwise left as it is. `admission` says Inserted
// from the moment the shard holds the record (and with it the task's
// count), also if placing it then throws.
void WheelPool::insert(const TaskPtr& task, detail::OwnerState& owner, Admission& admission,
                       Deferred& out) {
    const TaskId id = task->id();
    Shard& shard = shardOf(id);
    detail::MutexLock shardLock(shard.mutex);
    if (owners_.refusesNow(owner)) {
        admission = Admission::Refused;
        return;
    }
    if (Record* held = shard.findLocked(id)) {
        // Held and Dead means a worker is running it: run it again after.
        if (task->isDead()) {
            assert(held->running() && "a held Dead record that no worker runs");
            TaskAccess::setState(*task, TaskState::Running);
            held->setState(Record::State::RunningRevived);
        }
        admission = Admission::AlreadyHeld;
        return;
    }
    Record& r = shard.addLocked(task, owner);
    admission = Admission::Inserted;
    TaskAccess::setState(*task, TaskState::Running);
    TaskAccess::setHost(*task, this);
    heldFor(shard, r);
    placeLocked(r, task->wakeTime(), Clock::now(), out);
}

bool WheelPool::cancel(TaskId id, bool /*remove: queued tasks are always dropped at once*/) {
    Deferred out;
    bool held = false;
    {
        Shard& shard = shardOf(id);
        detail::MutexLock lock(shard.mutex);
        if (Record* r = shard.findLocked(id)) {
            heldFor(shard, *r);
            cancelLocked(*r, out);
            held = true;
        }
    }
    finish(out);
    return held;
}

bool WheelPool::wakeAndWait(TaskId id) {
    Deferred out;
    bool woken = false;
    {
        Shard& shard = shardOf(id);
        detail::MutexLock lock(shard.mutex);
        if (Record* r = shard.findLocked(id)) {
            heldFor(shard, *r);
            woken = wakeLocked(*r, out);
        }
    }
    finish(out);
    return woken;
}

bool WheelPool::snoozeAndWait(TaskId id, Clock::duration d) {
    Deferred out;
    {
        Shard& shard = shardOf(id);
        detail::MutexLock lock(shard.mutex);
        const auto [r, task] = shard.findWithTaskLocked(id);
        if (r == nullptr) {
            return false;
        }
        // Among a million timeouts neither the task nor the record is
        // likely in cache: start fetching both (the index gives the task's
        // address, so this need not wait for the record), and read the
        // clock while they come.
        TaskAccess::prefetchForSnooze(*task);
        r->prefetch();
        const auto now = Clock::now();
        if (task->isDead()) {
            return false;
        }
        TaskAccess::snoozeUntilLocked(*task, detail::deadlineAfter(now, d));
        heldFor(shard, *r);
        rekeyToWakeTimeLocked(*r, now, out);
    }
    finish(out);
    return true;
}

void WheelPool::onTaskSnoozed(Task& task, detail::SnoozeMade snooze) noexcept {
    Deferred out;
    {
        Shard& shard = shardOf(task.id());
        detail::MutexLock lock(shard.mutex);
        Record* r = shard.findLocked(task.id());
        if (r == nullptr || r->task.get() != &task || task.isDead()) {
            return;
        }
        TaskAccess::reapplySnooze(task, snooze);
        heldFor(shard, *r);
        rekeyToWakeTimeLocked(*r, Clock::now(), out);
    }
    finish(out);
}

void WheelPool::onTaskCancelled(Task& task) noexcept {
    Deferred out;
    {
        Shard& shard = shardOf(task.id());
        detail::MutexLock lock(shard.mutex);
        Record* r = shard.findLocked(task.id());
        if (r != nullptr && r->task.get() == &task) {
            heldFor(shard, *r);
            cancelLocked(*r, out);
        } else {
            TaskAccess::setState(task, TaskState::Dead);
        }
    }
    finish(out);
}

}  // namespace kvexec::wheel
