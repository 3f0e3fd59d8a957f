// parker.h: how an idle Wheel worker waits for work.
//
// An idle worker may spin for a short while before it parks in a futex. A
// hand-off to a spinning worker costs one store and no system call; a
// hand-off to a parked one costs a futex wake, and on a VM whose idle vCPU
// halts that is 5-100 us before the worker runs. But a spinning worker
// holds a core that the rest of the process may need, so spinning is
// adaptive and capped (SpinGate):
// - how a worker spins depends on its task type's worker count against the
//   cores (SpinMode, chosen by the pool): with no more workers than cores,
//   it yields the core between rounds of pauses (Yield), so that a producer
//   or a busy worker on the same core still runs, and up to one worker per
//   core may spin; with more workers than cores the busy ones need every
//   core, so at most half the cores' worth spin, with pauses only (Pause);
// - a worker spins at most its mode's window, and only while spinning pays: a
//   spin that ends without work turns spinning off for that worker, and it
//   comes back on when a park turns out short (work arrived within
//   kShortPark), which is when a spin would have caught it.
// So a busy hand-off loop (wake, run, wake ...) is served by a spinning
// worker, and an idle or lightly loaded pool parks at once and burns no CPU.
// (Measured on 2 vCPUs, LongLivedScheduleRun with 2 benchmark threads: Pause
// with one spinner ~300k items/s, the producer preempted by the worker it
// woke and the worker sleeping after every run; Yield with two ~500k/s at
// less CPU per item. With 4 or 16 workers, Yield spinners halve the rate.)
//
// The sleep is a plain private futex. std::atomic::wait() would do: on
// libstdc++ 12 it first spins 16 rounds, the last four sched_yield() system
// calls, and counts waiters in a process-wide table shared by every atomic
// that waits; a worker that already spun (or chose not to) pays for both.
//
// Protocol: the worker calls prepare() and claimSpin(), enlists itself in
// its ready queue's idle set (among the spinning or the sleeping workers,
// by what claimSpin() said), looks for work once more, then park(). A
// producer takes an idle worker off that set and calls unpark() after
// releasing its locks; it makes the futex system call only if the worker
// really sleeps. Before each run the worker calls beforeRun(). Parkers
// live as long as their pool, so a late unpark() never touches freed
// memory.
//
// A producer that takes an idle worker while no record is queued may hand
// it its record directly (handOff() before unpark()): the worker then takes
// it from here, and no ready lane, lane bit or lane lock is touched on the
// way (ReadyQueue::takeIdleForHandOff).
//
// Thread safety: prepare()/claimSpin()/park()/takeHandedOff()/beforeRun()/leaveGate()
// only by the owning worker; handOff() and unpark() by the thread that took
// the worker off its idle set, once per prepare(). SpinGate: any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "executor/cpu_relax.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kvexec::wheel {

struct Record;  // record.h

enum class SpinMode { Pause, Yield };

// How many workers of one pool may spin at the same time. On a cache line
// of its own: idle workers write the count, and the words beside it in the
// pool (its ready queues, the timer's wake time) are read by every
// schedule() and wake().
class alignas(64) SpinGate {
  public:
    static constexpr unsigned kFewCores = 4;

    SpinGate() : cores_(machineCores()) {}

    static unsigned machineCores() noexcept {
        return std::max(1u, std::thread::hardware_concurrency());
    }

    unsigned cores() const noexcept { return cores_; }
    // Yield spinners give their core away between rounds, so on a few
    // cores each may have one; on many, half the cores spinning already
    // catch every hand-off, and more only burn the cores the producers
    // need (tokio lets at most half its workers search, for the same
    // reason).
    unsigned limit(SpinMode mode) const noexcept {
        const unsigned half = std::max(1u, cores_ / 2);
        return mode == SpinMode::Yield && cores_ <= kFewCores ? cores_ : half;
    }

