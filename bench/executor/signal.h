// bench/executor/signal.h: the one-shot "done" signal every benchmark uses.
//
// A worker posts, one waiter waits. Built on C++20 atomic wait/notify (a
// futex on Linux) so that every backend and peer pays the same price for the
// signal back, and the PingPong floor measures exactly this mechanism.
//
// Thread safety: post() from any thread; wait() from the one owning thread.
// Memory ordering: post() is seq_cst (see post()), wait() acquires, so what
// the poster wrote before post() is visible after wait() returns.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvexec::bench {

class Signal {
  public:
    // post: marks the signal set and wakes the waiter, if any.
    // The store is seq_cst (an xchg on x86), not just release: notify_one()
    // skips the futex wake when it sees no waiter registered, and a
    // release store may become visible after that check (store-load
    // reordering), which can strand a waiter that registered in between.
    void post() noexcept {
        flag_.store(1, std::memory_order_seq_cst);
        flag_.notify_one();
    }

    // wait: returns once the signal was posted, and consumes it.
    void wait() noexcept {
        while (flag_.exchange(0, std::memory_order_acquire) == 0) {
            flag_.wait(0, std::memory_order_acquire);
        }
    }

  private:
    alignas(64) std::atomic<std::uint32_t> flag_{0};
};

}  // namespace kvexec::bench
