// The contract's rules 7 and 9: cancel() and unregisterTaskable(), for every
// threaded backend.
#include <stdexcept>

#include "executor/contract_fixture.h"

namespace kvexec::test {
namespace {

template <class B>
class CancelRules : public ExecutorContract<B> {};
TYPED_TEST_SUITE(CancelRules, AllBackends, BackendNames);

TYPED_TEST(CancelRules, Rule7_ACancelledTaskDoesNotStartAgain) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs, true, TaskType::NonIO, 30ms);
    this->pool->schedule(t);
    EXPECT_TRUE(this->pool->cancel(t->id()));
    EXPECT_TRUE(t->isDead());
    this->pool->cancel(t->id());        // twice is harmless
    std::this_thread::sleep_for(50ms);  // past its wake time
    this->fence();
    EXPECT_EQ(runs, 0);
    EXPECT_FALSE(this->pool->cancel(987654321));
}

TYPED_TEST(CancelRules, Rule7_CancelWithRemoveDropsTheReferenceAtOnce) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    std::weak_ptr<Task> weak = t;
    this->pool->schedule(std::move(t));
    EXPECT_TRUE(this->pool->cancel(weak.lock()->id(), true));
    EXPECT_TRUE(weak.expired()) << "remove=true must drop the pool's reference before returning";
    EXPECT_EQ(this->pool->stats().tasks.size(), 0u);
}

TYPED_TEST(CancelRules, Rule7_CancelDuringARunLetsThatRunFinish) {
    Gate inRun, finishRun;
    std::atomic<int> runs{0};
    std::atomic<bool> finished{false};
    auto t = this->task([&](LambdaTask&) {
        runs.fetch_add(1);
        inRun.open();
        finishRun.wait();
        finished = true;
        return true;  // would run again, but it was cancelled
    });
    std::weak_ptr<Task> weak = t;
    const auto id = this->pool->schedule(std::move(t));
    ASSERT_TRUE(inRun.wait());
    EXPECT_TRUE(this->pool->cancel(id, true));
    EXPECT_FALSE(weak.expired()) << "a running task is not dropped under its run";
    finishRun.open();
    ASSERT_TRUE(waitFor([&] { return weak.expired(); }));
    EXPECT_TRUE(finished);
    EXPECT_EQ(runs, 1);
}

TYPED_TEST(CancelRules, Rule7_TaskCancelActsThroughItsPool) {
    std::atomic<int> runs{0};
    auto t = countingTask(this->owner, runs, false, TaskType::NonIO, 20ms);
    this->pool->schedule(t);
    t->cancel();
    EXPECT_TRUE(t->isDead());
    std::this_thread::sleep_for(40ms);  // past its wake time
    this->fence();
    EXPECT_EQ(runs, 0);
}

template <class B>
class UnregisterRules : public ExecutorContract<B> {};
TYPED_TEST_SUITE(UnregisterRules, AllBackends, BackendNames);

TYPED_TEST(UnregisterRules, Rule9_UnregisterCancelsQueuedTasksAndReleasesThem) {
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    std::atomic<int> runs{0};
    std::vector<std::weak_ptr<Task>> weak;
    for (int i = 0; i < 100; ++i) {
        auto t = sleeperTask(bucket, runs, static_cast<TaskType>(i % 4));
        weak.push_back(t);
        this->pool->schedule(std::move(t));
    }
    this->pool->unregisterTaskable(bucket, false);
    for (auto& w : weak) {
        EXPECT_TRUE(w.expired());
    }
    EXPECT_EQ(runs, 0);
    EXPECT_EQ(this->pool->taskableCount(), 1u);
    EXPECT_THROW(this->pool->schedule(sleeperTask(bucket, runs)), std::logic_error);
}

