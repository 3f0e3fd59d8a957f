// kvexec/histogram.h: a log-linear histogram of durations (HdrHistogram-like)
// and the summary of one that PoolStats carries.
//
// Values are nanoseconds. Below 2^kSubBucketBits every value has its own
// bucket; above, each power of two is split into 2^kSubBucketBits equal
// buckets, so a reported value is within 1/2^kSubBucketBits (about 3%) of
// the true one. Memory is constant (kBucketCount counters); values above
// kMaxValue are counted in the last bucket (max() stays exact).
//
// Cost: record() is two relaxed atomic adds (bucket, sum) and a relaxed
// load of the max (a CAS only when the max grows).
//
// Thread safety: record() is lock-free (relaxed atomic adds) and may be
// called from any number of threads at once; summary() may be called from
// any thread at any time. A summary taken while others record is a
// consistent-enough view: each counter is exact, their sum may miss the
// records in flight.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace kvexec {

// Percentiles of a histogram, as durations. All zero when count is 0.
struct HistogramSummary {
    std::uint64_t count = 0;
    std::chrono::nanoseconds mean{0};
    std::chrono::nanoseconds p50{0}, p90{0}, p99{0}, p999{0};
    std::chrono::nanoseconds max{0};
};

class Histogram {
  public:
    static constexpr unsigned kSubBucketBits = 5;
    static constexpr unsigned kMaxExponent = 44;  // 2^44 ns: about 4.9 hours
    static constexpr std::uint64_t kMaxValue = (std::uint64_t{1} << kMaxExponent) - 1;
    static constexpr std::size_t kBucketCount = (kMaxExponent - kSubBucketBits + 1)
                                                << kSubBucketBits;

    // Counts one value (nanoseconds; negative values count as 0).
    void record(std::chrono::nanoseconds value) noexcept;
    HistogramSummary summary() const noexcept;
    // The value at quantile q in [0, 1] (the upper bound of its bucket,
    // capped at max()); 0 when empty.
    std::chrono::nanoseconds valueAtQuantile(double q) const noexcept;
    // Adds `other`'s counts, sum and max into this one (to summarise
    // several histograms as one); `other` may be recorded into meanwhile.
    void add(const Histogram& other) noexcept;
    // The number of values recorded (sums the buckets: for readers, not
    // for the recording path).
    std::uint64_t count() const noexcept;

    // The bucket a value falls in, and the largest value of a bucket.
    static std::size_t bucketOf(std::uint64_t value) noexcept;
    static std::uint64_t upperBoundOf(std::size_t bucket) noexcept;

  private:
    std::array<std::atomic<std::uint64_t>, kBucketCount> buckets_{};
    std::atomic<std::uint64_t> sum_{0};
    std::atomic<std::uint64_t> max_{0};
};

}  // namespace kvexec
