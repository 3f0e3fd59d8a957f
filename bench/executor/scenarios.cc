// bench/executor/scenarios.cc: the bodies of OneShotScheduleRun,
// LongLivedScheduleRun and TimeoutAddCancel, shared by every implementation.
//
// Threading: Google Benchmark runs the body on N threads at once. Thread 0
// builds the shared state before the timed loop and tears it down after;
// the library's barriers at loop start and loop end order those steps
// against the other threads, which touch the shared state only inside the
// loop.
#include "executor/scenarios.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/parallel_run.h"
#include "executor/process_cpu.h"

namespace kvexec::bench {
namespace {

// One Signal per benchmark thread; destroyed after the target.
struct Signals {
    explicit Signals(std::size_t n) : n(n), all(std::make_unique<Signal[]>(n)) {}
    std::size_t n;
    std::unique_ptr<Signal[]> all;
    Signal& operator[](std::size_t i) { return all[i]; }
};

void checkRuns(benchmark::State& state, std::uint64_t runs) {
    auto expected = static_cast<std::uint64_t>(state.iterations()) * state.threads();
    if (runs != expected)
        state.SkipWithError("job count does not match the round trips");
}

// --- OneShotScheduleRun -------------------------------------------------

struct OneShotWorld {
    Signals signals;
    std::unique_ptr<OneShotTarget> target;
};
std::unique_ptr<OneShotWorld> oneShotWorld;

void oneShot(benchmark::State& state, const OneShotFactory& make) {
    const auto t = static_cast<std::size_t>(state.thread_index());
    if (t == 0) {
        releaseCachedTimeouts();
        const auto n = static_cast<std::size_t>(state.threads());
        oneShotWorld.reset(new OneShotWorld{Signals(n), make(n)});
    }
    ParallelRun run(state);
    for (auto _ : run.loop()) {
        OneShotWorld& w = *oneShotWorld;
        w.target->runOnce(w.signals[t]);
        w.signals[t].wait();
    }
    run.record();
    state.SetItemsProcessed(state.iterations());
    if (t == 0) {
        checkRuns(state, oneShotWorld->target->runs());
        oneShotWorld->target.reset();  // waits for the last jobs
        oneShotWorld.reset();
    }
}

// --- LongLivedScheduleRun -----------------------------------------------

// Task i belongs to benchmark thread i % N and signals that thread.
struct LongLivedWorld {
    Signals signals;
    std::unique_ptr<LongLivedTarget> target;
    std::vector<std::vector<std::size_t>> owned;  // handles per thread
};
std::unique_ptr<LongLivedWorld> longLivedWorld;

std::unique_ptr<LongLivedWorld> buildLongLived(std::size_t threads, std::size_t tasks,
                                               const LongLivedFactory& make) {
    auto w =
        std::unique_ptr<LongLivedWorld>(new LongLivedWorld{Signals(threads), make(threads), {}});
    w->owned.resize(threads);
    for (std::size_t i = 0; i < tasks; ++i) {
        w->owned[i % threads].push_back(w->target->add(w->signals[i % threads]));
    }
    return w;
}

void longLived(benchmark::State& state, const LongLivedFactory& make) {
    const auto t = static_cast<std::size_t>(state.thread_index());
    if (t == 0) {
        releaseCachedTimeouts();
        longLivedWorld = buildLongLived(static_cast<std::size_t>(state.threads()),
                                        static_cast<std::size_t>(state.range(0)), make);
    }
    std::size_t next = 0;
    ParallelRun run(state);
    for (auto _ : run.loop()) {
        LongLivedWorld& w = *longLivedWorld;
        const auto& mine = w.owned[t];
        w.target->wake(mine[next]);
        next = (next + 1 == mine.size()) ? 0 : next + 1;
        w.signals[t].wait();
    }
    run.record();
    state.SetItemsProcessed(state.iterations());
    if (t == 0) {
        checkRuns(state, longLivedWorld->target->runs());
        longLivedWorld->target.reset();
        longLivedWorld.reset();
    }
}

// --- TimeoutAddCancel ---------------------------------------------------

// Building a million timeouts takes seconds, so the set is kept between the
// runs Google Benchmark makes of one family (thread counts, iteration
// estimates), and rebuilt once it is older than kMaxCacheAge: after 10 s the
// first timeouts that were never re-armed would start to fire. (A single run
// longer than 5 s, e.g. Classic with 1,000,000 timeouts at 16 threads, can
// still see a few fire near its end; they re-arm themselves 10 s ahead.)
constexpr auto kMaxCacheAge = std::chrono::seconds(5);

struct TimeoutCache {
    std::string key;
    std::chrono::steady_clock::time_point built;
    std::unique_ptr<TimeoutTarget> target;
};
TimeoutCache timeoutCache;

TimeoutTarget& cachedTimeouts(const std::string& key, std::size_t count,
                              const TimeoutFactory& make) {
    const auto now = std::chrono::steady_clock::now();
    if (timeoutCache.key != key || now - timeoutCache.built > kMaxCacheAge) {
        releaseCachedTimeouts();
        timeoutCache.target = make(count, DelayTable(/*seed=*/0x5eed));
        timeoutCache.key = key;
        timeoutCache.built = std::chrono::steady_clock::now();
    }
    return *timeoutCache.target;
}

TimeoutTarget* timeoutTarget = nullptr;

// Thread t re-arms timeouts t, t+N, t+2N, ... in turn.
void timeoutAddCancel(benchmark::State& state, const std::string& key, const TimeoutFactory& make) {
    const auto t = static_cast<std::size_t>(state.thread_index());
    const auto n = static_cast<std::size_t>(state.threads());
    const auto count = static_cast<std::size_t>(state.range(0));
    if (t == 0)
        timeoutTarget = &cachedTimeouts(key + "/" + std::to_string(count), count, make);
    DelayTable delays(/*seed=*/t + 1);
    std::size_t index = t;
    ParallelRun run(state);
    for (auto _ : run.loop()) {
        timeoutTarget->rearm(index, delays.next());
        index += n;
        if (index >= count)
            index = t;
    }
    run.record();
    state.SetItemsProcessed(state.iterations());
}

// --- Sparse wakes ---------------------------------------------------------

// kSparseThreads benchmark threads each wake their own long-lived task
// every kSparsePeriod (1,000 wakes/s in all) and wait for its run; thread 0
// records the process's CPU over the window as a percentage of one core.
// A pool that spins between wakes burns a core here.
constexpr int kSparseThreads = 16;
constexpr auto kSparsePeriod = std::chrono::milliseconds(16);

void sparseWake(benchmark::State& state, const LongLivedFactory& make,
                std::chrono::milliseconds window) {
    const auto t = static_cast<std::size_t>(state.thread_index());
    if (t == 0) {
        releaseCachedTimeouts();
        longLivedWorld = buildLongLived(static_cast<std::size_t>(state.threads()),
                                        static_cast<std::size_t>(state.range(0)), make);
    }
    const double cpu0 = processCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        LongLivedWorld& w = *longLivedWorld;
        // Threads start their periods spread over one period.
        auto next = start + kSparsePeriod * static_cast<int>(t) / kSparseThreads;
        std::size_t i = 0;
        for (; next < start + window; next += kSparsePeriod) {
            std::this_thread::sleep_until(next);
            w.target->wake(w.owned[t][i]);
            i = (i + 1) % w.owned[t].size();
            w.signals[t].wait();
        }
    }
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
    if (t == 0) {
        state.counters["cpu_pct"] = (processCpuSeconds() - cpu0) / wall.count() * 100.0;
        longLivedWorld->target.reset();
        longLivedWorld.reset();
    }
}

}  // namespace

