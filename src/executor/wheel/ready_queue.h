// ready_queue.h: the due tasks of one TaskType, and its workers' idle set.
//
// The due records are split into lanes (ready_lane.h), as many as the pool
// asks (PoolConfig::wheelReadyLanes, up to kMaxLanes): a producer pushes
// into the lane of the core it runs on (modulo the lane count), and a
// worker pops from the lane whose head comes first (priority, then wake
// time), found through a bit set of the lanes that hold records. So
// producers and workers on different cores mostly lock different lanes,
// and an idle pool's workers are found through IdleWorkers without a lock.
// (One mutex per type for every hand-off, idle enlisting and pop, with the
// idle stacks under it, fell from 794k to 261k hand-offs/s going from 2 to
// 16 threads on a 16-core machine; oneTBB, whose enqueue goes to one of
// several lanes too, rose to 1.7M at 8.)
//
// Rule 8 (priority, then wake time) holds between lanes too: a worker
// compares the lanes' published heads before it takes one. Records that
// become due at the same moment on two cores are concurrent, and either
// order is right.
//
// Thread safety: push/pop/unlink lock the lane they touch (pushLocked and
// unlinkLocked also require the record's shard lock: Lock order is shard,
// then lane; never two lanes at once). The idle set and the lane bit set
// are atomic. `control` guards the worker count's changes and parker
// creation; targetThreads() and stopping() may be read without it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "executor/thread_annotations.h"
#include "executor/wheel/idle_workers.h"
#include "executor/wheel/parker.h"
#include "executor/wheel/ready_lane.h"
#include "executor/wheel/record.h"

namespace kvexec::wheel {

class ReadyQueue {
  public:
    static constexpr std::size_t kMaxLanes = 64;  // one bit each in laneBits()
    static constexpr std::size_t kMaxWorkers = IdleWorkers::kMaxWorkers;

    // `lanes`: how many, clamped to 1..kMaxLanes (the pool refuses more
    // before it gets here).
    explicit ReadyQueue(std::size_t lanes);

    // Queues a record in the lane of the calling thread's core (state ->
    // Ready). Requires the record's shard lock.
    void push(Record& r) { pushTo(r, laneForThisThread()); }
    // Starts fetching this thread's lane (for writing) and the lane bits
    // (for reading): what a hand-off or a push touches first. For callers
    // with other work to overlap the misses with.
    void prefetchForPush() const noexcept;
    // The same into lane `lane` (< laneCount()): for tests.
    void pushTo(Record& r, std::size_t lane);
    std::size_t laneCount() const noexcept { return laneCount_; }
    // Takes the first record (priority, then key) of every lane's heads
    // (Ready -> Running), or null if none is queued. `more`: some lane
    // still holds records (the caller may wake a worker to share them).
    Record* pop(bool& more);
    // A Ready record's lane; requires the record's shard lock (only a
    // shard-locked push sets it).
    ReadyLane& laneOf(const Record& r) { return *lanes_[r.lane]; }
    // Takes a Ready record out of its lane (state -> Timer); the caller
    // holds the shard's and the lane's locks and arms or frees it next.
    void unlinkLocked(Record& r) REQUIRES(laneOf(r).mutex);
    bool anyQueued() const noexcept { return laneBits().load(std::memory_order_seq_cst) != 0; }
    std::size_t size() const;  // locks every lane: for stats()
    void clear();              // shutdown: forgets every record

    // An idle worker's parker, taken off the idle set (the caller unparks
    // it after releasing its locks), or null. Call after the push it is
    // for: it orders that push before its look at the idle set.
    Parker* takeIdle() noexcept;
    // An idle worker taken off the idle set to be handed a record directly
    // (Parker::handOff), or null: while any lane holds records (they come
    // first, rule 8), or if no worker is idle (then push() and takeIdle()).
    // A record that skips the lanes skips their lock, the lane bits' two
    // writes and the worker's look at them: on 16 cores those were where
    // every hand-off of a type met. `sleepersToo`: a sleeping worker may be
    // handed one, else only a spinning one (see WheelPool::queueLocked).
    Parker* takeIdleForHandOff(bool sleepersToo) noexcept;
    // Takes and unparks every idle worker (setThreadCount, shutdown).
    void wakeAllIdle();
    IdleWorkers& idle() noexcept { return idle_; }
    std::size_t idleCount() const noexcept { return idle_.count(); }

    // Worker `index`'s parker; made (under `control`) before the worker
    // starts, and lives as long as this.
    Parker& parker(std::size_t index) { return *parkers_[index]; }
    void makeParkersLocked(std::size_t count) REQUIRES(control);
    // Runs of this type's tasks so far: every worker's count, in its parker.
    std::uint64_t runs() const;

    std::size_t targetThreads() const noexcept { return target_.load(std::memory_order_seq_cst); }
    bool stopping() const noexcept { return stopping_.load(std::memory_order_seq_cst); }
    // Both are read by workers after enlisting as idle (seq_cst both ways):
    // a worker either sees the change or is in the idle set the caller
    // then wakes.
    void setTargetLocked(std::size_t n) REQUIRES(control) { target_.store(n); }
    void stopLocked() REQUIRES(control) { stopping_.store(true); }

    mutable detail::Mutex control;

  private:
    std::size_t laneForThisThread() const noexcept;
    std::size_t bestLane(std::uint64_t bits) const noexcept;
    void markLane(std::size_t lane, bool nonEmpty) noexcept;

    const std::size_t laneCount_;
    std::unique_ptr<std::unique_ptr<ReadyLane>[]> lanes_;
    // Bit i: lane i holds records. Written under lane i's lock when it
    // turns empty or non-empty; read by workers without a lock, and by
    // every producer before it hands a record over (takeIdleForHandOff).
    // On a line of its own: with records handed straight to idle workers
    // the lanes stay empty and the bits unwritten, so those reads hit a
    // line every core holds. (It shared the spinning workers' line while
    // every hand-off wrote both; on 16 cores that line was then read and
    // written five times per hand-off.)
    std::atomic<std::uint64_t>& laneBits() noexcept { return laneBits_; }
    const std::atomic<std::uint64_t>& laneBits() const noexcept { return laneBits_; }
    alignas(64) std::atomic<std::uint64_t> laneBits_{0};
    IdleWorkers idle_;
    std::unique_ptr<std::unique_ptr<Parker>[]> parkers_;
    std::size_t parkerCount_ GUARDED_BY(control) = 0;
    alignas(64) std::atomic<std::size_t> target_{0};  // workers with index >= this exit
    std::atomic<bool> stopping_{false};
};

}  // namespace kvexec::wheel