    bool tryEnter(SpinMode mode) noexcept {
        // A look first: on many cores most idle workers find the gate full,
        // and a look leaves the shared line unwritten.
        if (spinning_.load(std::memory_order_relaxed) >= limit(mode)) {
            return false;
        }
        if (spinning_.fetch_add(1, std::memory_order_relaxed) < limit(mode)) {
            return true;
        }
        leave();
        return false;
    }
    void leave() noexcept { spinning_.fetch_sub(1, std::memory_order_relaxed); }

  private:
    const unsigned cores_;
    std::atomic<unsigned> spinning_{0};
};

// One cache line per parker: a waker's store to one worker's parker must
// not disturb another worker spinning on its own. A handed-off record
// travels on that line too.
class alignas(64) Parker {
  public:
    using Clock = std::chrono::steady_clock;
    // Longest spin. Yield: covers a round trip through a caller that was
    // itself woken from a futex on a VM, short against a scheduler time
    // slice. Pause: with more workers than cores a spinner holds a core the
    // producers and the busy workers share, and work that comes at all
    // comes within a few microseconds (LongLivedScheduleRun, 4 threads on
    // 2 vCPUs: 50 us gave ~340k items/s, 5 us ~440k at less CPU per item).
    static constexpr auto kYieldSpinWindow = std::chrono::microseconds(50);
    static constexpr auto kPauseSpinWindow = std::chrono::microseconds(5);
    // A park shorter than this means a spin would have caught the work.
    static constexpr auto kShortPark = std::chrono::microseconds(100);
    // A run this long gives the worker's place in the gate back
    // (beforeRun()): the runs of a hand-off loop that a spin serves are far
    // shorter than a spin window, and against a run of twice the window
    // the gate's two writes cost under 1%.
    static constexpr auto kLongRun = 2 * kYieldSpinWindow;

    void prepare() noexcept { state_.store(kWaiting, std::memory_order_relaxed); }

