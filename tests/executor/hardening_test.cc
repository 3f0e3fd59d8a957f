// Hardening: bad input at the API and tasks that misbehave or call back
// into their pool, for every threaded backend. Each test pins down one
// defined outcome documented in kvexec/executor_pool.h.
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "executor/contract_fixture.h"

namespace kvexec::test {
namespace {

template <class B>
class Hardening : public ExecutorContract<B> {};
TYPED_TEST_SUITE(Hardening, ThreadedBackends, BackendNames);

// --- bad input ------------------------------------------------------------

TYPED_TEST(Hardening, ScheduleOfANullTaskPtrThrowsInvalidArgument) {
    EXPECT_THROW(this->pool->schedule(nullptr), std::invalid_argument);
    EXPECT_TRUE(this->pool->stats().tasks.empty());
}

TYPED_TEST(Hardening, UnknownIdsAndIdZeroAreIgnored) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    this->pool->schedule(t);
    const TaskId unknown = t->id() + 1'000'000;
    for (const TaskId id : {TaskId{0}, unknown}) {
        EXPECT_FALSE(this->pool->cancel(id));
        EXPECT_FALSE(this->pool->cancel(id, true));
        EXPECT_FALSE(this->pool->wakeAndWait(id));
        EXPECT_FALSE(this->pool->snoozeAndWait(id, 1ms));
        this->pool->wake(id);
        this->pool->snooze(id, 1ms);
    }
    this->fence();
    EXPECT_EQ(runs, 0) << "a call on an unknown id reached a real task";
    EXPECT_EQ(t->state(), TaskState::Snoozed);
}

TYPED_TEST(Hardening, SnoozeByANegativeDurationMakesTheTaskDueNow) {
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    const auto id = this->pool->schedule(t);
    const auto before = Clock::now();
    ASSERT_TRUE(this->pool->snoozeAndWait(id, -std::chrono::hours(1)));
    const auto wakeTime = t->wakeTime();
    ASSERT_TRUE(waitFor([&] { return runs == 1; })) << "not due now";
    EXPECT_GE(wakeTime, before) << "the wake time went into the past";
}

TYPED_TEST(Hardening, SetThreadCountZeroKeepsTasksWaitingUntilThreadsReturn) {
    this->pool->setThreadCount(TaskType::NonIO, 0);
    EXPECT_EQ(this->pool->threadCount(TaskType::NonIO), 0u);
    std::atomic<int> runs{0};
    this->pool->schedule(countingTask(this->owner, runs));
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(runs, 0) << "a task ran with no thread of its type";
    const auto stats = this->pool->stats();
    EXPECT_EQ(stats.byType[static_cast<std::size_t>(TaskType::NonIO)].threads, 0u);
    EXPECT_EQ(stats.tasks.size(), 1u);
    this->pool->setThreadCount(TaskType::NonIO, 1);
    EXPECT_TRUE(waitFor([&] { return runs == 1; }));
}

// --- tasks that misbehave ---------------------------------------------------

TYPED_TEST(Hardening, ATaskThatThrowsIsDeadAndTheNextTaskRunsOnTheSameWorker) {
    auto thrower = this->task([](LambdaTask&) -> bool { throw std::runtime_error("boom"); });
    std::atomic<int> runs{0};
    this->pool->schedule(thrower);
    this->pool->schedule(countingTask(this->owner, runs));
    ASSERT_TRUE(waitFor([&] { return runs == 1 && this->owner.exceptions == 1; }));
    EXPECT_TRUE(thrower->isDead());
    EXPECT_EQ(this->pool->threadCount(TaskType::NonIO), 1u);
}

TYPED_TEST(Hardening, ABusyTaskThatNeverSnoozesDoesNotStarveItsPeersAndStopsWhenCancelled) {
    std::atomic<int> busyStarts{0};
    auto busy = this->task([&](LambdaTask&) {
        busyStarts.fetch_add(1);
        return true;  // again, at once, forever
    });
    const auto busyId = this->pool->schedule(busy);
    ASSERT_TRUE(waitFor([&] { return busyStarts > 10; }));
    std::atomic<int> peerRuns{0};
    this->pool->schedule(countingTask(this->owner, peerRuns));  // same type, priority
    ASSERT_TRUE(waitFor([&] { return peerRuns == 1; })) << "the busy task starved its peer";
    ASSERT_TRUE(this->pool->cancel(busyId));
    const int startsAtCancel = busyStarts;
    this->fence();
    EXPECT_LE(busyStarts, startsAtCancel + 1) << "a cancelled task kept starting";
    EXPECT_TRUE(busy->isDead());
}

// --- tasks that call back into their pool ------------------------------------

TYPED_TEST(Hardening, ATaskMayScheduleAnotherTaskFromItsRun) {
    std::atomic<int> childRuns{0};
    auto child = countingTask(this->owner, childRuns);
    this->pool->schedule(this->task([&](LambdaTask&) {
        this->pool->schedule(child);
        return false;
    }));
    EXPECT_TRUE(waitFor([&] { return childRuns == 1; }));
}

// A task dropped after its last run is destroyed on the worker that ran
// it. That worker is busy until the destructor returns: work scheduled
// meanwhile goes to a worker that is idle. (Here the destructor waits for
// that work, so a pool that handed it to the busy worker would stall.)
TYPED_TEST(Hardening, WorkScheduledWhileATaskIsDestroyedGoesToAnIdleWorker) {
    this->pool->setThreadCount(TaskType::NonIO, 2);
    Gate go;
    Gate destroying;
    Gate otherRan;
    std::atomic<bool> otherRanDuringDestructor{false};
    struct WaitsForOtherOnDestroy {
        WaitsForOtherOnDestroy(Gate& destroying, Gate& otherRan, std::atomic<bool>& sawIt)
            : destroying(destroying), otherRan(otherRan), sawIt(sawIt) {}
        ~WaitsForOtherOnDestroy() {
            destroying.open();
            sawIt = otherRan.wait();
        }
        Gate& destroying;
        Gate& otherRan;
        std::atomic<bool>& sawIt;
    };
    auto waiter =
        std::make_shared<WaitsForOtherOnDestroy>(destroying, otherRan, otherRanDuringDestructor);
    // The run waits for `go`, so that the pool holds the task's last
    // reference by the time it returns.
    this->pool->schedule(this->task([&go, waiter = std::move(waiter)](LambdaTask&) {
        EXPECT_TRUE(go.wait());
        return false;
    }));
    go.open();
    ASSERT_TRUE(destroying.wait()) << "the dropped task was not destroyed";
    this->pool->schedule(this->task([&otherRan](LambdaTask&) {
        otherRan.open();
        return false;
    }));
    ASSERT_TRUE(waitFor([&] { return otherRanDuringDestructor.load(); }))
        << "the task scheduled during the destructor waited for it to end";
}

TYPED_TEST(Hardening, ScheduleOfItselfFromItsRunReturnsItsIdAndDoesNothing) {
    std::atomic<int> runs{0};
    std::atomic<TaskId> returned{0};
    std::weak_ptr<Task> self;
    auto t = this->task([&](LambdaTask&) {
        runs.fetch_add(1);
        returned = this->pool->schedule(self.lock());
        return false;
    });
    self = t;
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return t->isDead() && runs == 1; }));
    this->fence();
    EXPECT_EQ(returned.load(), t->id());
    EXPECT_EQ(runs, 1) << "scheduling itself while running made it run again";
}

