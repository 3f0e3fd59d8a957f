// parker.h: how an idle Wheel worker waits for work.
//
// An idle worker first spins, then parks in a futex (C++20 atomic wait).
// Spinning is what makes a hand-off cheap: a wake() that finds a spinning
// worker costs one store, with no system call on either side. The spin is
// bounded (kSpinFor, about 50 us: a pause loop, then yields so that on an
// oversubscribed machine the thread that will produce work can run); after
// that the worker parks and costs no CPU until unparked.
//
// Protocol: the worker calls prepare() and enlists itself as idle under its
// ready queue's mutex, unlocks, then park(). A producer takes an idle
// parker under the same mutex and calls unpark() after unlocking. Parkers
// live as long as their pool, so a late unpark() never touches freed memory.
//
// Thread safety: prepare()/park() only by the owning worker; unpark() by
// any thread, once per prepare().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace kvexec::wheel {

class Parker {
  public:
    static constexpr std::chrono::microseconds kSpinFor{50};
    static constexpr int kPauseSpins = 256;  // before the first yield

    void prepare() noexcept { signal_.store(0, std::memory_order_relaxed); }

    void unpark() noexcept {
        signal_.store(1, std::memory_order_release);
        signal_.notify_one();
    }

    void park() noexcept {
        for (int i = 0; i < kPauseSpins; ++i) {
            if (signalled()) {
                return;
            }
            cpuRelax();
        }
        const auto until = std::chrono::steady_clock::now() + kSpinFor;
        while (std::chrono::steady_clock::now() < until) {
            if (signalled()) {
                return;
            }
            std::this_thread::yield();
        }
        while (!signalled()) {
            signal_.wait(0, std::memory_order_acquire);
        }
    }

  private:
    bool signalled() const noexcept { return signal_.load(std::memory_order_acquire) != 0; }

    static void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    std::atomic<std::uint32_t> signal_{0};
};

}  // namespace kvexec::wheel
