// The contract's rules 5 and 6: wake() and snooze(), for every threaded
// backend, including a wake that arrives while the task runs.
#include "executor/contract_fixture.h"

namespace kvexec::test {
namespace {

template <class B>
class WakeSnoozeRules : public ExecutorContract<B> {};
TYPED_TEST_SUITE(WakeSnoozeRules, AllBackends, BackendNames);

TYPED_TEST(WakeSnoozeRules, Rule5_WakeRunsASnoozedTaskNow) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    this->pool->schedule(t);
    this->pool->wake(t->id());
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
    EXPECT_TRUE(this->pool->wakeAndWait(t->id()));
    ASSERT_TRUE(waitFor([&] { return runs == 2; }));
    ASSERT_TRUE(waitFor([&] { return t->state() == TaskState::Snoozed; }));
}

TYPED_TEST(WakeSnoozeRules, Rule5_AWakeDuringRunIsNeverLost) {
    Gate inFirstRun, letFirstRunEnd;
    std::atomic<int> runs{0};
    auto t = this->task(
        [&](LambdaTask& self) {
            if (runs.fetch_add(1) == 0) {
                inFirstRun.open();
                letFirstRunEnd.wait();
            }
            self.snooze(kForever);  // the run snoozes, yet the wake wins
            return true;
        },
        TaskType::NonIO, 0, kForever);
    this->pool->schedule(t);
    this->pool->wake(t->id());
    ASSERT_TRUE(inFirstRun.wait());
    this->pool->wake(t->id());  // arrives while run() executes
    letFirstRunEnd.open();
    ASSERT_TRUE(waitFor([&] { return runs == 2; })) << "the wake during run() was lost";
    this->fence();
    EXPECT_EQ(runs, 2) << "one wake, one extra run";
}

TYPED_TEST(WakeSnoozeRules, Rule5_UnknownAndDeadIdsAreIgnored) {
    EXPECT_FALSE(this->pool->wakeAndWait(987654321));
    this->pool->wake(987654321);
    this->pool->wake(0);
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    this->pool->schedule(t);
    this->pool->cancel(t->id());
    EXPECT_FALSE(this->pool->wakeAndWait(t->id()));
    this->fence();
    EXPECT_EQ(runs, 0);
}

TYPED_TEST(WakeSnoozeRules, Rule6_SnoozeCanMoveAWakeTimeEarlier) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs, false, TaskType::NonIO, 1h);
    this->pool->schedule(t);
    EXPECT_TRUE(this->pool->snoozeAndWait(t->id(), 10ms));
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
}

TYPED_TEST(WakeSnoozeRules, Rule6_SnoozeCanMoveAWakeTimeLater) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs, false, TaskType::NonIO, 20ms);
    this->pool->schedule(t);
    this->pool->snooze(t->id(), 1h);
    EXPECT_GT(t->wakeTime(), Clock::now() + 59min);
    std::this_thread::sleep_for(60ms);  // past the old wake time; not a wait for the result
    this->fence();
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(t->state(), TaskState::Snoozed);
}

TYPED_TEST(WakeSnoozeRules, Rule6_TaskSnoozeFromAnotherThreadMovesTheQueuedTask) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs, false, TaskType::NonIO, 1h);
    this->pool->schedule(t);
    t->snooze(5ms);
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
}

TYPED_TEST(WakeSnoozeRules, Rule6_SnoozeNeverRevivesACancelledTask) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    this->pool->schedule(t);
    EXPECT_TRUE(this->pool->cancel(t->id()));
    EXPECT_FALSE(this->pool->snoozeAndWait(t->id(), 0ms));
    t->snooze(0ms);
    this->fence();
    EXPECT_EQ(runs, 0);
    EXPECT_TRUE(t->isDead());
    EXPECT_FALSE(this->pool->snoozeAndWait(424242, 0ms));
}

}  // namespace
}  // namespace kvexec::test
