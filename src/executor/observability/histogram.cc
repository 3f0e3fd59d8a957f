// histogram.cc: the log-linear bucket arithmetic and the percentile walk.
#include "kvexec/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kvexec {

namespace {
constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << Histogram::kSubBucketBits;
}  // namespace

std::size_t Histogram::bucketOf(std::uint64_t value) noexcept {
    value = std::min(value, kMaxValue);
    if (value < kSubBuckets) {
        return static_cast<std::size_t>(value);
    }
    const unsigned exponent = static_cast<unsigned>(std::bit_width(value)) - 1;
    const unsigned shift = exponent - kSubBucketBits;
    const std::uint64_t sub = (value >> shift) - kSubBuckets;
    return static_cast<std::size_t>(((shift + 1) << kSubBucketBits) + sub);
}

std::uint64_t Histogram::upperBoundOf(std::size_t bucket) noexcept {
    if (bucket < kSubBuckets) {
        return bucket;
    }
    const std::uint64_t shift = (bucket >> kSubBucketBits) - 1;
    const std::uint64_t sub = bucket & (kSubBuckets - 1);
    const std::uint64_t lower = (kSubBuckets + sub) << shift;
    return lower + (std::uint64_t{1} << shift) - 1;
}

void Histogram::record(std::chrono::nanoseconds value) noexcept {
    const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(0, value.count()));
    buckets_[bucketOf(v)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
    auto seen = max_.load(std::memory_order_relaxed);
    while (v > seen && !max_.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
    }
}

void Histogram::add(const Histogram& other) noexcept {
    for (std::size_t i = 0; i < kBucketCount; ++i) {
        if (const auto n = other.buckets_[i].load(std::memory_order_relaxed)) {
            buckets_[i].fetch_add(n, std::memory_order_relaxed);
        }
    }
    sum_.fetch_add(other.sum_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    const auto otherMax = other.max_.load(std::memory_order_relaxed);
    auto seen = max_.load(std::memory_order_relaxed);
    while (otherMax > seen &&
           !max_.compare_exchange_weak(seen, otherMax, std::memory_order_relaxed)) {
    }
}

std::chrono::nanoseconds Histogram::valueAtQuantile(double q) const noexcept {
    const std::uint64_t total = count();
    if (total == 0) {
        return std::chrono::nanoseconds(0);
    }
    const double clamped = std::clamp(q, 0.0, 1.0);
    const auto rank = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(clamped * static_cast<double>(total))));
    const std::uint64_t max = max_.load(std::memory_order_relaxed);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBucketCount; ++i) {
        seen += buckets_[i].load(std::memory_order_relaxed);
        if (seen >= rank) {
            return std::chrono::nanoseconds(std::min(upperBoundOf(i), max));
        }
    }
    return std::chrono::nanoseconds(max);
}

std::uint64_t Histogram::count() const noexcept {
    std::uint64_t total = 0;
    for (const auto& b : buckets_) {
        total += b.load(std::memory_order_relaxed);
    }
    return total;
}

HistogramSummary Histogram::summary() const noexcept {
    HistogramSummary s;
    s.count = count();
    if (s.count == 0) {
        return s;
    }
    s.mean = std::chrono::nanoseconds(sum_.load(std::memory_order_relaxed) / s.count);
    s.p50 = valueAtQuantile(0.50);
    s.p90 = valueAtQuantile(0.90);
    s.p99 = valueAtQuantile(0.99);
    s.p999 = valueAtQuantile(0.999);
    s.max = std::chrono::nanoseconds(max_.load(std::memory_order_relaxed));
    return s;
}

}  // namespace kvexec
