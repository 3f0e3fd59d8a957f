// The contract's rules 3, 10, 11, 12 and 13: one thread per run, live
// thread counts and names, exceptions, stats, and a prompt destructor.
#include <pthread.h>

#include <set>
#include <stdexcept>

#include "executor/contract_fixture.h"

namespace kvexec::test {
namespace {

// Rules about worker threads themselves: threaded backends only.
template <class B>
class ThreadRules : public ExecutorContract<B> {};
TYPED_TEST_SUITE(ThreadRules, ThreadedBackends, BackendNames);

// Rules about runs, which the Manual backend keeps too (driven by hand).
template <class B>
class RunRules : public ExecutorContract<B> {};
TYPED_TEST_SUITE(RunRules, AllBackends, BackendNames);

TYPED_TEST(RunRules, Rule3_ATaskNeverRunsOnTwoThreadsAtOnce) {
    this->pool->setThreadCount(TaskType::NonIO, 4);
    std::atomic<int> inside{0}, overlaps{0}, runs{0};
    auto t = this->task(
        [&](LambdaTask& self) {
            if (inside.fetch_add(1) != 0) {
                overlaps.fetch_add(1);
            }
            std::this_thread::yield();
            inside.fetch_sub(1);
            runs.fetch_add(1);
            self.snooze(kForever);
            return true;
        },
        TaskType::NonIO, 0, kForever);
    const auto id = this->pool->schedule(t);
    std::vector<std::thread> wakers;
    for (int w = 0; w < 4; ++w) {
        wakers.emplace_back([&] {
            for (int i = 0; i < 2000; ++i) {
                this->pool->wake(id);
            }
        });
    }
    for (auto& w : wakers) {
        w.join();
    }
    this->pool->wake(id);
    ASSERT_TRUE(waitFor([&] { return runs > 0 && t->state() == TaskState::Snoozed; }));
    EXPECT_EQ(overlaps, 0);
}

TYPED_TEST(ThreadRules, Rule10_WorkerThreadsAreNamedByTypeAndIndex) {
    this->pool->setThreadCount(TaskType::AuxIO, 2);
    std::mutex m;
    std::set<std::string> names;
    Gate bothRunning;
    std::atomic<int> started{0}, finished{0};
    for (int i = 0; i < 2; ++i) {
        this->pool->schedule(this->task(
            [&](LambdaTask&) {
                char name[16] = {};
                pthread_getname_np(pthread_self(), name, sizeof name);
                {
                    std::lock_guard lock(m);
                    names.insert(name);
                }
                if (started.fetch_add(1) == 1) {
                    bothRunning.open();
                }
                bothRunning.wait();  // keep both workers busy so each takes one
                finished.fetch_add(1);
                return false;
            },
            TaskType::AuxIO));
    }
    ASSERT_TRUE(bothRunning.wait());
    ASSERT_TRUE(waitFor([&] { return finished == 2; }));  // they use this frame
    std::lock_guard lock(m);
    EXPECT_EQ(names, (std::set<std::string>{"AuxIO_worker_0", "AuxIO_worker_1"}));
}

TYPED_TEST(ThreadRules, Rule10_ThreadCountChangesUnderLoadLoseNoWork) {
    constexpr int kTasks = 2000;
    std::atomic<int> runs{0};
    for (int i = 0; i < kTasks; ++i) {
        this->pool->schedule(countingTask(this->owner, runs, false, TaskType::Reader));
        if (i % 250 == 0) {
            this->pool->setThreadCount(TaskType::Reader, 1 + (i / 250) % 4);
        }
    }
    EXPECT_EQ(this->pool->threadCount(TaskType::Reader), 4u);
    this->pool->setThreadCount(TaskType::Reader, 2);
    EXPECT_EQ(this->pool->threadCount(TaskType::Reader), 2u);
    ASSERT_TRUE(waitFor([&] { return runs == kTasks; }));
    this->fence(TaskType::Reader);
    EXPECT_EQ(runs, kTasks) << "a task ran twice";
    EXPECT_EQ(this->pool->stats().byType[static_cast<std::size_t>(TaskType::Reader)].threads, 2u);
}

TYPED_TEST(ThreadRules, Rule10_ShrinkingToZeroParksWorkAndGrowingResumesIt) {
    this->pool->setThreadCount(TaskType::Writer, 0);
    std::atomic<int> runs{0};
    this->pool->schedule(countingTask(this->owner, runs, false, TaskType::Writer));
    std::this_thread::sleep_for(20ms);  // nothing can run it: not a wait for a result
    EXPECT_EQ(runs, 0);
    this->pool->setThreadCount(TaskType::Writer, 1);
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
}

TYPED_TEST(RunRules, Rule11_AnExceptionReachesTheOwnerAndTheWorkerGoesOn) {
    auto t = this->task([](LambdaTask&) -> bool { throw std::runtime_error("boom"); });
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return this->owner.exceptions == 1; }));
    EXPECT_TRUE(t->isDead());
    EXPECT_TRUE(this->owner.exceptionSawDead());
    EXPECT_EQ(this->owner.exceptionTasks(), std::vector<TaskId>{t->id()});
    this->fence();  // the single NonIO worker still runs tasks
}

