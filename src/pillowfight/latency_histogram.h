// pillowfight/latency_histogram.h: the client-side latency of one kind of
// operation: the project's Histogram (percentiles, mean, max) plus a count
// per Histogram bucket, which the seed-style text needs and Histogram does
// not expose.
//
// Thread safety: record() is lock-free (relaxed atomic adds) from any
// number of event-loop threads; snapshot() from any thread, exact once the
// recording threads are joined.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "kvexec/engine/bucket_stats.h"
#include "kvexec/histogram.h"

namespace kvexec::pillowfight {

class LatencyHistogram {
  public:
    explicit LatencyHistogram(std::string name) : name_(std::move(name)) {}

    void record(std::chrono::nanoseconds latency) noexcept;
    // Rows of about `rows` equal counts (the tail keeps its own rows: each
    // row above p99 is one Histogram bucket), as (upper bound, count).
    engine::HistogramSnapshot snapshot(std::size_t rows = 32) const;

  private:
    std::string name_;
    Histogram histogram_;
    std::array<std::atomic<std::uint64_t>, Histogram::kBucketCount> counts_{};
};

}  // namespace kvexec::pillowfight
