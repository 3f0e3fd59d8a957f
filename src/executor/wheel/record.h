// record.h: what the Wheel backend keeps for each task it holds.
//
// A Record is owned by its Shard's map from schedule() until the task is
// dropped. It is either armed in the shard's timing wheel (Where::Timer) or
// handed to its type's ready queue (Where::Queued). A Queued record is
// either still in the ready list (inReadyList) or taken by a worker that is
// running it: "Queued and not in the list" is what Running means here.
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
