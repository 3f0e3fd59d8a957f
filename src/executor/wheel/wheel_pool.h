// wheel_pool.h: the Wheel backend: sharded timing wheels, per-type ready
// queues split into lanes, and workers that park when idle (after a short
// spin while spinning pays, at most half the cores spinning at once on
// more than a few cores: parker.h).
//
// How a wake() reaches a worker (read top to bottom in wheel_pool.cc):
//   caller -> shard of the id (lock) -> record leaves the wheel (O(1)
//   unlink) -> the ready lane of the caller's core (lock; one lane per
//   type on up to 4 cores) -> an idle worker of that type is taken off the
//   idle set (lock-free: one that spins, else the last to go to sleep if
//   still idle, else the sleeper with the lowest index) -> locks released
//   -> unpark (a store, plus a futex wake only if it sleeps).
// The caller never waits for another thread. Snoozed tasks sit in their
// shard's wheel; a timer thread sleeps until the earliest deadline of all
// shards (no tick), moves expired records to their ready queues, and is
// woken early only when a task is armed before the time it sleeps until.
//
// Owners (register, unregister, the stats hold), worker threads and the
// decision after a run are the rules every backend shares (common/).
//
// Locking (the ground rules):
// - owners_.mutex guards the owners; schedule() does not take it: it
//   admits and counts a task through its core's admission stripe
//   (owner_registry.h), inserts under the shard lock alone, and looks
//   there again whether the owner began unregistering or the pool stopping
//   (both set their flag, then walk the shards): unregisterTaskable()
//   cannot miss a task being scheduled.
// - Shard::mutex guards a shard's map, wheel and the records' states.
// - ReadyLane::mutex guards one lane of a type's ready records
//   (ready_queue.h); the idle set and which lanes hold records are atomic.
// - Order: a shard, then a ready lane; never two shards or two lanes at
//   once. owners_.mutex is taken alone (it takes each admission stripe's
//   lock in turn); schedule() takes its admission stripe's lock alone.
//   ReadyQueue::control (worker counts) and timerMutex_ are taken alone.
// - User code (run(), description(), hooks, task destructors) runs with no
//   lock held. unpark() and timer notification happen after unlocking
//   (Deferred, finish()). unpark() never blocks (a store, and a futex wake
//   only if that worker sleeps).
// - workers_ serialises setThreadCount() and shutdown.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "executor/common/owner_registry.h"
#include "executor/common/worker_threads.h"
#include "executor/observability/pool_metrics.h"
#include "executor/task_access.h"
#include "executor/thread_annotations.h"
#include "executor/wheel/pending_unparks.h"
#include "executor/wheel/ready_queue.h"
#include "executor/wheel/shard.h"
#include "kvexec/executor_pool.h"

namespace kvexec::wheel {

class WheelPool final : public ExecutorPool, private detail::TaskHost {
  public:
    explicit WheelPool(const PoolConfig& config);
    ~WheelPool() override;

    std::string_view backendName() const override { return "Wheel"; }
    void registerTaskable(Taskable& owner) override;
    void unregisterTaskable(Taskable& owner, bool force) override;
    std::size_t taskableCount() const override;
    TaskId schedule(TaskPtr task) override;
    bool cancel(TaskId id, bool remove) override;
    void wake(TaskId id) override { wakeAndWait(id); }
    bool wakeAndWait(TaskId id) override;
    void snooze(TaskId id, Clock::duration d) override { snoozeAndWait(id, d); }
    bool snoozeAndWait(TaskId id, Clock::duration d) override;
    std::size_t threadCount(TaskType type) const override;
    void setThreadCount(TaskType type, std::size_t n) override;
    PoolStats stats() const override;

  private:
    // The public constructor, with the ready lanes per type (and the
    // owners' admission stripes) worked out once from the config.
    WheelPool(const PoolConfig& config, std::size_t readyLanes);

    // What a locked section leaves to do once its locks are released.
    // If an exception unwinds, `unpark` (declared last, destroyed first)
    // wakes the workers taken before `released` runs task destructors.
    struct Deferred {
        detail::ReleasedTasks released;  // erased: drop, then count out
        bool notifyTimer = false;
        // Several records may become due in this section (the timer's
        // pass, an unregistering): queueLocked() hands none straight to a
        // worker, so that the workers it wakes pick them by priority (rule
        // 8) once the section ends. (A worker on its way to idle may take
        // one as it is queued: an unregistering queues by priority.)
        bool batch = false;
        PendingUnparks unpark;
    };
    // Every call builds one, zeroed: above 80 bytes GCC zeroes it with a
    // `rep stos`, whose start-up cost was 8% of a re-arm (TimeoutAddCancel
    // with 1,000 timeouts, 17.3M -> 15.9M items/s at 120 bytes).
    static_assert(sizeof(Deferred) <= 80, "keep Deferred small: see above");