TYPED_TEST(Hardening, WakeOfItselfFromItsRunRunsItOnceMore) {
    std::atomic<int> runs{0};
    auto t = this->task([&](LambdaTask& self) {
        if (runs.fetch_add(1) == 0) {
            self.snooze(kForever);
            this->pool->wake(self.id());  // rule 5: not lost, though it snoozed
        } else {
            self.snooze(kForever);
        }
        return true;
    });
    this->pool->schedule(t);
    EXPECT_TRUE(waitFor([&] { return runs == 2; }));
    this->fence();
    EXPECT_EQ(runs, 2);
}

TYPED_TEST(Hardening, CancelOfItselfFromItsRunStopsItEvenIfItReturnsTrue) {
    std::atomic<int> runs{0};
    std::atomic<bool> cancelled{false};
    auto t = this->task([&](LambdaTask& self) {
        runs.fetch_add(1);
        cancelled = this->pool->cancel(self.id());
        return true;
    });
    this->pool->schedule(t);
    ASSERT_TRUE(waitFor([&] { return runs == 1; }));
    this->fence();
    EXPECT_TRUE(cancelled);
    EXPECT_EQ(runs, 1);
    EXPECT_TRUE(t->isDead());
}

TYPED_TEST(Hardening, UnregisterOfItsOwnOwnerFromItsRunThrowsLogicErrorAtOnce) {
    Gate done;
    std::string error;
    this->pool->schedule(this->task([&](LambdaTask&) {
        try {
            this->pool->unregisterTaskable(this->owner, false);
        } catch (const std::logic_error& e) {
            error = e.what();
        }
        done.open();
        return false;
    }));
    ASSERT_TRUE(done.wait()) << "unregisterTaskable from the owner's task deadlocked";
    EXPECT_NE(error.find("would wait for itself"), std::string::npos) << error;
    EXPECT_EQ(this->pool->taskableCount(), 1u) << "the owner was unregistered anyway";
}

