// bench/executor/floor.cc: PingPong and the Baseline rows.
#include "executor/floor.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "executor/delays.h"
#include "executor/parallel_run.h"
#include "executor/signal.h"

namespace kvexec::bench {
namespace {

// Partner: a thread that answers every ping with a pong until stopped.
class Partner {
  public:
    Partner() : thread_([this] { answer(); }) {}
    ~Partner() {
        stop_.store(true, std::memory_order_relaxed);
        ping.post();
        thread_.join();
    }
    Signal ping, pong;

  private:
    void answer() {
        for (;;) {
            ping.wait();
            if (stop_.load(std::memory_order_relaxed))
                return;
            pong.post();
        }
    }
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

std::vector<std::unique_ptr<Partner>> partners;

void pingPong(benchmark::State& state) {
    const auto t = static_cast<std::size_t>(state.thread_index());
    if (t == 0) {
        partners.resize(static_cast<std::size_t>(state.threads()));
        for (auto& p : partners)
            p = std::make_unique<Partner>();
    }
    ParallelRun run(state);
    for (auto _ : run.loop()) {
        Partner& p = *partners[t];
        p.ping.post();
        p.pong.wait();
    }
    run.record();
    state.SetItemsProcessed(state.iterations());
    if (t == 0)
        partners.clear();
}

void clockNow(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(std::chrono::steady_clock::now());
    state.SetItemsProcessed(state.iterations());
}

void randomDelay(benchmark::State& state) {
    std::mt19937_64 rng(42);
    for (auto _ : state)
        benchmark::DoNotOptimize(drawDelay(rng));
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

void registerFloor(const Options& options) {
    auto* b = benchmark::RegisterBenchmark("PingPong", pingPong)->UseRealTime();
    for (int n : kThreadCounts)
        b->Threads(n);
    auto* c = benchmark::RegisterBenchmark("Baseline/ClockNow", clockNow)->UseRealTime();
    auto* r = benchmark::RegisterBenchmark("Baseline/RandomDelay", randomDelay)->UseRealTime();
    if (options.smoke) {
        for (auto* x : {b, c, r})
            x->Iterations(1);
    }
}

}  // namespace kvexec::bench
