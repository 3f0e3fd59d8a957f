// engine/engine_histogram.h: the project's Histogram (percentiles) plus
// power-of-two bucket counts, which cbstats-style rows need and Histogram
// does not expose.
//
// Thread safety: record() is lock-free from any thread; snapshot() any time.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "kvexec/engine/bucket_stats.h"
#include "kvexec/histogram.h"

namespace kvexec::engine {

class EngineHistogram {
  public:
    EngineHistogram(std::string name, bool isDuration)
        : name_(std::move(name)), isDuration_(isDuration) {}

    void record(std::uint64_t value) noexcept;  // nanoseconds, or a count
    void record(std::chrono::nanoseconds value) noexcept {
        record(static_cast<std::uint64_t>(value.count() < 0 ? 0 : value.count()));
    }
    HistogramSnapshot snapshot() const;

  private:
    std::string name_;
    bool isDuration_;
    Histogram histogram_;
    // powers_[i] counts values in [2^(i-1), 2^i) (powers_[0]: value 0).
    std::array<std::atomic<std::uint64_t>, 65> powers_{};
};

}  // namespace kvexec::engine
