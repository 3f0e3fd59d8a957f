// wheel_owners_stats.cc: the Wheel backend's construction and shutdown,
// its owners (register, unregister) and stats().
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "executor/pool_config.h"
#include "executor/task_info.h"
#include "executor/wheel/wheel_pool.h"

namespace kvexec::wheel {

using detail::TaskAccess;

namespace {

// PoolConfig::wheelReadyLanes, or the default for `cores`. Throws
// std::invalid_argument above ReadyQueue::kMaxLanes (the lane bits).
std::size_t readyLanesFor(const PoolConfig& config, unsigned cores) {
    if (config.wheelReadyLanes > ReadyQueue::kMaxLanes) {
        throw std::invalid_argument("kvexec: wheelReadyLanes is " +
                                    std::to_string(config.wheelReadyLanes) + "; at most " +
                                    std::to_string(ReadyQueue::kMaxLanes));
    }
    if (config.wheelReadyLanes != 0) {
        return config.wheelReadyLanes;
    }
    return cores > SpinGate::kFewCores ? std::min<std::size_t>(cores, ReadyQueue::kMaxLanes) : 1;
}

}  // namespace

// The owners' admission stripes follow the ready lanes: one per core on a
// machine with many (schedule() calls on different cores then admit their
// tasks without meeting on one lock), one on a few.
WheelPool::WheelPool(const PoolConfig& config)
    : WheelPool(config, readyLanesFor(config, SpinGate::machineCores())) {}

WheelPool::WheelPool(const PoolConfig& config, std::size_t readyLanes)
    : owners_(readyLanes),
      metrics_(config.recordMetrics ? std::make_unique<detail::PoolMetrics>() : nullptr),
      timerWakeAt_(Clock::time_point::max().time_since_epoch().count()),
      workers_(metrics_.get()) {
    for (auto& shard : shards_) {
        shard = std::make_unique<Shard>();
    }
    for (auto& q : ready_) {
        q = std::make_unique<ReadyQueue>(readyLanes);
    }
    // Checked before any thread starts: a throw after that would destroy
    // joinable threads.
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        checkThreadCount(detail::threadsFor(config, static_cast<TaskType>(i)));
    }
    timer_ = std::thread([this] { timerLoop(); });
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        const auto type = static_cast<TaskType>(i);
        setThreadCount(type, detail::threadsFor(config, type));
    }
}

WheelPool::~WheelPool() {
    shutdown();
}

// Shutdown, in order:
// 1. Refuse new tasks and mark every held task Dead, so nothing starts.
// 2. Stop the timer thread and the workers, and join them; a run in
//    progress finishes first (its worker then drops the task).
// 3. Take every record out of the wheels and ready lists and drop the
//    references once no lock is held.
void WheelPool::shutdown() {
    {
        detail::MutexLock lock(owners_.mutex);
        owners_.stopLocked();
    }
    for (auto& shard : shards_) {
        detail::MutexLock lock(shard->mutex);
        shard->forEachLocked([](Record& r) { TaskAccess::setState(*r.task, TaskState::Dead); });
    }
    {
        detail::MutexLock lock(timerMutex_);
        timerStop_ = true;
        timerCv_.notify_all();
    }
    if (timer_.joinable()) {
        timer_.join();
    }
    workers_.stopAll([this] {
        for (auto& q : ready_) {
            {
                detail::MutexLock lock(q->control);
                q->stopLocked();
            }
            q->wakeAllIdle();
        }
    });
    detail::ReleasedTasks dropped;
    for (auto& q : ready_) {
        q->clear();
    }
    for (auto& shard : shards_) {
        detail::MutexLock lock(shard->mutex);
        for (Record* r : shard->takeAllLocked()) {
            if (r->armed()) {
                shard->wheel.cancel(*r);
            }
            TaskAccess::setHost(*r->task, nullptr);
            dropped.add(std::move(r->task), r->owner);
            shard->freeLocked(r);
        }
    }
    owners_.release(dropped);
}