TYPED_TEST(UnregisterRules, Rule9_UnregisterWaitsForARunningTask) {
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    Gate inRun;
    std::atomic<bool> runEnded{false};
    this->pool->schedule(makeTask(bucket, [&](LambdaTask&) {
        inRun.open();
        std::this_thread::sleep_for(50ms);  // long enough that unregister must wait
        runEnded = true;
        return true;
    }));
    ASSERT_TRUE(inRun.wait());
    this->pool->unregisterTaskable(bucket, false);
    EXPECT_TRUE(runEnded) << "unregister returned while a task of the owner was running";
}

TYPED_TEST(UnregisterRules, Rule9_BlockShutdownTasksRunUntilTheyReturnFalse) {
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    std::atomic<int> runs{0};
    // Snoozed forever: unregister must wake it, and it needs three runs.
    auto t = makeTask(
        bucket, [&](LambdaTask&) { return runs.fetch_add(1) + 1 < 3; }, TaskType::Writer, 0,
        kForever,
        /*blockShutdown=*/true);
    std::weak_ptr<Task> weak = t;
    this->pool->schedule(std::move(t));
    this->pool->unregisterTaskable(bucket, false);
    EXPECT_EQ(runs, 3);
    EXPECT_TRUE(weak.expired());
}

TYPED_TEST(UnregisterRules, Rule9_ABlockShutdownTaskIsNotPutToSleepWhileItsOwnerUnregisters) {
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    std::atomic<int> runs{0};
    // "More to flush later": snoozes forever twice before it is done.
    auto t = makeTask(
        bucket,
        [&](LambdaTask& self) {
            if (runs.fetch_add(1) + 1 < 3) {
                self.snooze(kForever);
                return true;
            }
            return false;
        },
        TaskType::Writer, 0, kForever, /*blockShutdown=*/true);
    const auto id = this->pool->schedule(t);
    Gate unregistered;
    std::thread unregisterer([&] {
        this->pool->unregisterTaskable(bucket, false);
        unregistered.open();
    });
    const bool returned = unregistered.wait(10s);
    while (!unregistered.wait(100ms)) {
        this->pool->wake(id);  // only on failure: let the thread finish
    }
    unregisterer.join();
    EXPECT_TRUE(returned) << "unregister waited for a blockShutdown task that snoozed forever";
    EXPECT_EQ(runs, 3);
}

// Blocks the thread that drops it until the test lets go: a task holding
// one stops unregisterTaskable() midway, at the moment it releases that task.
class HoldOnRelease {
  public:
    HoldOnRelease(Gate& releasing, Gate& letGo) : releasing_(releasing), letGo_(letGo) {}
    HoldOnRelease(const HoldOnRelease&) = delete;
    HoldOnRelease& operator=(const HoldOnRelease&) = delete;
    ~HoldOnRelease() {
        releasing_.open();
        letGo_.wait();
    }

  private:
    Gate& releasing_;
    Gate& letGo_;
};

