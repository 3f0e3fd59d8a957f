// observability_bench: what recording metrics costs (issue 5: at most 5%).
//
// OneShotScheduleRun and LongLivedScheduleRun as in executor_bench (one
// caller thread; a pool of N NonIO workers), for each backend, with
// PoolConfig::recordMetrics on and off in the same binary. Rows:
//   <Scenario>/<Backend>/metrics:<on|off>/workers:<N>
// Compare the on/off medians of one scenario, backend and worker count:
//   observability_bench --benchmark_repetitions=9
//       --benchmark_enable_random_interleaving=true
//       --benchmark_report_aggregates_only=true
// (random interleaving spreads machine noise over on and off alike).
//
// Measured 2026-11-22 on the shared 2-core CI box (load 2-7, so the
// threaded rows have a CV of 20-100%): RunTask +42 ns CPU per run (114 vs
// 72 ns), i.e. about 0.5% of a 7-10 us OneShot/LongLived round trip; the
// threaded medians differed by -3%..+8%, within their noise.
//
// RunTask/metrics:<on|off> times the recording itself, without threads:
// detail::runTask() on one task, with and without a PoolMetrics and a
// worker slot (what a worker does around every run).
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <semaphore>
#include <stdexcept>
#include <string>
#include <vector>

#include "executor/observability/pool_metrics.h"
#include "executor/task_runner.h"
#include "kvexec/executor_pool.h"

namespace {

using namespace kvexec;

class BenchOwner : public Taskable {
  public:
    const std::string& name() const override { return name_; }

  private:
    std::string name_ = "bench";
};

// A pool of `workers` NonIO threads (one of each other type) and an owner.
struct World {
    World(Backend backend, bool record, std::size_t workers) {
        PoolConfig config{1, 1, 1, workers};
        config.recordMetrics = record;
        pool = ExecutorPool::create(backend, config);
        pool->registerTaskable(owner);
    }
    ~World() { pool->unregisterTaskable(owner, true); }

    BenchOwner owner;
    std::unique_ptr<ExecutorPool> pool;
    std::counting_semaphore<> done{0};
};

void oneShot(benchmark::State& state, Backend backend, bool record) {
    World w(backend, record, static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        w.pool->schedule(
            std::make_shared<LambdaTask>(w.owner, TaskType::NonIO, "OneShot", [&w](LambdaTask&) {
                w.done.release();
                return false;
            }));
        w.done.acquire();
    }
    state.SetItemsProcessed(state.iterations());
}

constexpr std::size_t kLongLivedTasks = 64;

void longLived(benchmark::State& state, Backend backend, bool record) {
    World w(backend, record, static_cast<std::size_t>(state.range(0)));
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < kLongLivedTasks; ++i) {
        ids.push_back(w.pool->schedule(std::make_shared<LambdaTask>(
            w.owner, TaskType::NonIO, "LongLived",
            [&w](LambdaTask& self) {
                self.snooze(kForever);
                w.done.release();
                return true;
            },
            0, kForever)));
    }
    std::size_t next = 0;
    for (auto _ : state) {
        w.pool->wake(ids[next]);
        next = (next + 1) % ids.size();
        w.done.acquire();
    }
    state.SetItemsProcessed(state.iterations());
}

void runTaskDirect(benchmark::State& state, bool record) {
    BenchOwner owner;
    detail::PoolMetrics metrics;
    detail::WorkerSlot& slot = metrics.addWorker(TaskType::NonIO, "bench_worker");
    LambdaTask task(owner, TaskType::NonIO, "RunTask", [](LambdaTask&) { return true; });
    detail::KindMetrics* kind = nullptr;
    const detail::RunSite site = record ? detail::RunSite{&metrics, &slot} : detail::RunSite{};
    for (auto _ : state) {
        benchmark::DoNotOptimize(detail::runTask(task, site, kind));
    }
    state.SetItemsProcessed(state.iterations());
}

bool available(Backend backend) {
    try {
        ExecutorPool::create(backend, PoolConfig{1, 1, 1, 1});
        return true;
    } catch (const std::invalid_argument&) {
        return false;
    }
}

void registerAll() {
    benchmark::RegisterBenchmark("RunTask/metrics:on", runTaskDirect, true);
    benchmark::RegisterBenchmark("RunTask/metrics:off", runTaskDirect, false);
    for (Backend backend : {Backend::Classic, Backend::Wheel}) {
        if (!available(backend)) {
            continue;
        }
        const std::string b(to_string(backend));
        for (bool record : {true, false}) {
            const std::string m = record ? "/metrics:on" : "/metrics:off";
            benchmark::RegisterBenchmark(("OneShotScheduleRun/" + b + m).c_str(), oneShot, backend,
                                         record)
                ->ArgName("workers")
                ->Arg(1)
                ->Arg(2)
                ->UseRealTime();
            benchmark::RegisterBenchmark(("LongLivedScheduleRun/" + b + m).c_str(), longLived,
                                         backend, record)
                ->ArgName("workers")
                ->Arg(1)
                ->Arg(2)
                ->UseRealTime();
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    registerAll();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
