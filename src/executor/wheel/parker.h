// parker.h: how an idle Wheel worker waits for work.
//
// An idle worker spins briefly, then parks in a futex (C++20 atomic wait).
// A hand-off to a worker that is still spinning costs one store and no
// system call. But a spinning worker holds its core, and on a machine with
// few cores that is the core the thread it just woke (to report a result)
// needs: measured on 2 cores, any spin, even 64 pause instructions (~4 us),
// made OneShot and LongLived hand-offs slower than parking at once, and a
// 50 us spin made them 10x slower. So the spin is bounded by kSpinPauses
// pause instructions and used only with more than 2 hardware threads
// (spinPauses()); that setting could not be measured on the 2-core
// development machines.
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
#include <cstdint>
#include <thread>

namespace kvexec::wheel {

class Parker {
  public:
    static constexpr int kSpinPauses = 200;

    // How many pauses an idle worker spins before parking on this machine.
    static int spinPauses() noexcept {
        static const int pauses = std::thread::hardware_concurrency() > 2 ? kSpinPauses : 0;
        return pauses;
    }

    void prepare() noexcept { signal_.store(0, std::memory_order_relaxed); }

    void unpark() noexcept {
        signal_.store(1, std::memory_order_release);
        signal_.notify_one();
    }

    void park() noexcept {
        for (int i = spinPauses(); i > 0; --i) {
            if (signalled()) {
                return;
            }
            cpuRelax();
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
