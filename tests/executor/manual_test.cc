// The Manual backend: the caller runs tasks, deterministically.
#include <gtest/gtest.h>

#include <future>
#include <stdexcept>
#include <thread>

#include "executor/test_support.h"
#include "kvexec/manual_executor_pool.h"

namespace kvexec::test {
namespace {

class ManualPool : public ::testing::Test {
  protected:
    void SetUp() override { pool.registerTaskable(owner); }
    void TearDown() override { pool.unregisterTaskable(owner, true); }
    TestOwner owner;
    ManualExecutorPool pool;
};

TEST_F(ManualPool, CreateReturnsAManualPoolWithNoThreads) {
    auto made = ExecutorPool::create(Backend::Manual);
    EXPECT_EQ(made->backendName(), "Manual");
    EXPECT_NE(dynamic_cast<ManualExecutorPool*>(made.get()), nullptr);
    EXPECT_EQ(pool.threadCount(TaskType::NonIO), 0u);
    pool.setThreadCount(TaskType::NonIO, 4);
    EXPECT_EQ(pool.threadCount(TaskType::NonIO), 0u);
}

TEST_F(ManualPool, NothingRunsUntilTheCallerRunsIt) {
    std::atomic<int> runs{0};
    pool.schedule(countingTask(owner, runs));
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(pool.runReady(TaskType::Writer), 0u) << "other types are not touched";
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 1u);
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 0u);
}

TEST_F(ManualPool, RunReadyRunsDueTasksInPriorityOrderAndSkipsFutureOnes) {
    std::vector<int> order;
    auto record = [&order](int tag) {
        return [&order, tag](LambdaTask&) {
            order.push_back(tag);
            return false;
        };
    };
    pool.schedule(makeTask(owner, record(1), TaskType::NonIO, 5));
    pool.schedule(makeTask(owner, record(2), TaskType::NonIO, 1));
    pool.schedule(makeTask(owner, record(3), TaskType::NonIO, 0, 1h));
    pool.schedule(makeTask(owner, record(4), TaskType::NonIO, 3));
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 3u);
    EXPECT_EQ(order, (std::vector<int>{2, 4, 1}));
}

TEST_F(ManualPool, RunReadyRunsTasksWokenDuringTheCallButNotSelfReschedulingOnesTwice) {
    std::atomic<int> flusherRuns{0}, spinnerRuns{0};
    auto flusher = sleeperTask(owner, flusherRuns);
    pool.schedule(flusher);
    pool.schedule(makeTask(owner, [&](LambdaTask&) {
        pool.wake(flusher->id());  // a front-end write wakes the flusher
        return false;
    }));
    pool.schedule(makeTask(owner, [&](LambdaTask&) {
        spinnerRuns.fetch_add(1);
        return true;  // again as soon as possible: not again in this call
    }));
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 3u);
    EXPECT_EQ(flusherRuns, 1);
    EXPECT_EQ(spinnerRuns, 1);
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 1u);
    EXPECT_EQ(spinnerRuns, 2);
}

TEST_F(ManualPool, RunNextRunsTheEarliestTaskEvenIfItIsInTheFuture) {
    std::atomic<int> early{0}, late{0};
    auto lateTask = countingTask(owner, late, false, TaskType::AuxIO, 2h);
    auto earlyTask = countingTask(owner, early, false, TaskType::AuxIO, 1h);
    pool.schedule(lateTask);
    pool.schedule(earlyTask);
    EXPECT_EQ(pool.runNext(TaskType::AuxIO), earlyTask->id());
    EXPECT_EQ(early, 1);
    EXPECT_EQ(late, 0);
    EXPECT_EQ(pool.runNext(TaskType::AuxIO), lateTask->id());
    EXPECT_EQ(pool.runNext(TaskType::AuxIO), 0u);
}

TEST_F(ManualPool, RunNextSkipsCancelledTasks) {
    std::atomic<int> runs{0};
    auto cancelled = countingTask(owner, runs, false, TaskType::AuxIO, 1h);
    auto live = countingTask(owner, runs, false, TaskType::AuxIO, 2h);
    pool.schedule(cancelled);
    pool.schedule(live);
    pool.cancel(cancelled->id());
    EXPECT_EQ(pool.runNext(TaskType::AuxIO), live->id());
    EXPECT_EQ(runs, 1);
}

TEST_F(ManualPool, AWakeDuringRunMakesItRunAgain) {
    std::atomic<int> runs{0};
    std::shared_ptr<Task> t = makeTask(
        owner,
        [&](LambdaTask& self) {
            if (runs.fetch_add(1) == 0) {
                pool.wake(self.id());
            }
            self.snooze(kForever);
            return true;
        },
        TaskType::NonIO, 0, kForever);
    pool.schedule(t);
    pool.wake(t->id());
    EXPECT_EQ(pool.runReady(TaskType::NonIO), 2u);
    EXPECT_EQ(t->state(), TaskState::Snoozed);
}

