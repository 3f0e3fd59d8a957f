// process_cpu.h: the whole process's CPU time (user + sys, every thread),
// so that each throughput row also says what it cost: a pool (or a peer)
// that wins by spinning idle workers shows it as CPU per item.
//
// Thread safety: processCpuSeconds() from any thread. A CpuPerItem is made
// and used by one benchmark thread.
#pragma once

#include <benchmark/benchmark.h>
#include <sys/resource.h>

namespace kvexec::bench {

inline double processCpuSeconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto secs = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
    return secs(ru.ru_utime) + secs(ru.ru_stime);
}

// Made by every benchmark thread just before its timed loop, record()ed just
// after it; only thread 0 measures. Its counter cpu_ns_per_item is the
// process's CPU time over the loop divided by the items of all threads
// (Google Benchmark sums a counter over the threads, and only thread 0 sets
// it). Set-up made before construction is not counted.
class CpuPerItem {
  public:
    explicit CpuPerItem(const benchmark::State& state)
        : leader_(state.thread_index() == 0), cpu0_(leader_ ? processCpuSeconds() : 0.0) {}

    void record(benchmark::State& state) const {
        const double items = double(state.iterations()) * double(state.threads());
        if (leader_ && items > 0) {
            state.counters["cpu_ns_per_item"] = (processCpuSeconds() - cpu0_) * 1e9 / items;
        }
    }

  private:
    bool leader_;
    double cpu0_;
};

}  // namespace kvexec::bench
