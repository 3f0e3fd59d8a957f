// The contract's rules 1, 2, 4 and 8: scheduling, owners, run results and
// priority order, for every threaded backend.
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "executor/contract_fixture.h"

namespace kvexec::test {
namespace {

template <class B>
class ScheduleRules : public ExecutorContract<B> {};
TYPED_TEST_SUITE(ScheduleRules, AllBackends, BackendNames);

TYPED_TEST(ScheduleRules, Rule1_ScheduleReturnsIdAndRunsOnThreadOfItsType) {
    Gate ran;
    std::atomic<bool> onWriterThread{false};
    auto t = this->task(
        [&](LambdaTask&) {
            char name[16] = {};
            pthread_getname_np(pthread_self(), name, sizeof name);
            onWriterThread = std::string(name).starts_with("Writer_worker_");
            ran.open();
            return false;
        },
        TaskType::Writer);
    EXPECT_EQ(this->pool->schedule(t), t->id());
    EXPECT_NE(t->id(), 0u);
    ASSERT_TRUE(ran.wait());
    EXPECT_TRUE(onWriterThread);
}

TYPED_TEST(ScheduleRules, Rule1_RunsNotBeforeItsWakeTime) {
    std::atomic<Clock::rep> ranAt{0};
    Gate ran;
    const auto sleep = 50ms;
    auto t = this->task(
        [&](LambdaTask&) {
            ranAt = Clock::now().time_since_epoch().count();
            ran.open();
            return false;
        },
        TaskType::NonIO, 0, sleep);
    const auto wakeTime = t->wakeTime();
    this->pool->schedule(t);
    EXPECT_EQ(t->state(), TaskState::Snoozed);
    ASSERT_TRUE(ran.wait());
    EXPECT_GE(Clock::time_point(Clock::duration(ranAt.load())), wakeTime);
}

TYPED_TEST(ScheduleRules, Rule1_SchedulingAHeldLiveTaskDoesNothing) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    const auto id = this->pool->schedule(t);
    EXPECT_EQ(this->pool->schedule(t), id);
    EXPECT_EQ(this->pool->stats().tasks.size(), 1u);
    this->fence();
    EXPECT_EQ(runs, 0) << "a task snoozed forever must not run because it was scheduled twice";
}

TYPED_TEST(ScheduleRules, Rule1_SchedulingADeadTaskRunsItAgain) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs);
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return runs == 1 && t.use_count() == 1; }));
    EXPECT_TRUE(t->isDead());
    EXPECT_EQ(this->pool->schedule(t), t->id());
    ASSERT_TRUE(waitFor([&] { return runs == 2; }));
}

TYPED_TEST(ScheduleRules, Rule2_SchedulingForAnUnregisteredOwnerThrows) {
    TestOwner stranger("stranger");
    std::atomic<int> runs{0};
    auto t = countingTask(stranger, runs);
    EXPECT_THROW(this->pool->schedule(t), std::logic_error);
    EXPECT_EQ(t.use_count(), 1) << "the pool must not keep a rejected task";
    this->fence();
    EXPECT_EQ(runs, 0);
}

TYPED_TEST(ScheduleRules, Rule2_SchedulingANullTaskThrowsInvalidArgument) {
    EXPECT_THROW(this->pool->schedule(nullptr), std::invalid_argument);
}

TYPED_TEST(ScheduleRules, Rule4_ReturningFalseMakesTheTaskDeadAndDropsIt) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs, false);
    std::weak_ptr<Task> weak = t;
    this->pool->schedule(std::move(t));
    ASSERT_TRUE(waitFor([&] { return weak.expired(); })) << "pool kept a finished task";
    EXPECT_EQ(runs, 1);
}

TYPED_TEST(ScheduleRules, Rule4_ReturningTrueWithoutSnoozeRunsAgainSoon) {
    std::atomic<int> runs{0};
    auto t = this->task([&](LambdaTask&) { return runs.fetch_add(1) + 1 < 5; });
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return runs == 5 && t->isDead(); }));
    EXPECT_EQ(t->runCount(), 5u);
}

TYPED_TEST(ScheduleRules, Rule4_SnoozeInRunDelaysTheNextRun) {
    std::atomic<int> runs{0};
    std::atomic<Clock::rep> secondRunAt{0};
    std::atomic<Clock::rep> snoozedUntil{0};
    auto t = this->task([&](LambdaTask& self) {
        if (runs.fetch_add(1) == 0) {
            self.snooze(30ms);
            snoozedUntil = self.wakeTime().time_since_epoch().count();
            return true;
        }
        secondRunAt = Clock::now().time_since_epoch().count();
        return false;
    });
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return runs == 2; }));
    EXPECT_GE(secondRunAt.load(), snoozedUntil.load());
}

TYPED_TEST(ScheduleRules, Rule8_ReadyTasksRunByPriorityThenWakeTime) {
    Gate blockerStarted, release;
    std::mutex m;
    std::vector<int> order;
    // Occupy the single NonIO worker so that the others queue up as ready.
    this->pool->schedule(this->task([&](LambdaTask&) {
        blockerStarted.open();
        release.wait();
        return false;
    }));
    ASSERT_TRUE(blockerStarted.wait());
    const std::vector<int> priorities{5, 1, 3, 1, 0, 5};
    std::vector<TaskPtr> tasks;
    for (std::size_t i = 0; i < priorities.size(); ++i) {
        const int tag = static_cast<int>(i);
        tasks.push_back(this->task(
            [&, tag](LambdaTask&) {
                std::lock_guard lock(m);
                order.push_back(tag);
                return false;
            },
            TaskType::NonIO, priorities[i]));
        this->pool->schedule(tasks.back());
        std::this_thread::sleep_for(1ms);  // distinct wake times, not a wait
    }
    release.open();
    ASSERT_TRUE(waitFor([&] {
        std::lock_guard lock(m);
        return order.size() == priorities.size();
    }));
    EXPECT_EQ(order, (std::vector<int>{4, 1, 3, 2, 0, 5}));
}

}  // namespace
}  // namespace kvexec::test