TEST_F(ManualPool, UnregisterRunsBlockShutdownTasksOnTheCallingThread) {
    TestOwner bucket("bucket-b");
    pool.registerTaskable(bucket);
    std::atomic<int> flushes{0}, others{0};
    auto flush = makeTask(
        bucket, [&](LambdaTask&) { return flushes.fetch_add(1) + 1 < 2; }, TaskType::Writer, 0,
        kForever, true);
    std::weak_ptr<Task> weak = flush;
    pool.schedule(std::move(flush));
    pool.schedule(countingTask(bucket, others, false, TaskType::Writer));
    pool.unregisterTaskable(bucket, false);
    EXPECT_EQ(flushes, 2);
    EXPECT_EQ(others, 0);
    EXPECT_TRUE(weak.expired());
    EXPECT_EQ(pool.taskableCount(), 1u);
}

// Another caller is inside a blockShutdown task's run when its owner
// unregisters, and that run queues the task again: the unregistering runs
// it, rather than wait for a runReady() that may never come.
TEST_F(ManualPool, UnregisterRunsABlockShutdownTaskThatAnotherCallersRunQueuedAgain) {
    TestOwner bucket("bucket-b");
    pool.registerTaskable(bucket);
    Gate running, finish;
    std::atomic<int> flushes{0};
    std::thread::id secondRunOn;
    pool.schedule(makeTask(
        bucket,
        [&](LambdaTask&) {
            if (flushes.fetch_add(1) == 0) {
                running.open();
                finish.wait();
                return true;  // again: the unregistering woke it meanwhile
            }
            secondRunOn = std::this_thread::get_id();
            return false;
        },
        TaskType::Writer, 0, Clock::duration::zero(), true));
    std::thread driver([&] { pool.runNext(TaskType::Writer); });  // one run, no more
    running.wait();

    std::promise<void> unregistered;
    auto done = unregistered.get_future();
    std::thread unregistering([&] {
        pool.unregisterTaskable(bucket, false);
        unregistered.set_value();
    });
    // Registering again does nothing while the owner is registered and is
    // refused once the unregistering has begun, which holds the pool's
    // lock from then until it waits for the run (it has nothing to drop):
    // refused, it waits now.
    EXPECT_TRUE(waitFor([&] {
        try {
            pool.registerTaskable(bucket);
            return false;
        } catch (const std::logic_error&) {
            return true;
        }
    }));
    finish.open();
    driver.join();
    const bool returned = done.wait_for(kDeadline) == std::future_status::ready;
    EXPECT_TRUE(returned) << "unregisterTaskable() waited for a caller that never came back";
    if (!returned) {
        pool.runReady(TaskType::Writer);  // lets it return
    }
    const auto unregisteringThread = unregistering.get_id();
    unregistering.join();
    EXPECT_EQ(flushes, 2);
    EXPECT_EQ(secondRunOn, unregisteringThread);
    EXPECT_EQ(pool.taskableCount(), 1u);
}

TEST_F(ManualPool, StatsCountQueuedTasks) {
    std::atomic<int> runs{0};
    pool.schedule(countingTask(owner, runs, false, TaskType::Reader));
    pool.schedule(countingTask(owner, runs, false, TaskType::Reader, 1h));
    auto s = pool.stats();
    const auto& reader = s.byType[static_cast<std::size_t>(TaskType::Reader)];
    EXPECT_EQ(reader.ready + reader.future, 2u);
    EXPECT_EQ(reader.future, 1u);
    EXPECT_EQ(s.tasks.size(), 2u);
    pool.runReady(TaskType::Reader);
    EXPECT_EQ(pool.stats().byType[static_cast<std::size_t>(TaskType::Reader)].executed, 1u);
}

TEST(ExecutorPoolFactory, BuildsEveryBackendAndDefaultsToWheel) {
    EXPECT_EQ(ExecutorPool::create()->backendName(), "Wheel");
    EXPECT_EQ(ExecutorPool::create(Backend::Classic)->backendName(), "Classic");
    EXPECT_EQ(ExecutorPool::create(Backend::Manual)->backendName(), "Manual");
    EXPECT_THROW(ExecutorPool::create(static_cast<Backend>(42)), std::invalid_argument);
}

TEST(TaskBasics, IdsAreUniqueAndNeverZero) {
    TestOwner owner;
    std::atomic<int> runs{0};
    auto a = countingTask(owner, runs);
    auto b = countingTask(owner, runs);
    EXPECT_NE(a->id(), 0u);
    EXPECT_NE(a->id(), b->id());
    EXPECT_EQ(a->state(), TaskState::Running);
}

TEST(TaskBasics, SnoozeOutsideAPoolSetsTheWakeTimeAndForeverSaturates) {
    TestOwner owner;
    std::atomic<int> runs{0};
    auto t = countingTask(owner, runs);
    t->snooze(kForever);
    EXPECT_EQ(t->wakeTime(), Clock::time_point::max());
    const auto before = Clock::now();
    t->snooze(10s);
    EXPECT_GE(t->wakeTime(), before + 10s);
    t->cancel();
    EXPECT_TRUE(t->isDead());
}

}  // namespace
}  // namespace kvexec::test
