#include "pillowfight/latency_histogram.h"

#include <algorithm>

namespace kvexec::pillowfight {

void LatencyHistogram::record(std::chrono::nanoseconds latency) noexcept {
    histogram_.record(latency);
    const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, latency.count()));
    counts_[Histogram::bucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
}

engine::HistogramSnapshot LatencyHistogram::snapshot(std::size_t rows) const {
    engine::HistogramSnapshot out;
    out.name = name_;
    out.isDuration = true;
    out.summary = histogram_.summary();
    const std::uint64_t total = out.summary.count;
    if (total == 0) {
        return out;
    }
    // A row closes once it holds total/rows values, or, past p99, at every
    // non-empty bucket, so that the tail the seed cares about stays visible.
    const std::uint64_t rowTarget =
        std::max<std::uint64_t>(1, total / std::max<std::size_t>(1, rows));
    const std::uint64_t tailStart = total - total / 100;
    std::uint64_t seen = 0;
    std::uint64_t inRow = 0;
    for (std::size_t b = 0; b < Histogram::kBucketCount; ++b) {
        const std::uint64_t count = counts_[b].load(std::memory_order_relaxed);
        if (count == 0) {
            continue;
        }
        seen += count;
        inRow += count;
        if (inRow >= rowTarget || seen > tailStart || seen == total) {
            const auto upper = std::min<std::uint64_t>(
                Histogram::upperBoundOf(b), static_cast<std::uint64_t>(out.summary.max.count()));
            out.buckets.emplace_back(upper, inRow);
            inRow = 0;
        }
    }
    return out;
}

}  // namespace kvexec::pillowfight