void releaseCachedTimeouts() {
    timeoutCache.target.reset();
    timeoutCache.key.clear();
}

namespace {

// The pool at kOversubscribedWorkers workers, kOversubscribedThreads
// submitting threads (a server's front-end threads outnumbering the
// cores), and the sparse-wake CPU row.
constexpr std::size_t kOversubscribedWorkers = 2;
constexpr int kOversubscribedThreads = 16;

void registerLoadedScenarios(const Implementation& impl, const Options& options) {
    const std::string prefix = impl.family + "/";
    auto finish = [&](benchmark::internal::Benchmark* b, int threads) {
        b->UseRealTime()->Threads(threads);
        if (options.smoke)
            b->Iterations(1);
    };
    if (impl.oneShot) {
        OneShotFactory two = [make = impl.oneShot](std::size_t) {
            return make(kOversubscribedWorkers);
        };
        finish(
            benchmark::RegisterBenchmark((prefix + "OneShotOversubscribed_" + impl.label).c_str(),
                                         [two](benchmark::State& s) { oneShot(s, two); }),
            kOversubscribedThreads);
    }
    if (!impl.longLived) {
        return;
    }
    LongLivedFactory two = [make = impl.longLived](std::size_t) {
        return make(kOversubscribedWorkers);
    };
    auto* b =
        benchmark::RegisterBenchmark((prefix + "LongLivedOversubscribed_" + impl.label).c_str(),
                                     [two](benchmark::State& s) { longLived(s, two); });
    b->ArgName("Tasks");
    for (auto k : kLongLivedTasks)
        b->Arg(k);
    finish(b, kOversubscribedThreads);
    const auto window = std::chrono::milliseconds(options.smoke ? 100 : 1000);
    auto* sparse = benchmark::RegisterBenchmark(
        (prefix + "SparseWakeCpu_" + impl.label).c_str(),
        [two, window](benchmark::State& s) { sparseWake(s, two, window); });
    sparse->ArgName("Tasks")
        ->Arg(kSparseThreads)
        ->Iterations(1)
        ->UseRealTime()
        ->Threads(kSparseThreads);
}

}  // namespace

void registerScenarios(const Implementation& impl, const Options& options) {
    auto finish = [&](benchmark::internal::Benchmark* b) {
        b->UseRealTime();
        for (int n : kThreadCounts)
            b->Threads(n);
        if (options.smoke)
            b->Iterations(1);
    };
    const std::string prefix = impl.family + "/";
    if (impl.oneShot) {
        finish(benchmark::RegisterBenchmark(
            (prefix + "OneShotScheduleRun_" + impl.label).c_str(),
            [make = impl.oneShot](benchmark::State& s) { oneShot(s, make); }));
    }
    if (impl.longLived) {
        auto* b = benchmark::RegisterBenchmark(
            (prefix + "LongLivedScheduleRun_" + impl.label).c_str(),
            [make = impl.longLived](benchmark::State& s) { longLived(s, make); });
        b->ArgName("Tasks");
        for (auto k : kLongLivedTasks)
            b->Arg(k);
        finish(b);
    }
    registerLoadedScenarios(impl, options);
    if (impl.timeouts) {
        auto* b = benchmark::RegisterBenchmark(
            (prefix + "TimeoutAddCancel_" + impl.label).c_str(),
            [make = impl.timeouts, key = prefix + impl.label](benchmark::State& s) {
                timeoutAddCancel(s, key, make);
            });
        b->ArgName("Timeouts");
        for (auto k : kTimeoutCounts)
            b->Arg(k);
        finish(b);
    }
}

}  // namespace kvexec::bench