    // The worker's count of task runs, for stats(). Here because this is
    // the one cache line a worker owns and writes anyway: a count shared
    // by the pool's workers sat beside the pointers every schedule() and
    // wake() reads, and each run took that line from the caller's core.
    // One writer (the owner), so a plain add; any thread may read.
    void countRun() noexcept {
        runs_.store(runs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    std::uint64_t runs() const noexcept { return runs_.load(std::memory_order_relaxed); }

    // seq_cst on both sides (this exchange, the sleeper's compare-exchange
    // and the waiter count that notify_one() reads): a sleeper either sees
    // kSignalled before it waits or is registered before notify_one() looks.
    void unpark() noexcept {
        if (state_.exchange(kSignalled, std::memory_order_seq_cst) == kSleeping) {
            wakeSleeper();
        }
    }

    // Whether this worker will spin when it parks next: decided before it
    // enlists as idle, so that it can enlist where wakers look first.
    // True holds a place in the gate. A spin that catches work keeps it
    // through the runs that follow, so that a busy hand-off loop (spin,
    // run, spin ...) writes the gate's shared line only when a spin ends
    // without work (on 16 cores that line, written twice per hand-off,
    // was among the few every hand-off of the pool passed through). So the
    // gate caps the workers that spin, or run tasks whose last run was
    // short, since their last caught spin; a worker about to run a task
    // whose last run was long gives its place back (beforeRun()).
    bool claimSpin(SpinGate& gate, SpinMode mode) noexcept {
        willSpin_ = spinPays_ && (holdsGate_ || (holdsGate_ = gate.tryEnter(mode)));
        return willSpin_;
    }
    // The worker is about to run a task whose last run took `lastRun`. A
    // long run gives the worker's place in the gate back: while it runs it
    // spins no more than a sleeper, and while workers running flushes or
    // compactions filled the gate, the other idle workers of every type
    // slept (a hand-off to them is a futex wake). Leaving and claiming
    // the place again writes the gate's line twice, nothing against such
    // a run. A task's first long run (one made afresh each time, say)
    // still runs with the place held.
    void beforeRun(SpinGate& gate, Clock::duration lastRun) noexcept {
        if (lastRun >= kLongRun) {
            leaveGate(gate);
        }
    }
    // Gives the worker's place in the gate back, if it holds one: after a
    // spin that caught nothing (park()), before a long run (beforeRun()),
    // and when the worker exits.
    void leaveGate(SpinGate& gate) noexcept {
        if (holdsGate_) {
            holdsGate_ = false;
            gate.leave();
        }
    }

    // A record for the worker, from the thread that took it off the idle
    // set; stored before that thread's unpark(), whose seq_cst exchange
    // publishes it to the worker's acquire of the signal.
    void handOff(Record* r) noexcept { handedOff_ = r; }
    // What handOff() left, once park() has returned; null if nothing.
    Record* takeHandedOff() noexcept {
        Record* r = handedOff_;
        handedOff_ = nullptr;
        return r;
    }

    // Spins if claimSpin() said so (see above), then calls
    // beforeSleep(spun) and sleeps, until unpark(). beforeSleep is for what
    // the worker deferred while it might get work at once, and for moving
    // from the spinning to the sleeping idle workers; it returns false when
    // the worker must not sleep after all (it withdrew from the idle set
    // and is owed no unpark), and park() then returns at once.
    template <class BeforeSleep>
    void park(SpinGate& gate, SpinMode mode, BeforeSleep&& beforeSleep) {
        const bool spun = willSpin_;
        if (willSpin_) {
            willSpin_ = false;
            if (spin(mode)) {
                return;  // keeps its place in the gate (claimSpin)
            }
            leaveGate(gate);
            spinPays_ = false;
        }
        if (!beforeSleep(spun)) {
            return;
        }
        const auto parkedAt = Clock::now();
        sleep();
        spinPays_ = Clock::now() - parkedAt < kShortPark;
    }

  private:
    static constexpr std::uint32_t kWaiting = 0;
    static constexpr std::uint32_t kSignalled = 1;
    static constexpr std::uint32_t kSleeping = 2;

    bool signalled() const noexcept { return state_.load(std::memory_order_acquire) == kSignalled; }

    // True if work arrived within the mode's window. The clock is read once per
    // 32 pauses: a pause takes 10-150 cycles depending on the CPU.
    bool spin(SpinMode mode) const noexcept {
        const auto until =
            Clock::now() + (mode == SpinMode::Yield ? kYieldSpinWindow : kPauseSpinWindow);
        for (;;) {
            for (int i = 0; i < 32; ++i) {
                if (signalled()) {
                    return true;
                }
                detail::cpuRelax();
            }
            if (mode == SpinMode::Yield) {
                std::this_thread::yield();
            }
            if (Clock::now() >= until) {
                return signalled();
            }
        }
    }

    void sleep() noexcept {
        std::uint32_t expected = kWaiting;
        if (!state_.compare_exchange_strong(expected, kSleeping, std::memory_order_seq_cst)) {
            return;  // signalled meanwhile
        }
        while (!signalled()) {
            waitWhileSleeping();
        }
    }

#if defined(__linux__)
    // Returns when woken, on a spurious wake, or at once if the state is no
    // longer kSleeping (the kernel compares under its lock).
    void waitWhileSleeping() noexcept {
        syscall(SYS_futex, futexWord(), FUTEX_WAIT_PRIVATE, kSleeping, nullptr, nullptr, 0);
    }
    void wakeSleeper() noexcept {
        syscall(SYS_futex, futexWord(), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
    std::uint32_t* futexWord() noexcept {
        return reinterpret_cast<std::uint32_t*>(&state_);
    }
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free);
#else
    void waitWhileSleeping() noexcept {
        state_.wait(kSleeping, std::memory_order_acquire);
    }
    void wakeSleeper() noexcept {
        state_.notify_one();
    }
#endif

    std::atomic<std::uint32_t> state_{kWaiting};
    bool spinPays_ = true;                // owner-only
    bool willSpin_ = false;               // owner-only: claimSpin() until park()
    bool holdsGate_ = false;              // owner-only: a place in the SpinGate
    Record* handedOff_ = nullptr;         // handOff(), then the owner's take
    std::atomic<std::uint64_t> runs_{0};  // see countRun()
};

}  // namespace kvexec::wheel
