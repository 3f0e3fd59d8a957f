// striped_histogram.h: a Histogram split into stripes by the core the
// recording thread runs on, for the per-kind histograms every run of a
// pool records into.
//
// Why: a kind's histograms are written by every worker that runs one of
// its tasks, and a task kind in a busy loop runs on every worker at once.
// One histogram took two atomic adds per record (bucket and sum) on lines
// that every worker wrote: on 16 cores those lines, with the hand-off's
// own, were where the pool stopped scaling. Here a worker adds into the
// stripe of its core (this_core.h), so workers on different cores write
// different lines.
//
// Memory: a stripe is a Histogram (about 10 KB), made on the first record
// from one of its cores, so a kind run on few cores costs few; at most
// kStripes per histogram.
//
// Thread safety: record() may be called from any number of threads at
// once (lock-free; a stripe is published with a compare-exchange);
// summary() from any thread at any time, with Histogram's consistency
// (each counter exact, the sum may miss records in flight).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>

#include "kvexec/histogram.h"

namespace kvexec::detail {

class StripedHistogram {
  public:
    static constexpr std::size_t kStripes = 8;  // a power of two

    StripedHistogram();
    ~StripedHistogram();
    StripedHistogram(const StripedHistogram&) = delete;
    StripedHistogram& operator=(const StripedHistogram&) = delete;

    void record(std::chrono::nanoseconds value) noexcept { stripeForThisCore().record(value); }
    // Every stripe's counts together.
    HistogramSummary summary() const;

  private:
    Histogram& stripeForThisCore() noexcept;

    // Stripe 0 is made with the histogram, so that a record never fails:
    // a stripe that cannot be made (no memory) is stripe 0's share.
    std::array<std::atomic<Histogram*>, kStripes> stripes_{};
};

}  // namespace kvexec::detail