TYPED_TEST(Hardening, SetThreadCountThatWouldStopTheCallingWorkerThrowsLogicError) {
    Gate done;
    bool threw = false;
    this->pool->schedule(this->task([&](LambdaTask&) {
        try {
            this->pool->setThreadCount(TaskType::NonIO, 0);
        } catch (const std::logic_error&) {
            threw = true;
        }
        done.open();
        return false;
    }));
    ASSERT_TRUE(done.wait());
    EXPECT_TRUE(threw);
    EXPECT_EQ(this->pool->threadCount(TaskType::NonIO), 1u);
}

TYPED_TEST(Hardening, StatsFromARunWorks) {
    Gate done;
    std::size_t seen = 0;
    this->pool->schedule(this->task([&](LambdaTask&) {
        seen = this->pool->stats().tasks.size();
        done.open();
        return false;
    }));
    ASSERT_TRUE(done.wait());
    EXPECT_GE(seen, 1u);
}

// --- the Wheel's hand-off: races between a task becoming due and its run ----

template <class B>
class WheelHandOff : public ExecutorContract<B> {};
TYPED_TEST_SUITE(WheelHandOff, WheelBackends, BackendNames);

// Tasks that one call makes due together are taken by priority also when
// a worker is idle: none is handed to it before the others are queued, and
// a worker on its way to idle that looks at the queue meanwhile finds the
// highest priority first (rule 8). Here unregistering wakes an owner's
// blockShutdown tasks; `low`, with the lower id, comes first in its shard,
// and ids equal modulo eight put both in one of the Wheel's eight shards.
// (Classic wakes each in a section of its own, so a woken worker may take
// `low` before `high` is queued.)
TYPED_TEST(WheelHandOff, TasksWokenTogetherRunByPriorityOnAnIdleWorker) {
    for (int round = 0; round < 10; ++round) {
        TestOwner other("other");
        this->pool->registerTaskable(other);
        std::mutex m;
        std::vector<int> order;
        const auto blocking = [&](int tag, int priority) {
            auto run = [&m, &order, tag](LambdaTask&) {
                std::lock_guard lock(m);
                order.push_back(tag);
                return false;
            };
            return makeTask(other, run, TaskType::NonIO, priority, kForever,
                            /*blockShutdown=*/true);
        };
        auto low = blocking(1, /*priority=*/5);
        auto high = blocking(0, /*priority=*/0);
        while (high->id() % 8 != low->id() % 8) {
            high = blocking(0, 0);  // the last one made is scheduled
        }
        this->pool->schedule(high);
        this->pool->schedule(low);
        this->pool->unregisterTaskable(other, /*force=*/false);
        EXPECT_EQ(order, (std::vector<int>{0, 1})) << "round " << round;
    }
}

