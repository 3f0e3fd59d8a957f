// bench/peers/condvar_pool.h: the textbook thread pool, as a peer.
//
// CondvarPool: N threads, one std::deque of std::function under one
// std::mutex, one std::condition_variable. What anyone would write in an
// afternoon; kvexec must beat it to justify itself.
//
// Thread safety: post() from any thread. The destructor runs what is
// queued, then joins; it must not race with post().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "executor/targets.h"

namespace kvexec::bench {

class CondvarPool {
  public:
    explicit CondvarPool(std::size_t threads);
    ~CondvarPool();
    CondvarPool(const CondvarPool&) = delete;
    CondvarPool& operator=(const CondvarPool&) = delete;

    void post(std::function<void()> job);

  private:
    void work();

    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;  // guarded by mutex_
    bool stopping_ = false;                   // guarded by mutex_
    std::vector<std::thread> threads_;
};

// condvarPeer: the "Peer<Condvar>" implementation: CondvarPool for OneShot
// and LongLived, CondvarTimers (condvar_timers.h) for TimeoutAddCancel.
Implementation condvarPeer();

}  // namespace kvexec::bench