    // detail::TaskHost
    void onTaskSnoozed(Task& task, detail::SnoozeMade snooze) noexcept override;
    void onTaskCancelled(Task& task) noexcept override;

    Shard& shardOf(TaskId id) { return *shards_[id % kShardCount]; }
    ReadyQueue& readyOf(TaskType type) { return *ready_[static_cast<std::size_t>(type)]; }
    const ReadyQueue& readyOf(TaskType type) const {
        return *ready_[static_cast<std::size_t>(type)];
    }

    // What schedule() found under the shard lock.
    enum class Admission { Inserted, AlreadyHeld, Refused };
    void insert(const TaskPtr& task, detail::OwnerState& owner, Admission& admission,
                Deferred& out);

    // Shard-locked steps (require the record's shard mutex).
    void placeLocked(Record& r, Clock::time_point key, Clock::time_point now, Deferred& out)
        REQUIRES(r.shard.mutex);
    void queueLocked(Record& r, Clock::time_point key, Deferred& out) REQUIRES(r.shard.mutex);
    void armLocked(Record& r, Clock::time_point deadline, Deferred& out) REQUIRES(r.shard.mutex);
    bool isRunningLocked(const Record& r) REQUIRES(r.shard.mutex);
    void cancelLocked(Record& r, Deferred& out) REQUIRES(r.shard.mutex);
    bool wakeLocked(Record& r, Deferred& out) REQUIRES(r.shard.mutex);
    void rekeyToWakeTimeLocked(Record& r, Clock::time_point now, Deferred& out)
        REQUIRES(r.shard.mutex);
    static void snoozedWhileHeldLocked(Record& r) REQUIRES(r.shard.mutex);
    // Frees the record; its task reference goes to `released`, dropped
    // once the locks are released.
    void eraseLocked(Record& r, detail::ReleasedTasks& released) REQUIRES(r.shard.mutex);
    void finish(Deferred& out);
    // Step 2 of unregisterTaskable in one shard.
    void retireOwnedLocked(Shard& shard, detail::OwnerRegistry::Registration registration,
                           bool force, Deferred& out) REQUIRES(shard.mutex);

    bool runRecord(Record& r, detail::WorkerSlot* worker, detail::ReleasedTasks& dropped);
    bool deferSnoozed(Record& r) EXCLUDES(r.shard.mutex);
    void workerLoop(TaskType type, std::size_t index, detail::WorkerSlot* slot);
    // An idle worker's wait: returns when there may be work, or when it
    // may have to exit. `dropped` is released before it sleeps.
    void waitForWork(ReadyQueue& q, std::size_t index, detail::ReleasedTasks& dropped);
    // Throws std::invalid_argument above ReadyQueue::kMaxWorkers (the idle
    // set's bits).
    static void checkThreadCount(std::size_t n);
    void timerLoop();
    void notifyTimer();
    void fireExpired(Clock::time_point now, Deferred& out);
    void shutdown();

    detail::OwnerRegistry owners_;
    // Null when the pool records no metrics; outlives the workers.
    const std::unique_ptr<detail::PoolMetrics> metrics_;

    std::array<std::unique_ptr<Shard>, kShardCount> shards_;
    std::array<std::unique_ptr<ReadyQueue>, kTaskTypeCount> ready_;
    SpinGate spinGate_;  // caps the idle workers spinning at once (parker.h)

    // The timer thread sleeps until timerWakeAt_; arming anything earlier
    // sets timerPending_ and wakes it. time_point::max() while it scans.
    std::atomic<Clock::rep> timerWakeAt_;
    detail::Mutex timerMutex_;
    std::condition_variable timerCv_;
    bool timerPending_ GUARDED_BY(timerMutex_) = false;
    bool timerStop_ GUARDED_BY(timerMutex_) = false;
    std::thread timer_;

    detail::WorkerThreads workers_;
};

}  // namespace kvexec::wheel
