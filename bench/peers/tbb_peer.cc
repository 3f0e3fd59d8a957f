// bench/peers/tbb_peer.cc: oneTBB task_arena::enqueue peer.
#include "peers/tbb_peer.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <thread>
#include <utility>

#include "peers/posting_targets.h"

namespace kvexec::bench {
namespace {

class TbbPoster {
  public:
    explicit TbbPoster(std::size_t threads)
        : workers_(tbb::global_control::max_allowed_parallelism, threads + 1),
          arena_(static_cast<int>(threads), /*reserved_for_masters=*/0) {}

    // enqueue() has no "wait for what I enqueued": count closures in flight
    // and wait for the count to drop. The decrement is a closure's last
    // touch of our memory.
    ~TbbPoster() {
        while (inFlight_.load(std::memory_order_acquire) != 0)
            std::this_thread::yield();
    }

    template <class F>
    void post(F&& f) {
        inFlight_.fetch_add(1, std::memory_order_relaxed);
        arena_.enqueue([this, f = std::forward<F>(f)] {
            f();
            inFlight_.fetch_sub(1, std::memory_order_release);
        });
    }

  private:
    tbb::global_control workers_;
    tbb::task_arena arena_;
    std::atomic<std::size_t> inFlight_{0};
};

}  // namespace

Implementation tbbPeer() {
    return {"Peer<TBB>",
            "TBB",
            [](std::size_t n) { return std::make_unique<PostingOneShot<TbbPoster>>(n); },
            [](std::size_t n) { return std::make_unique<PostingLongLived<TbbPoster>>(n); },
            {}};
}

}  // namespace kvexec::bench
