// record.h: what the Wheel backend keeps for each task it holds.
//
// A Record is owned by its Shard's map from schedule() until the task is
// dropped. It is in exactly one of three places at any time:
//   Timer    (where == Timer): armed in its shard's wheel, possibly at a
//            deadline earlier than `key` (lazy re-arm, see armLocked); in no
//            ready list.
//   Ready    (where == Queued, inReadyList): linked in the ready list of its
//            task's type; not armed.
//   Running  (where == Queued, !inReadyList): taken by one worker; neither
//            armed nor linked.
// Who may move it, and under which lock:
//   - Link: only WheelPool::queueLocked() (shard lock, then the ready
//     queue's lock), which first takes the record out of the wheel. Every
//     path that makes a record due (wake, snooze, rule 9, the timer) goes
//     through it, so an old deadline can never fire later and link it again.
//   - Unlink: a worker's ReadyQueue::popLocked() (queue lock only: Ready ->
//     Running), or cancel and re-arm holding both locks.
//   - Arm: only a Timer record, or a Ready one right after its unlink; never
//     a Running one (its worker places it again after the run).
//   - Free: only WheelPool::eraseLocked() (shard lock), never while linked;
//     a Running record only by its own worker, after the run.
// ReadyQueue checks the link rules in builds with assertions on.
//
// Guarded by: the shard's mutex for where/key/notified/revived, the wheel
// entry and the map; the ready queue's mutex for the list links and
// inReadyList. Lock order: shard, then ready queue.
#pragma once

#include <atomic>
#include <cstddef>

#include "kvexec/task.h"
#include "kvexec/timer_wheel.h"

namespace kvexec::detail {
struct KindMetrics;
}

namespace kvexec::wheel {

struct Shard;

// An owner (Taskable) as the Wheel backend tracks it.
struct OwnerState {
    // Written under the pool's owners mutex; also read under a shard lock.
    std::atomic<bool> unregistering{false};
    std::atomic<std::size_t> tasks{0};  // records held; falls after release
};

struct Record : TimerWheel::Entry {
    enum class Where : std::uint8_t { Timer, Queued };

    Record(TaskPtr t, OwnerState& o, Shard& s) : task(std::move(t)), owner(o), shard(s) {}

    TaskPtr task;
    OwnerState& owner;
    Shard& shard;
    Clock::time_point key{};  // wake time as the ready list orders it
    Where where = Where::Timer;
    bool notified = false;  // woken while running: run again at once
    bool revived = false;   // scheduled again (after cancel) while running
    // The task's kind in the pool's metrics: resolved by its first run,
    // then only touched by the worker running it.
    detail::KindMetrics* kind = nullptr;

    Record* readyPrev = nullptr;
    Record* readyNext = nullptr;
    bool inReadyList = false;
};

}  // namespace kvexec::wheel
