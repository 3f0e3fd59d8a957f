// bench/peers/condvar_timers.h: the textbook timer set, as a peer for
// TimeoutAddCancel.
//
// A std::set ordered by deadline under one mutex, and one timer thread that
// sleeps on a condition variable until the earliest deadline. A re-arm is
// erase + insert, O(log n): the plain alternative to Classic's heap.
//
// Thread safety: rearm() from any thread (one caller per index at a time).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "executor/targets.h"

namespace kvexec::bench {

class CondvarTimers final : public TimeoutTarget {
  public:
    CondvarTimers(std::size_t count, const DelayTable& delays);
    ~CondvarTimers() override;

    void rearm(std::size_t index, Delay d) override;

  private:
    using TimePoint = std::chrono::steady_clock::time_point;
    using Entry = std::pair<TimePoint, std::size_t>;
    static constexpr TimePoint kUnarmed = TimePoint::max();

    void arm(std::size_t index, TimePoint when);  // requires mutex_
    void run();

    std::mutex mutex_;
    std::condition_variable cv_;
    std::set<Entry> queue_;            // guarded by mutex_
    std::vector<TimePoint> deadline_;  // guarded by mutex_; kUnarmed when fired
    bool stopping_ = false;            // guarded by mutex_
    std::thread thread_;
};

}  // namespace kvexec::bench
