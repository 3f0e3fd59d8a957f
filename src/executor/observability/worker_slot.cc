// worker_slot.cc: the seqlock that publishes a worker's current run.
#include "executor/observability/worker_slot.h"

namespace kvexec::detail {

// No fences (ThreadSanitizer does not model them): the fields are stored
// with release and loaded with acquire, so a reader that sees any field of a
// newer run also sees the odd sequence number stored before it, and its
// re-check fails (Boehm, "Can seqlocks get along with programming language
// memory models?"). On x86 these are plain moves either way.
void WorkerSlot::publish(TaskId task, const KindMetrics* kind, Clock::rep start) noexcept {
    const auto s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    task_.store(task, std::memory_order_release);
    kind_.store(kind, std::memory_order_release);
    start_.store(start, std::memory_order_release);
    seq_.store(s + 2, std::memory_order_release);
}

WorkerSlot::Run WorkerSlot::read() const noexcept {
    for (int attempt = 0; attempt < 64; ++attempt) {
        const auto before = seq_.load(std::memory_order_acquire);
        if (before % 2 != 0) {
            continue;
        }
        Run run{task_.load(std::memory_order_acquire), kind_.load(std::memory_order_acquire),
                Clock::time_point(Clock::duration(start_.load(std::memory_order_acquire)))};
        if (seq_.load(std::memory_order_relaxed) == before) {
            return run;
        }
    }
    return Run{};  // the worker is busy starting and ending runs: show it idle
}

}  // namespace kvexec::detail