TYPED_TEST(ThreadRules, Rule12_StatsAreExactWhenIdle) {
    std::atomic<int> runs{0};
    auto sleeper = sleeperTask(this->owner, runs, TaskType::AuxIO);
    this->pool->schedule(sleeper);
    for (int i = 0; i < 3; ++i) {
        this->pool->schedule(countingTask(this->owner, runs, false, TaskType::Reader));
    }
    ASSERT_TRUE(waitFor([&] { return runs == 3; }));
    ASSERT_TRUE(waitFor([&] {
        auto s = this->pool->stats();
        return s.tasks.size() == 1 &&
               s.byType[static_cast<std::size_t>(TaskType::Reader)].sleeping == 1;
    }));
    const auto stats = this->pool->stats();
    const auto& reader = stats.byType[static_cast<std::size_t>(TaskType::Reader)];
    const auto& aux = stats.byType[static_cast<std::size_t>(TaskType::AuxIO)];
    EXPECT_EQ(reader.executed, 3u);
    EXPECT_EQ(reader.threads, 1u);
    EXPECT_EQ(reader.ready, 0u);
    EXPECT_EQ(aux.future, 1u);
    ASSERT_EQ(stats.tasks.size(), 1u);
    const TaskInfo& info = stats.tasks[0];
    EXPECT_EQ(info.id, sleeper->id());
    EXPECT_EQ(info.owner, "bucket");
    EXPECT_EQ(info.description, "test task");
    EXPECT_EQ(info.type, TaskType::AuxIO);
    EXPECT_EQ(info.state, TaskState::Snoozed);
    EXPECT_EQ(info.wakeTime, Clock::time_point::max());
}

// The count of runs is the sum of what every worker ran, those that left
// included: workers come and go here while tasks run.
TYPED_TEST(ThreadRules, Rule12_ExecutedCountsEveryRunAsWorkersComeAndGo) {
    std::atomic<int> runs{0};
    const auto readerStats = [this] {
        return this->pool->stats().byType[static_cast<std::size_t>(TaskType::Reader)];
    };
    const auto runBatch = [&](int n) {
        for (int i = 0; i < n; ++i) {
            this->pool->schedule(countingTask(this->owner, runs, false, TaskType::Reader));
        }
    };
    this->pool->setThreadCount(TaskType::Reader, 4);
    runBatch(200);
    this->pool->setThreadCount(TaskType::Reader, 1);  // three leave, maybe mid-batch
    runBatch(100);
    this->pool->setThreadCount(TaskType::Reader, 3);  // two come back
    runBatch(100);
    ASSERT_TRUE(waitFor([&] { return runs == 400; }));
    ASSERT_TRUE(waitFor([&] { return readerStats().sleeping == 3; }));
    EXPECT_EQ(readerStats().executed, 400u);
}

TYPED_TEST(RunRules, Rule13_DestructorIsPromptWithManyTasksSnoozedFarAhead) {
    constexpr int kTasks = 20000;
    std::atomic<int> runs{0};
    std::vector<std::weak_ptr<Task>> weak;
    for (int i = 0; i < kTasks; ++i) {
        auto t = countingTask(this->owner, runs, false, static_cast<TaskType>(i % 4),
                              std::chrono::hours(1) + std::chrono::milliseconds(i));
        weak.push_back(t);
        this->pool->schedule(std::move(t));
    }
    Gate destroyed;
    std::thread destroyer([&] {
        this->destroyPool();
        destroyed.open();
    });
    const bool prompt = destroyed.wait(10s);
    destroyer.join();
    EXPECT_TRUE(prompt) << "destructor took longer than 10 s";
    EXPECT_EQ(runs, 0);
    for (auto& w : weak) {
        ASSERT_TRUE(w.expired());
    }
}

}  // namespace
}  // namespace kvexec::test
