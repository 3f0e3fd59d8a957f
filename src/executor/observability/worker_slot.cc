// worker_slot.cc: the seqlock that publishes a worker's current run.
#include "executor/observability/worker_slot.h"

namespace kvexec::detail {

void WorkerSlot::publish(TaskId task, const KindMetrics* kind, Clock::rep start) noexcept {
    const auto s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    task_.store(task, std::memory_order_relaxed);
    kind_.store(kind, std::memory_order_relaxed);
    start_.store(start, std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_release);
}

WorkerSlot::Run WorkerSlot::read() const noexcept {
    for (int attempt = 0; attempt < 64; ++attempt) {
        const auto before = seq_.load(std::memory_order_acquire);
        if (before % 2 != 0) {
            continue;
        }
        Run run{task_.load(std::memory_order_relaxed), kind_.load(std::memory_order_relaxed),
                Clock::time_point(Clock::duration(start_.load(std::memory_order_relaxed)))};
        std::atomic_thread_fence(std::memory_order_acquire);
        if (seq_.load(std::memory_order_relaxed) == before) {
            return run;
        }
    }
    return Run{};  // the worker is busy starting and ending runs: show it idle
}

}  // namespace kvexec::detail
