// bench/executor/footprint.cc: idle CPU and memory per snoozed task.
#include "executor/footprint.h"

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <kvexec/task.h>

#include "executor/delays.h"
#include "executor/pool_harness.h"
#include "executor/process_cpu.h"
#include "executor/scenarios.h"

namespace kvexec::bench {
namespace {

constexpr std::size_t kIdleTasks = 30000;
constexpr std::size_t kMemoryTasks = 1000000;

double residentBytes() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return double(resident) * double(sysconf(_SC_PAGESIZE));
}

double heapBytes() {
    const struct mallinfo2 mi = mallinfo2();
    return double(mi.uordblks) + double(mi.hblkhd);
}

bool timeoutFired(LambdaTask& self) {
    self.snooze(kMinDelay);
    return true;
}

void scheduleTimeouts(PoolHarness& h, std::size_t count) {
    std::mt19937_64 rng(7);
    for (std::size_t i = 0; i < count; ++i) {
        h.pool().schedule(std::make_shared<LambdaTask>(h.owner(), TaskType::NonIO, "Timeout",
                                                       timeoutFired, 0, drawDelay(rng)));
    }
}

void idleCpu(benchmark::State& state, Backend backend, std::chrono::milliseconds window) {
    releaseCachedTimeouts();
    PoolHarness h(backend, PoolConfig{});
    scheduleTimeouts(h, kIdleTasks);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // settle
    const double cpu0 = processCpuSeconds();
    const auto wall0 = std::chrono::steady_clock::now();
    for (auto _ : state)
        std::this_thread::sleep_for(window);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
    state.counters["idle_cpu_pct"] = (processCpuSeconds() - cpu0) / wall.count() * 100.0;
}

void memoryPerTask(benchmark::State& state, Backend backend) {
    releaseCachedTimeouts();
    PoolHarness h(backend, nonIOPool(1));
    malloc_trim(0);
    const double rss0 = residentBytes(), heap0 = heapBytes();
    for (auto _ : state)
        scheduleTimeouts(h, kMemoryTasks);
    const double n = double(kMemoryTasks);
    state.counters["bytes_per_task"] = (residentBytes() - rss0) / n;
    state.counters["heap_bytes_per_task"] = (heapBytes() - heap0) / n;
}

}  // namespace

void registerFootprint(const std::vector<Backend>& backends, const Options& options) {
    const auto window = std::chrono::milliseconds(options.smoke ? 500 : 5000);
    auto name = [](Backend b, const char* what, std::size_t tasks) {
        const std::string label(to_string(b));
        return "Footprint<" + label + ">/" + what + "_" + label + "/Tasks:" + std::to_string(tasks);
    };
    for (Backend b : backends) {
        benchmark::RegisterBenchmark(name(b, "MemoryPerTask", kMemoryTasks).c_str(),
                                     [b](benchmark::State& s) { memoryPerTask(s, b); })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }
    for (Backend b : backends) {
        benchmark::RegisterBenchmark(name(b, "IdleCpu", kIdleTasks).c_str(),
                                     [b, window](benchmark::State& s) { idleCpu(s, b, window); })
            ->Iterations(1)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }
}

}  // namespace kvexec::bench
