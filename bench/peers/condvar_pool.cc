// bench/peers/condvar_pool.cc: the textbook mutex + condvar thread pool.
#include "peers/condvar_pool.h"

#include <utility>

#include "peers/condvar_timers.h"
#include "peers/posting_targets.h"

namespace kvexec::bench {

CondvarPool::CondvarPool(std::size_t threads) {
    threads_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i)
        threads_.emplace_back([this] { work(); });
}

CondvarPool::~CondvarPool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
        t.join();
}

void CondvarPool::post(std::function<void()> job) {
    {
        std::lock_guard lock(mutex_);
        jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
}

// work: takes jobs until stopping and nothing is left.
void CondvarPool::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty())
            return;
        auto job = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        job();
        lock.lock();
    }
}

Implementation condvarPeer() {
    return {"Peer<Condvar>", "Condvar",
            [](std::size_t n) { return std::make_unique<PostingOneShot<CondvarPool>>(n); },
            [](std::size_t n) { return std::make_unique<PostingLongLived<CondvarPool>>(n); },
            [](std::size_t count, const DelayTable& delays) {
                return std::make_unique<CondvarTimers>(count, delays);
            }};
}

}  // namespace kvexec::bench
