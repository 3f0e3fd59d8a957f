// Observability: the histogram's accuracy and thread safety, and what
// stats() shows about kinds, slow runs and workers, for every backend.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "executor/contract_fixture.h"
#include "executor/observability/striped_histogram.h"
#include "kvexec/histogram.h"
#include "kvexec/manual_executor_pool.h"
#include "kvexec/stats_format.h"

namespace kvexec::test {
namespace {

using std::chrono::nanoseconds;

// --- Histogram ---------------------------------------------------------------

TEST(Histogram, BucketsAreContiguousAndBoundTheRelativeError) {
    EXPECT_EQ(Histogram::bucketOf(0), 0u);
    for (std::size_t b = 1; b < Histogram::kBucketCount; ++b) {
        const std::uint64_t lower = Histogram::upperBoundOf(b - 1) + 1;  // no gap
        const std::uint64_t upper = Histogram::upperBoundOf(b);
        ASSERT_EQ(Histogram::bucketOf(lower), b);
        ASSERT_EQ(Histogram::bucketOf(upper), b);
        const double error = static_cast<double>(upper - lower) / static_cast<double>(lower);
        ASSERT_LE(error, 1.0 / 32) << "bucket " << b;
    }
    EXPECT_EQ(Histogram::bucketOf(Histogram::kMaxValue), Histogram::kBucketCount - 1);
    EXPECT_EQ(Histogram::bucketOf(~std::uint64_t{0}), Histogram::kBucketCount - 1);
}

TEST(Histogram, PercentilesOfAUniformSpreadAreWithinThreePercent) {
    Histogram h;
    for (int v = 1; v <= 100'000; ++v) {
        h.record(nanoseconds(v));
    }
    const auto s = h.summary();
    EXPECT_EQ(s.count, 100'000u);
    EXPECT_EQ(s.max, nanoseconds(100'000));
    EXPECT_NEAR(s.mean.count(), 50'000, 1);
    EXPECT_NEAR(s.p50.count(), 50'000, 50'000 * 0.032);
    EXPECT_NEAR(s.p90.count(), 90'000, 90'000 * 0.032);
    EXPECT_NEAR(s.p99.count(), 99'000, 99'000 * 0.032);
    EXPECT_NEAR(s.p999.count(), 99'900, 99'900 * 0.032);
}

TEST(Histogram, EmptyIsAllZeroAndNegativeCountsAsZero) {
    Histogram h;
    EXPECT_EQ(h.summary().count, 0u);
    EXPECT_EQ(h.summary().max, nanoseconds(0));
    h.record(nanoseconds(-5));
    EXPECT_EQ(h.summary().count, 1u);
    EXPECT_EQ(h.summary().p50, nanoseconds(0));
}

TEST(Histogram, ConcurrentRecordsAreAllCounted) {
    Histogram h;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&h, t] {
            std::mt19937_64 rng(static_cast<std::uint64_t>(t));
            for (int i = 0; i < 50'000; ++i) {
                h.record(nanoseconds(rng() % 1'000'000));
            }
        });
    }
    for (int i = 0; i < 100; ++i) {
        EXPECT_LE(h.summary().p50, nanoseconds(1'000'000));  // readable while recording
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(h.summary().count, 200'000u);
}

// Threads on different cores record into different stripes; the summary
// counts every record once, with the sum and the max of all of them.
TEST(StripedHistogram, RecordsFromEveryCoreAreSummarisedTogether) {
    detail::StripedHistogram h;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 4; ++t) {
        threads.emplace_back([&h, t, cores] {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(t % cores, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);  // best effort
            for (int i = 1; i <= 10'000; ++i) {
                h.record(nanoseconds(i + 10'000 * static_cast<int>(t)));
            }
        });
    }
    for (int i = 0; i < 100; ++i) {
        EXPECT_LE(h.summary().max, nanoseconds(40'000));  // readable while recording
    }
    for (auto& t : threads) {
        t.join();
    }
    const HistogramSummary s = h.summary();
    EXPECT_EQ(s.count, 40'000u);
    EXPECT_EQ(s.max, nanoseconds(40'000));
    EXPECT_EQ(s.mean, nanoseconds(20'000));  // (1 + 40,000) / 2, rounded down
    EXPECT_NEAR(static_cast<double>(s.p50.count()), 20'000.0, 20'000.0 * 0.04);
}

TEST(Histogram, AddMergesCountsSumAndMax) {
    Histogram a, b;
    a.record(nanoseconds(10));
    b.record(nanoseconds(30));
    b.record(nanoseconds(5'000));
    a.add(b);
    const HistogramSummary s = a.summary();
    EXPECT_EQ(s.count, 3u);
    EXPECT_EQ(s.max, nanoseconds(5'000));
    EXPECT_EQ(s.mean, nanoseconds((10 + 30 + 5'000) / 3));
    EXPECT_EQ(b.summary().count, 2u) << "the source is left as it was";
}

// --- stats() of a pool -------------------------------------------------------

const TaskKindStats* findKind(const PoolStats& stats, const std::string& description) {
    for (const auto& k : stats.kinds) {
        if (k.description == description) {
            return &k;
        }
    }
    return nullptr;
}

// A task that sleeps longer than it says it should.
class SlowTask : public Task {
  public:
    explicit SlowTask(Taskable& owner) : Task(owner, TaskType::NonIO) {}
    std::string description() const override { return "slow task"; }
    std::chrono::microseconds maxExpectedDuration() const override { return 1ms; }

  protected:
    bool run() override {
        std::this_thread::sleep_for(5ms);
        return false;
    }
};

class SlowRunOwner : public TestOwner {
  public:
    void onSlowRun(const Task& task, Clock::duration ran, std::string_view thread) override {
        std::lock_guard lock(mutex);
        slowTask = task.id();
        slowRan = ran;
        slowThread = std::string(thread);
        reports.fetch_add(1);
    }
    std::mutex mutex;
    TaskId slowTask = 0;
    Clock::duration slowRan{};
    std::string slowThread;
    std::atomic<int> reports{0};
};

// A task that counts how often its description is asked for.
class CountingDescriptionTask : public Task {
  public:
    CountingDescriptionTask(Taskable& owner, std::atomic<int>& calls, int runs)
        : Task(owner, TaskType::NonIO), calls_(calls), left_(runs) {}
    std::string description() const override {
        calls_.fetch_add(1);
        return "counted";
    }

  protected:
    bool run() override { return --left_ > 0; }

  private:
    std::atomic<int>& calls_;
    int left_;
};

template <class B>
class Observability : public ExecutorContract<B> {
  protected:
    void SetUp() override {
        ExecutorContract<B>::SetUp();
        if (this->pool->stats().workers.empty()) {
            // A backend joins by the three calls in pool_metrics.h; until
            // then its observability tests are skipped, visibly.
            GTEST_SKIP() << this->pool->backendName()
                         << " does not record metrics yet (see "
                            "src/executor/observability/pool_metrics.h)";
        }
    }
};
TYPED_TEST_SUITE(Observability, ThreadedBackends, BackendNames);

TYPED_TEST(Observability, EveryRunIsRecordedInItsKindsHistograms) {
    std::atomic<int> runs{0};
    this->pool->schedule(makeTask(
        this->owner, [&](LambdaTask&) { return runs.fetch_add(1) + 1 < 10; }, TaskType::NonIO, 0,
        {}, false, "ten runs"));
    ASSERT_TRUE(waitFor([&] { return runs == 10; }));
    this->fence();
    const auto stats = this->pool->stats();
    const auto* k = findKind(stats, "ten runs");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->type, TaskType::NonIO);
    EXPECT_EQ(k->runs, 10u);
    EXPECT_EQ(k->runTime.count, 10u);
    EXPECT_EQ(k->queueTime.count, 10u);
    EXPECT_EQ(k->slowRuns, 0u);
    EXPECT_LE(k->runTime.p50, k->runTime.max);
}

TYPED_TEST(Observability, TheDescriptionIsAskedForOncePerTaskNotPerRun) {
    std::atomic<int> calls{0};
    auto t = std::make_shared<CountingDescriptionTask>(this->owner, calls, 20);
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return t->isDead(); }));
    EXPECT_EQ(t->runCount(), 20u);
    EXPECT_EQ(calls, 1);
}

TYPED_TEST(Observability, ASlowRunIsCountedAndReportedWithItsThread) {
    SlowRunOwner slowOwner;
    this->pool->registerTaskable(slowOwner);
    auto t = std::make_shared<SlowTask>(slowOwner);
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return slowOwner.reports == 1; }));
    {
        std::lock_guard lock(slowOwner.mutex);
        EXPECT_EQ(slowOwner.slowTask, t->id());
        EXPECT_GE(slowOwner.slowRan, 5ms);
        EXPECT_EQ(slowOwner.slowThread, "NonIO_worker_0");
    }
    const auto stats = this->pool->stats();
    const auto* k = findKind(stats, "slow task");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->slowRuns, 1u);
    this->pool->unregisterTaskable(slowOwner, false);
}

TYPED_TEST(Observability, TheDefaultSlowRunHookWritesOneLine) {
    ::testing::internal::CaptureStderr();
    auto t = std::make_shared<SlowTask>(this->owner);
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return t->isDead(); }));
    this->fence();
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("slow task"), std::string::npos) << err;
    EXPECT_NE(err.find("NonIO_worker_0"), std::string::npos) << err;
}

TYPED_TEST(Observability, TheWorkerViewShowsWhichTaskRunsAndForHowLong) {
    Gate started, release;
    auto t = makeTask(
        this->owner,
        [&](LambdaTask&) {
            started.open();
            release.wait();
            return false;
        },
        TaskType::Writer, 0, {}, false, "held open");
    this->pool->schedule(t);
    ASSERT_TRUE(started.wait());
    std::this_thread::sleep_for(2ms);
    auto stats = this->pool->stats();
    EXPECT_EQ(stats.workers.size(), 4u);  // one per type in the fixture
    bool found = false;
    for (const auto& w : stats.workers) {
        if (w.name == "Writer_worker_0") {
            found = true;
            EXPECT_EQ(w.type, TaskType::Writer);
            EXPECT_EQ(w.state, WorkerState::Running);
            EXPECT_EQ(w.task, t->id());
            EXPECT_EQ(w.taskDescription, "held open");
            EXPECT_GE(w.runningFor, 2ms);
        } else {
            EXPECT_EQ(w.state, WorkerState::Idle) << w.name;
        }
    }
    EXPECT_TRUE(found);
    release.open();
    ASSERT_TRUE(waitFor([&] {
        for (const auto& w : this->pool->stats().workers) {
            if (w.state != WorkerState::Idle) {
                return false;
            }
        }
        return true;
    }));
}

TYPED_TEST(Observability, TheWorkerViewFollowsSetThreadCount) {
    this->pool->setThreadCount(TaskType::Reader, 3);
    auto names = [&] {
        std::vector<std::string> readers;
        for (const auto& w : this->pool->stats().workers) {
            if (w.type == TaskType::Reader) {
                readers.push_back(w.name);
            }
        }
        return readers;
    };
    EXPECT_TRUE(waitFor([&] { return names().size() == 3; }));
    EXPECT_EQ(names(),
              (std::vector<std::string>{"Reader_worker_0", "Reader_worker_1", "Reader_worker_2"}));
    this->pool->setThreadCount(TaskType::Reader, 1);
    EXPECT_EQ(names(), std::vector<std::string>{"Reader_worker_0"});
}

TYPED_TEST(Observability, RecordMetricsOffLeavesKindsAndWorkersEmpty) {
    PoolConfig config{1, 1, 1, 1};
    config.recordMetrics = false;
    auto pool = makePool<TypeParam>(config);
    TestOwner owner;
    pool->registerTaskable(owner);
    std::atomic<int> runs{0};
    pool->schedule(countingTask(owner, runs));
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
    const auto stats = pool->stats();
    EXPECT_TRUE(stats.kinds.empty());
    EXPECT_TRUE(stats.workers.empty());
    EXPECT_EQ(stats.byType[static_cast<std::size_t>(TaskType::NonIO)].threads, 1u);
    pool->unregisterTaskable(owner, false);
}

TYPED_TEST(Observability, TableAndJsonShowKindsWorkersAndTasks) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    this->pool->schedule(makeTask(
        this->owner, [&](LambdaTask&) { return runs.fetch_add(1) < 0; }, TaskType::NonIO, 0, {},
        false, "Flusher shard 0"));
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
    this->fence();
    const auto stats = this->pool->stats();

    const std::string table = formatStatsTable(stats);
    EXPECT_NE(table.find("Flusher shard 0"), std::string::npos) << table;
    EXPECT_NE(table.find("NonIO_worker_0"), std::string::npos) << table;
    EXPECT_NE(table.find("p99.9"), std::string::npos) << table;

    const auto json = nlohmann::json::parse(formatStatsJson(stats));
    EXPECT_EQ(json["byType"]["NonIO"]["threads"], 1);
    ASSERT_TRUE(json["kinds"].is_array());
    bool flusher = false;
    for (const auto& k : json["kinds"]) {
        if (k["description"] == "Flusher shard 0") {
            flusher = true;
            EXPECT_EQ(k["runs"], 1);
            EXPECT_EQ(k["type"], "NonIO");
            EXPECT_TRUE(k["runTime"].contains("p999Ns"));
            EXPECT_TRUE(k["queueTime"].contains("maxNs"));
        }
    }
    EXPECT_TRUE(flusher) << json.dump();
    EXPECT_EQ(json["workers"].size(), 4u);
    EXPECT_EQ(json["workers"][0]["state"], "idle");
    bool sleeper = false;  // the flusher is done; the fence may still be held
    for (const auto& task : json["tasks"]) {
        if (task["id"] == t->id()) {
            sleeper = true;
            EXPECT_TRUE(task["wakeInNs"].is_null()) << task.dump();
            EXPECT_EQ(task["state"], "Snoozed");
        }
    }
    EXPECT_TRUE(sleeper) << json.dump();
}

// --- Manual backend ------------------------------------------------------------

TEST(ManualObservability, RunsAreRecordedAndThereAreNoWorkers) {
    ManualExecutorPool pool;
    TestOwner owner;
    pool.registerTaskable(owner);
    std::atomic<int> runs{0};
    pool.schedule(makeTask(
        owner, [&](LambdaTask&) { return runs.fetch_add(1) + 1 < 3; }, TaskType::Writer, 0, {},
        false, "manual kind"));
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    EXPECT_EQ(pool.runReady(TaskType::Writer), 1u);
    const auto stats = pool.stats();
    ASSERT_EQ(stats.kinds.size(), 1u);
    EXPECT_EQ(stats.kinds[0].description, "manual kind");
    EXPECT_EQ(stats.kinds[0].runs, 3u);
    EXPECT_TRUE(stats.workers.empty());
    pool.unregisterTaskable(owner, false);
}

TEST(ManualObservability, KindsAreBoundedAndTheRestCountAsOtherKinds) {
    ManualExecutorPool pool;
    TestOwner owner;
    pool.registerTaskable(owner);
    const std::size_t tasks = kMaxTaskKinds + 10;
    for (std::size_t i = 0; i < tasks; ++i) {
        pool.schedule(makeTask(
            owner, [](LambdaTask&) { return false; }, TaskType::AuxIO, 0, {}, false,
            "vb:" + std::to_string(i)));
    }
    EXPECT_EQ(pool.runReady(TaskType::AuxIO), tasks);
    const auto stats = pool.stats();
    EXPECT_EQ(stats.kinds.size(), kMaxTaskKinds + 1);
    const auto* other = findKind(stats, "(other kinds)");
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->runs, 10u);
    pool.unregisterTaskable(owner, false);
}

}  // namespace
}  // namespace kvexec::test
