// engine_histogram.cc: EngineHistogram, the engine's lock-free latency histograms.
#include "engine/engine_histogram.h"

#include <bit>

namespace kvexec::engine {

void EngineHistogram::record(std::uint64_t value) noexcept {
    histogram_.record(std::chrono::nanoseconds(
        static_cast<std::int64_t>(value > Histogram::kMaxValue ? Histogram::kMaxValue : value)));
    powers_[static_cast<std::size_t>(std::bit_width(value))].fetch_add(1,
                                                                       std::memory_order_relaxed);
}

HistogramSnapshot EngineHistogram::snapshot() const {
    HistogramSnapshot out;
    out.name = name_;
    out.isDuration = isDuration_;
    out.summary = histogram_.summary();
    for (std::size_t i = 0; i < powers_.size(); ++i) {
        const auto count = powers_[i].load(std::memory_order_relaxed);
        if (count != 0) {
            const std::uint64_t upper =
                i == 0 ? 0 : (i == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << i) - 1);
            out.buckets.emplace_back(upper, count);
        }
    }
    return out;
}

}  // namespace kvexec::engine
