// idle_workers.h: which workers of one task type are idle, as two bit sets
// (spinning, sleeping) indexed by worker, so that a producer finds one to
// wake with a load and one read-modify-write, holding no lock: every
// hand-off passed through one mutex before, and on 16 cores that mutex
// was where the pool stopped scaling.
//
// A producer takes a spinning worker first (waking it is a store; a sleeper
// costs a futex wake), else the worker that enlisted as a sleeper last if
// it is still idle, else the sleeping worker with the lowest index. The
// last to enlist has often not reached its futex yet, so waking it is a
// store too, and its caches are warm; the rest stay asleep (folly's
// LifoSem wakes the most recently idle thread for the same reasons). With
// the lowest sleeper only, LongLivedScheduleRun at 4 threads on 2 vCPUs
// (workers oversubscribed) fell to 0.6-0.8x of the LIFO stacks this set
// replaced.
//
// Protocol (no lost wake-up): a worker enlists (a seq_cst RMW), then looks
// at the ready lanes again before it sleeps; a producer publishes its
// record in a lane, then (seq_cst fence) looks here. One of the two sees
// the other. A worker taken by take() is owed exactly one unpark() by the
// taker; a worker that withdraw()s itself successfully is owed none.
//
// Thread safety: all members may be called from any thread; a worker's own
// bit is set only by that worker (enlist), cleared by whoever takes or
// withdraws it first.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace kvexec::wheel {

class IdleWorkers {
  public:
    static constexpr std::size_t kMaxWorkers = 256;

    void enlist(std::size_t index, bool spinning) noexcept {
        if (!spinning) {
            sleeping_.recent.store(index + 1, std::memory_order_relaxed);  // a hint only
        }
        setOf(spinning)[index / 64].fetch_or(bit(index), std::memory_order_seq_cst);
    }

    // Takes `index` off the set it is in; false if a producer took it
    // first (its unpark is then on the way).
    bool withdraw(std::size_t index, bool spinning) noexcept {
        return clearBit(setOf(spinning)[index / 64], index);
    }

    // An idle worker, taken off its set (the caller unparks it), or none.
    std::optional<std::size_t> take() noexcept {
        // Every word, always: a count of the words in use, raised by the
        // first enlisting above 64, would need its own seq_cst pairing with
        // the producer's fence (a producer could read the old count and
        // miss that worker). An empty word is one load of a shared line.
        if (auto index = takeLowest(hot_.spinning)) {
            return index;
        }
        if (const std::size_t recent = sleeping_.recent.load(std::memory_order_relaxed)) {
            if (takeBit(sleeping_.words[(recent - 1) / 64], recent - 1)) {
                return recent - 1;
            }
        }
        return takeLowest(sleeping_.words);
    }

    // A spinning worker, taken off its set, or none.
    std::optional<std::size_t> takeSpinner() noexcept { return takeLowest(hot_.spinning); }

    // Every idle worker, taken (setThreadCount, shutdown: each looks at
    // why it was woken). `f(index)` unparks one.
    template <class F>
    void takeAll(F&& f) {
        for (auto* set : {&hot_.spinning, &sleeping_.words}) {
            for (std::size_t w = 0; w < kWords; ++w) {
                for (std::uint64_t taken = (*set)[w].exchange(0, std::memory_order_seq_cst);
                     taken != 0; taken &= taken - 1) {
                    f(w * 64 + static_cast<std::size_t>(std::countr_zero(taken)));
                }
            }
        }
    }

    std::size_t count() const noexcept {
        std::size_t n = 0;
        for (std::size_t w = 0; w < kWords; ++w) {
            n += static_cast<std::size_t>(
                std::popcount(hot_.spinning[w].load(std::memory_order_relaxed)) +
                std::popcount(sleeping_.words[w].load(std::memory_order_relaxed)));
        }
        return n;
    }

  private:
    static constexpr std::size_t kWords = kMaxWorkers / 64;
    using Set = std::array<std::atomic<std::uint64_t>, kWords>;

    static std::uint64_t bit(std::size_t index) noexcept {
        return std::uint64_t{1} << (index % 64);
    }
    Set& setOf(bool spinning) noexcept { return spinning ? hot_.spinning : sleeping_.words; }

    static std::optional<std::size_t> takeLowest(Set& set) noexcept {
        for (std::size_t w = 0; w < kWords; ++w) {
            if (auto index = takeFrom(set[w])) {
                return w * 64 + *index;
            }
        }
        return std::nullopt;
    }

    // Clears `index`'s bit; true if it was set (this caller took it).
    static bool clearBit(std::atomic<std::uint64_t>& word, std::size_t index) noexcept {
        return (word.fetch_and(~bit(index), std::memory_order_seq_cst) & bit(index)) != 0;
    }
    // The same, with no write when the bit is clear: for a guess (a hint)
    // that is often stale, on a line other threads share.
    static bool takeBit(std::atomic<std::uint64_t>& word, std::size_t index) noexcept {
        return (word.load(std::memory_order_seq_cst) & bit(index)) != 0 && clearBit(word, index);
    }

    // The lowest bit of `word`, cleared; none if the word is empty.
    static std::optional<std::size_t> takeFrom(std::atomic<std::uint64_t>& word) noexcept {
        // seq_cst loads (plain loads on x86): they pair with the
        // producer's fence, or with ReadyQueue::takeIdle()'s read-modify-write
        // that stands in for it under ThreadSanitizer.
        std::uint64_t seen = word.load(std::memory_order_seq_cst);
        while (seen != 0) {
            const std::uint64_t lowest = seen & -seen;
            seen = word.fetch_and(~lowest, std::memory_order_seq_cst);
            if ((seen & lowest) != 0) {
                return static_cast<std::size_t>(std::countr_zero(lowest));
            }
        }
        return std::nullopt;
    }

    // Spinners come and go on every hand-off; sleepers rarely.
    struct alignas(64) Hot {
        Set spinning{};
    } hot_;
    static_assert(sizeof(Hot) == 64, "the spinning set has a line of its own");
    // `recent`: the index + 1 of the last worker that enlisted as a
    // sleeper (0: none yet), on the line that enlisting writes anyway.
    struct alignas(64) Sleeping {
        std::atomic<std::size_t> recent{0};
        Set words{};
    } sleeping_;
};

}  // namespace kvexec::wheel
