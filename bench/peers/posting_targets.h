// bench/peers/posting_targets.h: OneShot and LongLived for any thread pool
// that can only "post a closure".
//
// Asio's thread_pool, oneTBB's task_arena and the condvar pool have no notion
// of a task that sleeps and is woken by id. The peers model one the cheapest
// honest way: a long-lived task is a slot with a "queued" flag; wake(id)
// posts a closure unless one is already queued (a second wake before the
// run coalesces, as in kvexec); the run clears the flag ("snoozes forever").
//
// A Poster provides `template <class F> void post(F&&)` and a destructor that
// returns only when every posted closure has finished.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <utility>

#include "executor/targets.h"

namespace kvexec::bench {

template <class Poster>
class PostingOneShot final : public OneShotTarget {
  public:
    template <class... Args>
    explicit PostingOneShot(Args&&... args) : poster_(std::forward<Args>(args)...) {}

    void runOnce(Signal& done) override {
        poster_.post([this, &done] {
            runs_.fetch_add(1, std::memory_order_relaxed);
            done.post();
        });
    }

  private:
    Poster poster_;
};

template <class Poster>
class PostingLongLived final : public LongLivedTarget {
  public:
    template <class... Args>
    explicit PostingLongLived(Args&&... args) : poster_(std::forward<Args>(args)...) {}

    std::size_t add(Signal& done) override {
        slots_.emplace_back(done);
        return slots_.size() - 1;
    }

    void wake(std::size_t handle) override {
        Slot& slot = slots_[handle];
        if (slot.queued.exchange(true, std::memory_order_acq_rel))
            return;
        poster_.post([this, &slot] { run(slot); });
    }

  private:
    struct Slot {
        explicit Slot(Signal& d) : done(d) {}
        Signal& done;
        std::atomic<bool> queued{false};
    };

    void run(Slot& slot) {
        slot.queued.store(false, std::memory_order_release);  // "snooze forever"
        runs_.fetch_add(1, std::memory_order_relaxed);
        slot.done.post();
    }

    std::deque<Slot> slots_;  // stable addresses; filled before timing
    Poster poster_;           // declared last: destroyed (drained) first
};

}  // namespace kvexec::bench