// The race behind a crash of the Wheel backend: unregister has begun (the
// owner is unregistering) but has not yet reached a blockShutdown task that
// sits snoozed in the timer, and another thread snoozes it. Rule 9 makes it
// due at once instead; it must then leave the timer, or its old deadline
// fires later and queues it a second time: it ran on two workers at once
// and its ready list was corrupted.
TYPED_TEST(UnregisterRules, Rule9_OutsideSnoozeDuringUnregisterNeverQueuesATaskTwice) {
    constexpr auto kArmedFor = 500ms;  // the time the test has to snooze it while armed
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    this->pool->setThreadCount(TaskType::NonIO, 2);  // a second worker to run it twice
    Gate releasing, letGo;
    // Tasks that hold unregistering up once it drops them, until one sits in
    // the Wheel's shard 0 (id % 8 == 0), the first shard it visits.
    for (bool inFirstShard = false; !inFirstShard;) {
        auto hold = std::make_shared<HoldOnRelease>(releasing, letGo);
        const TaskId held = this->pool->schedule(makeTask(
            bucket, [hold](LambdaTask&) { return false; }, TaskType::Reader, 0, kForever));
        inFirstShard = held % 8 == 0;
    }
    std::atomic<int> inRun{0}, overlaps{0}, runs{0};
    std::atomic<bool> finish{false};
    TaskPtr t;
    do {  // on Wheel, outside the first shard unregister visits (id % 8 == 0)
        t = makeTask(
            bucket,
            [&](LambdaTask&) {
                if (inRun.fetch_add(1) != 0) {
                    overlaps.fetch_add(1);
                }
                runs.fetch_add(1);
                std::this_thread::sleep_for(1ms);  // mostly on a worker when queued again
                inRun.fetch_sub(1);
                return !finish.load();
            },
            TaskType::NonIO, 0, kArmedFor, /*blockShutdown=*/true);
    } while (t->id() % 8 == 0);
    std::weak_ptr<Task> weak = t;
    const auto id = this->pool->schedule(std::move(t));
    // Runs once the timer has passed the task's original deadline.
    Gate pastOldDeadline;
    this->pool->schedule(this->task(
        [&](LambdaTask&) {
            pastOldDeadline.open();
            return false;
        },
        TaskType::AuxIO, 0, kArmedFor + 20ms));

    std::thread unregisterer([&] { this->pool->unregisterTaskable(bucket, false); });
    const bool midway = releasing.wait();
    const bool armedWhenSnoozed = runs.load() == 0;
    this->pool->snooze(id, 10s);  // rule 9: due at once instead of in 10 s
    const bool ranAfterSnooze = waitFor([&] { return runs.load() > 0; });
    const bool timerPassed = pastOldDeadline.wait();
    finish = true;
    letGo.open();
    unregisterer.join();

    EXPECT_TRUE(midway) << "unregister never released a task";
    // Classic wakes every blockShutdown task before it releases anything, so
    // there the snooze finds the task already due; Wheel visits shard by
    // shard and must find it still armed, or this test proves nothing.
    if (TypeParam::value == Backend::Wheel) {
        EXPECT_TRUE(armedWhenSnoozed) << "the task ran before the snooze: kArmedFor is too short";
    }
    EXPECT_TRUE(ranAfterSnooze) << "a snooze put a blockShutdown task to sleep during unregister";
    EXPECT_TRUE(timerPassed) << "the task's original deadline never passed";
    EXPECT_EQ(overlaps.load(), 0) << "the task ran on two threads at once";
    EXPECT_TRUE(weak.expired());
}

TYPED_TEST(UnregisterRules, Rule9_ForceCancelsBlockShutdownTasksToo) {
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    std::atomic<int> runs{0};
    auto t = makeTask(
        bucket, [&](LambdaTask&) { return runs.fetch_add(1) >= 0; }, TaskType::Writer, 0, kForever,
        true);
    std::weak_ptr<Task> weak = t;
    this->pool->schedule(std::move(t));
    this->pool->unregisterTaskable(bucket, true);
    EXPECT_EQ(runs, 0);
    EXPECT_TRUE(weak.expired());
}

TYPED_TEST(UnregisterRules, Rule9_UnregisterFromAnOwnTaskThrows) {
    TestOwner bucket("bucket-b");
    this->pool->registerTaskable(bucket);
    Gate done;
    std::atomic<bool> threw{false};
    this->pool->schedule(makeTask(bucket, [&](LambdaTask&) {
        try {
            this->pool->unregisterTaskable(bucket, false);
        } catch (const std::logic_error&) {
            threw = true;
        }
        done.open();
        return false;
    }));
    ASSERT_TRUE(done.wait()) << "unregister from its own task deadlocked";
    EXPECT_TRUE(threw);
    this->pool->unregisterTaskable(bucket, false);
}

TYPED_TEST(UnregisterRules, Rule9_UnregisteringAnUnknownOwnerIsIgnored) {
    TestOwner stranger("stranger");
    this->pool->unregisterTaskable(stranger, false);
    EXPECT_EQ(this->pool->taskableCount(), 1u);
}

}  // namespace
}  // namespace kvexec::test