// A snooze after a task became due, before a worker began its run, is
// not lost (rules 1 and 6), also when the record was handed to a sleeping
// worker, which takes a while to wake. The task asks to run again at once
// unless snoozed, so a lost snooze shows as runs without end, and the
// task never comes to rest. At most one run per round may begin after its
// snooze: one whose worker looked before the snooze, which then counts as
// made during that run (rule 4). Each round waits for that run to end
// before the next wake: a wake during it would make it run once more
// whatever the snooze (rule 5), and that run again at once.
TYPED_TEST(WheelHandOff, ASnoozeBeforeTheRunStartsIsNotLost) {
    constexpr int kRounds = 40;
    std::atomic<bool> snoozed{false};
    std::atomic<int> lateRuns{0};
    auto t = this->task(
        [&](LambdaTask&) {
            if (snoozed.load()) {
                ++lateRuns;
            }
            return true;
        },
        TaskType::NonIO, /*priority=*/0, kForever);
    const TaskId id = this->pool->schedule(t);
    for (int round = 0; round < kRounds; ++round) {
        // Long enough for the idle worker to stop spinning and sleep: sets
        // up the case, decides nothing.
        std::this_thread::sleep_for(1ms);
        snoozed = false;
        ASSERT_TRUE(this->pool->wakeAndWait(id));
        ASSERT_TRUE(this->pool->snoozeAndWait(id, std::chrono::hours(1)));
        snoozed = true;
        if (!waitFor([&] { return t->state() == TaskState::Snoozed; })) {
            this->pool->cancel(id);  // its run reads this frame's atomics
            this->fence();
            FAIL() << "round " << round << ": the snoozed task never came to rest, "
                   << lateRuns.load() << " runs began after the snooze";
        }
    }
    const int late = lateRuns.load();
    this->pool->cancel(id);
    this->fence();
    EXPECT_LE(late, kRounds);
}

// The last of wakes and snoozes that reach a record before its worker
// begins the run decides whether it runs (rules 1, 5 and 6): a wake, a
// second wake, a snooze and a wake again must run the task, also when the
// worker is asleep and takes a while to start. The snooze must not leave
// the second wake's mark standing in for the last one: the worker, seeing
// the snooze, would put the task to sleep for an hour.
TYPED_TEST(WheelHandOff, AWakeAfterASnoozeBeforeTheRunStartsIsNotLost) {
    constexpr int kRounds = 40;
    std::atomic<int> runs{0};
    auto t = sleeperTask(this->owner, runs);
    const TaskId id = this->pool->schedule(t);
    for (int round = 0; round < kRounds; ++round) {
        // Long enough for the idle worker to stop spinning and sleep: sets
        // up the case, decides nothing.
        std::this_thread::sleep_for(1ms);
        const int before = runs.load();
        ASSERT_TRUE(this->pool->wakeAndWait(id));
        ASSERT_TRUE(this->pool->wakeAndWait(id));
        ASSERT_TRUE(this->pool->snoozeAndWait(id, std::chrono::hours(1)));
        ASSERT_TRUE(this->pool->wakeAndWait(id));
        ASSERT_TRUE(waitFor([&] { return runs.load() > before; }))
            << "round " << round << ": the last wake was lost";
        // The task sleeps (forever) once its runs are over.
        ASSERT_TRUE(waitFor([&] { return t->state() == TaskState::Snoozed; })) << "round " << round;
    }
    this->retireOwner();  // no run may read `runs` after this frame
}

}  // namespace
}  // namespace kvexec::test
