// striped_histogram.cc: choosing, making and merging the stripes.
#include "executor/observability/striped_histogram.h"

#include <memory>
#include <new>

#include "executor/this_core.h"

namespace kvexec::detail {

static_assert((StripedHistogram::kStripes & (StripedHistogram::kStripes - 1)) == 0);

StripedHistogram::StripedHistogram() {
    stripes_[0].store(new Histogram(), std::memory_order_relaxed);
}

StripedHistogram::~StripedHistogram() {
    for (auto& stripe : stripes_) {
        delete stripe.load(std::memory_order_relaxed);
    }
}

Histogram& StripedHistogram::stripeForThisCore() noexcept {
    std::atomic<Histogram*>& slot = stripes_[thisCore() & (kStripes - 1)];
    if (Histogram* h = slot.load(std::memory_order_acquire)) {
        return *h;
    }
    std::unique_ptr<Histogram> made(new (std::nothrow) Histogram());
    if (!made) {
        return *stripes_[0].load(std::memory_order_relaxed);
    }
    Histogram* expected = nullptr;
    if (slot.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) {
        return *made.release();
    }
    return *expected;  // another thread of this stripe made it first
}

HistogramSummary StripedHistogram::summary() const {
    auto total = std::make_unique<Histogram>();
    for (const auto& stripe : stripes_) {
        if (const Histogram* h = stripe.load(std::memory_order_acquire)) {
            total->add(*h);
        }
    }
    return total->summary();
}

}  // namespace kvexec::detail
