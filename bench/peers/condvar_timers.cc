// bench/peers/condvar_timers.cc: std::set + condition_variable timers.
#include "peers/condvar_timers.h"

namespace kvexec::bench {

CondvarTimers::CondvarTimers(std::size_t count, const DelayTable& delays)
    : deadline_(count, kUnarmed) {
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < count; ++i)
        arm(i, now + delays.at(i));
    thread_ = std::thread([this] { run(); });
}

CondvarTimers::~CondvarTimers() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
}

void CondvarTimers::rearm(std::size_t index, Delay d) {
    const auto when = std::chrono::steady_clock::now() + d;
    bool earliest;
    {
        std::lock_guard lock(mutex_);
        arm(index, when);
        earliest = queue_.begin()->second == index;
    }
    if (earliest)
        cv_.notify_one();
}

void CondvarTimers::arm(std::size_t index, TimePoint when) {
    if (deadline_[index] != kUnarmed)
        queue_.erase({deadline_[index], index});
    deadline_[index] = when;
    queue_.insert({when, index});
}

// run: fires (disarms) due timeouts; sleeps until the earliest deadline.
void CondvarTimers::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        const auto now = std::chrono::steady_clock::now();
        while (!queue_.empty() && queue_.begin()->first <= now) {
            deadline_[queue_.begin()->second] = kUnarmed;
            queue_.erase(queue_.begin());
        }
        if (queue_.empty()) {
            cv_.wait(lock);
        } else {
            cv_.wait_until(lock, queue_.begin()->first);
        }
    }
}

}  // namespace kvexec::bench
