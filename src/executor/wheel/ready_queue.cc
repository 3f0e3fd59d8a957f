// ready_queue.cc: a type's ready lanes, the bit set of the non-empty ones,
// and the choice of the lane a worker pops from.
#include "executor/wheel/ready_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "executor/this_core.h"

namespace kvexec::wheel {

ReadyQueue::ReadyQueue(std::size_t lanes)
    : laneCount_(std::clamp<std::size_t>(lanes, 1, kMaxLanes)),
      lanes_(std::make_unique<std::unique_ptr<ReadyLane>[]>(laneCount_)),
      parkers_(std::make_unique<std::unique_ptr<Parker>[]>(kMaxWorkers)) {
    for (std::size_t i = 0; i < laneCount_; ++i) {
        lanes_[i] = std::make_unique<ReadyLane>();
    }
}

// The lane of the core the thread runs on: threads on one core rarely meet
// on its lane.
std::size_t ReadyQueue::laneForThisThread() const noexcept {
    return laneCount_ == 1 ? 0 : detail::thisCore() % laneCount_;
}

void ReadyQueue::prefetchForPush() const noexcept {
    __builtin_prefetch(lanes_[laneForThisThread()].get(), 1);
    __builtin_prefetch(&laneBits(), 0);  // read: mostly unwritten (ready_queue.h)
}

// Under the lane's lock, when the lane turns empty or non-empty: bit and
// lane agree whenever the lock is free.
void ReadyQueue::markLane(std::size_t lane, bool nonEmpty) noexcept {
    const std::uint64_t bit = std::uint64_t{1} << lane;
    if (nonEmpty) {
        laneBits().fetch_or(bit, std::memory_order_seq_cst);
    } else {
        laneBits().fetch_and(~bit, std::memory_order_seq_cst);
    }
}

void ReadyQueue::pushTo(Record& r, std::size_t lane) {
    assert(lane < laneCount_);
    ReadyLane& l = *lanes_[lane];
    detail::MutexLock lock(l.mutex);
    r.lane = static_cast<std::uint8_t>(lane);
    l.pushLocked(r);
    if (l.sizeLocked() == 1) {
        markLane(lane, true);
    }
}

void ReadyQueue::unlinkLocked(Record& r) {
    ReadyLane& l = laneOf(r);
    l.mutex.assertHeld();  // the same lane as REQUIRES names (not provable to the analysis)
    l.unlinkLocked(r);
    if (l.sizeLocked() == 0) {
        markLane(r.lane, false);
    }
}

// The lane whose published head comes first, of those in `bits`. With one
// lane in `bits` (one lane per type on a few cores, and nearly always on
// many) no head is read: that read would be a miss on the line the
// producer just wrote, taken before the lane's lock, which takes it anyway.
std::size_t ReadyQueue::bestLane(std::uint64_t bits) const noexcept {
    auto best = static_cast<std::size_t>(std::countr_zero(bits));
    if ((bits & (bits - 1)) == 0) {
        return best;
    }
    ReadyLane::Head bestHead = lanes_[best]->head();
    for (bits &= bits - 1; bits != 0; bits &= bits - 1) {
        const auto lane = static_cast<std::size_t>(std::countr_zero(bits));
        const ReadyLane::Head head = lanes_[lane]->head();
        if (head.before(bestHead)) {
            best = lane;
            bestHead = head;
        }
    }
    return best;
}

// Nearly always a single lane holds records, and then no other lane is
// read. The choice is made from unlocked heads, so it is checked again
// under the lane's lock (rule 8): if another lane's head now comes first
// (a worker took this lane's best meanwhile, or it was cancelled), look
// again, a few times at most; past that, records that keep changing are
// concurrent with this pop and either order is right.
Record* ReadyQueue::pop(bool& more) {
    constexpr int kRechecks = 4;
    for (int attempt = 0;; ++attempt) {
        const std::uint64_t bits = laneBits().load(std::memory_order_acquire);
        if (bits == 0) {
            return nullptr;
        }
        const std::size_t lane = bestLane(bits);
        ReadyLane& l = *lanes_[lane];
        detail::MutexLock lock(l.mutex);
        if (l.sizeLocked() == 0) {
            continue;  // emptied by another worker since the bits were read
        }
        const std::uint64_t others =
            laneBits().load(std::memory_order_acquire) & ~(std::uint64_t{1} << lane);
        if (attempt < kRechecks && others != 0 &&
            lanes_[bestLane(others)]->head().before(l.head())) {
            continue;
        }
        Record* r = l.popLocked();
        if (l.sizeLocked() == 0) {
            markLane(lane, false);
        }
        // Work left in any lane: the caller wakes a worker to share it.
        more = laneBits().load(std::memory_order_relaxed) != 0;
        return r;
    }
}

std::size_t ReadyQueue::size() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < laneCount_; ++i) {
        detail::MutexLock lock(lanes_[i]->mutex);
        n += lanes_[i]->sizeLocked();
    }
    return n;
}

void ReadyQueue::clear() {
    for (std::size_t i = 0; i < laneCount_; ++i) {
        detail::MutexLock lock(lanes_[i]->mutex);
        lanes_[i]->clearLocked();
        markLane(i, false);
    }
}

// The fence pairs with the worker's enlist-then-look (idle_workers.h): a
// producer that finds no idle worker here has its record seen by the
// worker's look, when the lane was already non-empty and push() wrote no
// lane bit. ThreadSanitizer does not model fences (GCC warns, and CI turns
// warnings into errors), so its builds order the two with a seq_cst
// read-modify-write of the lane bits instead: with take()'s loads seq_cst
// too, the same pairing in the C++ model, at the cost of a write to the
// lane bits' line (in those builds only).
Parker* ReadyQueue::takeIdle() noexcept {
#if defined(__SANITIZE_THREAD__)
    laneBits().fetch_or(0, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    const auto index = idle_.take();
    return index ? parkers_[*index].get() : nullptr;
}

// No fence is needed here: nothing was published that a worker must see.
// If no worker is idle, the caller pushes and takes the usual path, whose
// fence pairs with the workers' enlisting.
Parker* ReadyQueue::takeIdleForHandOff(bool sleepersToo) noexcept {
    if (laneBits().load(std::memory_order_relaxed) != 0) {
        return nullptr;
    }
    const auto index = sleepersToo ? idle_.take() : idle_.takeSpinner();
    return index ? parkers_[*index].get() : nullptr;
}

void ReadyQueue::wakeAllIdle() {
    idle_.takeAll([this](std::size_t index) { parkers_[index]->unpark(); });
}

void ReadyQueue::makeParkersLocked(std::size_t count) {
    assert(count <= kMaxWorkers);
    for (; parkerCount_ < count; ++parkerCount_) {
        parkers_[parkerCount_] = std::make_unique<Parker>();
    }
}

std::uint64_t ReadyQueue::runs() const {
    detail::MutexLock lock(control);
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < parkerCount_; ++i) {
        n += parkers_[i]->runs();
    }
    return n;
}

}  // namespace kvexec::wheel
