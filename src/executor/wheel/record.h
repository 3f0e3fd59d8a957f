// record.h: what the Wheel backend keeps for each task it holds.
//
// A Record is owned by its Shard (its slab and id index) from schedule()
// until the task is dropped. Its place and what happens after its run are
// one State:
//
//   state           where the record is                  armed  linked
//   Timer           in its shard's wheel, possibly at a    yes    no
//                   deadline earlier than its task's wake
//                   time (lazy re-arm, see armLocked)
//   Ready           in the ready list of its task's type    no     yes
//   Running         taken by one worker                     no     no
//   RunningSnoozed  Running, and snoozed from outside        no     no
//                   meanwhile: at its wake time if the run
//                   returns true (TaskRun::asap)
//   RunningWoken    Running, and woken meanwhile: runs      no     no
//                   again at once if the run returns true
//   RunningRevived  Running, and scheduled again after a    no     no
//                   cancel: runs again at once, whatever
//                   the run returns
//
// Transitions, and the lock each needs:
//   Timer   -> Ready      queueLocked() (shard, then a ready lane)
//   Timer   -> Running    queueLocked() handing it to an idle worker
//                         while no record is queued (shard). Like a
//                         popped record, it is then the worker's: a wake
//                         before its run starts runs it once more after
//                         that run (rule 5, as for a running task); a
//                         snooze before it starts makes the worker place
//                         it again instead of running it (rules 1 and 6)
//   Running -> Timer      that worker, for such a snooze (shard)
//   Ready   -> Running    ReadyQueue::pop() (its lane's lock only: a worker)
//   Ready   -> Timer      a snooze: unlinkLocked() then armLocked() (both)
//   Running -> RunningSnoozed, Running or RunningSnoozed -> RunningWoken,
//   any Running* -> RunningRevived, Running* -> Running (cancel)  (shard)
//   Running* -> Timer / Ready / freed   its worker, after the run (shard)
//   Timer / Ready -> freed              cancel, unregister (shard; and the
//                                       lane to unlink a Ready one)
// Who may link, arm and free:
//   - Link: only WheelPool::queueLocked() (shard lock, then a ready
//     lane's lock), which first takes the record out of the wheel. Every
//     path that makes a record due (wake, snooze, rule 9, the timer) goes
//     through it, so an old deadline can never fire later and link it again.
//   - Unlink: a worker's ReadyQueue::pop() (Ready -> Running), or
//     cancel and re-arm holding both locks.
//   - Arm: only a Timer record, or a Ready one right after its unlink; a
//     Running one only by its own worker (after the run, or before it for a
//     snooze: deferSnoozed).
//   - Free: only WheelPool::eraseLocked() (shard lock), never while linked;
//     a Running record only by its own worker, after the run.
// ReadyLane checks the link rules in builds with assertions on.
//
// Guarded by: the shard's mutex for key, lane, the wheel entry and the
// map; the record's ready lane's mutex for the list links. `state` is
// written under the shard's mutex, and a Ready record's only under its
// lane's mutex as well, except by the worker that takes it (Ready ->
// Running, the lane's mutex alone). So it is atomic (relaxed: the locks
// order everything else) for a reader holding only the shard's mutex: that
// reader can tell Timer from queued and see the Running* flags, but must
// take the lane's mutex to tell Ready from Running
// (WheelPool::isRunningLocked). Lock order: shard, then lane.
#pragma once

#include <atomic>
#include <cstddef>

#include "executor/common/owner_registry.h"
#include "kvexec/task.h"
#include "kvexec/timer_wheel.h"

namespace kvexec::detail {
struct KindMetrics;
}

namespace kvexec::wheel {

struct Shard;

struct Record : TimerWheel::Entry {
    enum class State : std::uint8_t {
        Timer,
        Ready,
        Running,
        RunningSnoozed,
        RunningWoken,
        RunningRevived
    };

    Record(TaskPtr t, detail::OwnerState& o, Shard& s) : task(std::move(t)), owner(o), shard(s) {}

    State loadState() const noexcept { return state.load(std::memory_order_relaxed); }
    void setState(State s) noexcept { state.store(s, std::memory_order_relaxed); }
    bool running() const noexcept { return loadState() >= State::Running; }

    // Starts loading both cache lines of the record (RecordSlab aligns
    // each record to a line).
    void prefetch() const noexcept {
        __builtin_prefetch(this, 1);
        __builtin_prefetch(reinterpret_cast<const char*>(this) + 64, 1);
    }

    TaskPtr task;
    detail::OwnerState& owner;  // outlives the record
    Shard& shard;
    // A Ready record's wake time, as the ready list orders it. A Timer
    // record's deadline is its task's wake time instead (fireExpired() reads
    // it), so that re-arming a timeout need not write the record.
    Clock::time_point key{};
    std::atomic<State> state{State::Timer};
    // A Ready record's lane in its type's ReadyQueue: set by the push
    // (shard lock and the lane's), read under the shard lock.
    std::uint8_t lane = 0;
    // The task's snooze sequence when the record was last made due, or
    // (for a snooze that reached the record while a worker held it) a
    // value it cannot equal: a worker that finds the task's differ before
    // the run starts takes the snooze into account
    // (WheelPool::deferSnoozed). Written under the shard lock, read by the
    // worker without it.
    std::atomic<std::uint32_t> dueSnoozeSeq{0};
    // The task's kind in the pool's metrics: resolved by its first run,
    // then only touched by the worker running it.
    detail::KindMetrics* kind = nullptr;

    Record* readyPrev = nullptr;
    Record* readyNext = nullptr;
};

}  // namespace kvexec::wheel
