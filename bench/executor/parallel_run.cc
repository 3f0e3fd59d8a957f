// bench/executor/parallel_run.cc: the span of a multi-threaded benchmark run.
#include "executor/parallel_run.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "executor/process_cpu.h"

namespace kvexec::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Start {
    Clock::time_point wall;
    double cpuSeconds = 0.0;
};

// Written by thread t after the start barrier, read by thread 0 after the
// end barrier. More threads than this and the run reports no counters.
constexpr std::size_t kMaxThreads = 256;
std::array<Start, kMaxThreads> starts;

}  // namespace

void ParallelRun::markStart() {
    const auto t = static_cast<std::size_t>(state_.thread_index());
    if (t < kMaxThreads) {
        starts[t] = {Clock::now(), processCpuSeconds()};
    }
}

void ParallelRun::record() const {
    const auto threads = static_cast<std::size_t>(state_.threads());
    const double items = double(state_.iterations()) * double(threads);
    if (state_.thread_index() != 0 || threads > kMaxThreads || items <= 0) {
        return;
    }
    const Clock::time_point endWall = Clock::now();
    const double endCpu = processCpuSeconds();
    Start first = starts[0];
    for (std::size_t t = 1; t < threads; ++t) {
        first.wall = std::min(first.wall, starts[t].wall);
        first.cpuSeconds = std::min(first.cpuSeconds, starts[t].cpuSeconds);
    }
    const double wallSeconds = std::chrono::duration<double>(endWall - first.wall).count();
    if (wallSeconds > 0) {
        state_.counters["wall_items_per_second"] = items / wallSeconds;
    }
    state_.counters["cpu_ns_per_item"] = (endCpu - first.cpuSeconds) * 1e9 / items;
}

}  // namespace kvexec::bench