void WheelPool::registerTaskable(Taskable& owner) {
    owners_.registerOwner(owner);
}

std::size_t WheelPool::taskableCount() const {
    return owners_.count();
}

// Unregistration (the steps of OwnerRegistry), in order:
// 1. Refuse: from now on schedule() for this owner throws. A schedule()
//    admitted earlier either is in its shard before step 2 looks there, or
//    sees the refusal under that shard's lock (WheelPool::insert).
// 2. In each shard, drop the owner's queued and snoozed tasks directly
//    (blockShutdown ones are woken instead, unless force); running ones are
//    dropped by their worker when the run ends.
// 3. Wait until the pool holds none of them, then forget the owner.
void WheelPool::unregisterTaskable(Taskable& owner, bool force) {
    detail::OwnerRegistry::checkNotOwnTask(owner);
    std::optional<detail::OwnerRegistry::Registration> registration;
    {
        detail::MutexLock lock(owners_.mutex);
        registration = owners_.beginUnregisterLocked(owner);
    }
    if (!registration) {
        return;
    }
    // Shard by shard, each in one section: the blockShutdown tasks it wakes
    // in a shard are all queued, highest priority first, before a worker
    // is unparked for them (rule 8 within the shard). Across shards the
    // sections stay apart: the tasks dropped in one are released
    // (destructors run) before the next shard is visited, and a task woken
    // in an earlier shard may start before a higher-priority one in a
    // later shard is queued.
    for (auto& shard : shards_) {
        Deferred out;
        out.batch = true;
        {
            detail::MutexLock lock(shard->mutex);
            retireOwnedLocked(*shard, *registration, force, out);
        }
        finish(out);
    }
    detail::UniqueLock lock(owners_.mutex);
    owners_.awaitDrainedLocked(owner, *registration, lock);
}

// Cancels the registration's tasks in `shard`, and wakes its blockShutdown
// ones (unless `force`) by priority: a worker on its way to idle (in no
// idle set) looks at the lanes once more before it parks, and may take the
// first record queued here before the next one is queued.
void WheelPool::retireOwnedLocked(Shard& shard, detail::OwnerRegistry::Registration registration,
                                  bool force, Deferred& out) {
    // By registration, not by owner: if another unregistering of the owner
    // has finished meanwhile and the owner has been registered again, the
    // new registration's tasks are not ours.
    std::vector<Record*> owned;
    shard.forEachLocked([&](Record& r) {
        if (r.owner.registration == registration) {
            owned.push_back(&r);
        }
    });
    std::vector<Record*> toWake;
    for (Record* r : owned) {
        heldFor(shard, *r);
        if (force || !r->task->blocksShutdown()) {
            cancelLocked(*r, out);
        } else {
            toWake.push_back(r);
        }
    }
    std::stable_sort(toWake.begin(), toWake.end(), [](const Record* a, const Record* b) {
        return a->task->priority() < b->task->priority();
    });
    for (Record* r : toWake) {
        heldFor(shard, *r);
        wakeLocked(*r, out);  // let it finish its work now
    }
}

PoolStats WheelPool::stats() const {
    PoolStats stats{};
    for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
        const ReadyQueue& q = *ready_[i];
        stats.byType[i].threads = q.targetThreads();
        stats.byType[i].sleeping = q.idleCount();
        stats.byType[i].ready = q.size();
        stats.byType[i].executed = q.runs();
    }
    detail::StatsHold held(owners_);
    for (const auto& shard : shards_) {
        detail::MutexLock lock(shard->mutex);
        shard->forEachLocked([&](const Record& r) {
            if (r.loadState() == Record::State::Timer) {
                ++stats.byType[static_cast<std::size_t>(r.task->type())].future;
            }
            held.tasks.push_back(r.task);
        });
    }
    stats.tasks = detail::describeTasks(held.tasks);  // user code: no lock held
    if (metrics_) {
        metrics_->fill(stats);
    }
    return stats;
}

}  // namespace kvexec::wheel
