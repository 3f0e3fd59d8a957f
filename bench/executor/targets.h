// bench/executor/targets.h: what an executor must offer to be benchmarked.
//
// The seeds' three scenarios are written once (scenarios.h) against these
// small interfaces; every kvexec backend and every peer (Asio, oneTBB,
// libevent, the condvar pool) implements the ones it can. A virtual call
// costs about a nanosecond, far below the cheapest operation measured here.
//
// Lifetime: a target is built by the benchmark's thread 0 before timing and
// destroyed by it after timing; its destructor must wait until no job of it
// runs or is queued anywhere, so that Signals it posts may be freed next.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "executor/delays.h"
#include "executor/signal.h"

namespace kvexec::bench {

// OneShotTarget: a pool of N workers that runs a new job per call.
class OneShotTarget {
  public:
    virtual ~OneShotTarget() = default;
    // runOnce: starts a new one-shot job that bumps runs() and posts done.
    virtual void runOnce(Signal& done) = 0;
    std::uint64_t runs() const noexcept { return runs_.load(std::memory_order_relaxed); }

  protected:
    std::atomic<std::uint64_t> runs_{0};
};

// LongLivedTarget: a pool of N workers holding tasks snoozed forever.
class LongLivedTarget {
  public:
    virtual ~LongLivedTarget() = default;
    // add: creates a task, snoozed forever, that on each run bumps runs(),
    // snoozes itself forever again and posts done. Returns its handle.
    virtual std::size_t add(Signal& done) = 0;
    // wake: makes task `handle` run once more, asynchronously.
    virtual void wake(std::size_t handle) = 0;
    std::uint64_t runs() const noexcept { return runs_.load(std::memory_order_relaxed); }

  protected:
    std::atomic<std::uint64_t> runs_{0};
};

// TimeoutTarget: `count` timeouts, each armed 10-30 s ahead at build time.
class TimeoutTarget {
  public:
    virtual ~TimeoutTarget() = default;
    // rearm: moves timeout `index` to now + d, asynchronously. Two threads
    // never re-arm the same index at once.
    virtual void rearm(std::size_t index, Delay d) = 0;
};

using OneShotFactory = std::function<std::unique_ptr<OneShotTarget>(std::size_t threads)>;
using LongLivedFactory = std::function<std::unique_ptr<LongLivedTarget>(std::size_t threads)>;
// The factory arms timeout i at now + delays.at(i).
using TimeoutFactory =
    std::function<std::unique_ptr<TimeoutTarget>(std::size_t count, const DelayTable& delays)>;

// Implementation: one executor under test and the scenarios it supports.
// `family` and `label` make the names: "ExecutorPoolFixture<Classic>" and
// "Classic", or "Peer<Asio>" and "Asio".
struct Implementation {
    std::string family;
    std::string label;
    OneShotFactory oneShot;      // empty: scenario not supported
    LongLivedFactory longLived;  // empty: scenario not supported
    TimeoutFactory timeouts;     // empty: scenario not supported
};

}  // namespace kvexec::bench
