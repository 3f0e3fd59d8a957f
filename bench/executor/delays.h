// bench/executor/delays.h: random timeouts of 10-30 s, drawn ahead of time.
//
// TimeoutAddCancel re-arms timeouts "10-30 s ahead". Drawing the random
// number inside the timed loop would add the generator's cost to every
// implementation; instead each benchmark thread draws a table once, before
// timing, and walks it. (The clock read stays inside the call: every
// implementation reads the clock to turn "in d" into a deadline.)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace kvexec::bench {

using Delay = std::chrono::steady_clock::duration;

inline constexpr std::chrono::seconds kMinDelay{10};
inline constexpr std::chrono::seconds kMaxDelay{30};

// drawDelay: one uniform draw in [10 s, 30 s], to the millisecond.
inline Delay drawDelay(std::mt19937_64& rng) {
    std::uniform_int_distribution<std::int64_t> ms(std::chrono::milliseconds(kMinDelay).count(),
                                                   std::chrono::milliseconds(kMaxDelay).count());
    return std::chrono::milliseconds(ms(rng));
}

// DelayTable: a ring of pre-drawn delays; next() costs an index increment.
class DelayTable {
  public:
    explicit DelayTable(std::uint64_t seed, std::size_t size = 4096) : delays_(size) {
        std::mt19937_64 rng(seed);
        for (auto& d : delays_)
            d = drawDelay(rng);
    }

    Delay next() noexcept {
        Delay d = delays_[pos_];
        pos_ = (pos_ + 1 == delays_.size()) ? 0 : pos_ + 1;
        return d;
    }

    Delay at(std::size_t i) const noexcept { return delays_[i % delays_.size()]; }

  private:
    std::vector<Delay> delays_;
    std::size_t pos_ = 0;
};

}  // namespace kvexec::bench
