// The Wheel backend's ready queue (src/executor/wheel/ready_queue.h) and
// idle set (idle_workers.h): a worker pops the best record of every lane
// (priority, then wake time: rule 8 across lanes), the lane bits follow
// the lanes, and a producer wakes a spinning idle worker before sleeping
// ones, then the last worker to go to sleep, then the lowest-indexed
// sleeper; a worker that withdraws from the idle set is owed no unpark,
// one that was taken is.
#include "executor/wheel/ready_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "executor/test_support.h"
#include "executor/wheel/shard.h"
#include "kvexec/executor_pool.h"

namespace kvexec::wheel {
namespace {

using kvexec::test::makeTask;
using kvexec::test::TestOwner;

struct QueueWorld {
    TestOwner owner;
    detail::OwnerState ownerState{1, 1};
    Shard shard;
    std::vector<std::unique_ptr<Record>> records;

    Record& make(int priority, Clock::duration key) {
        records.push_back(std::make_unique<Record>(
            makeTask(
                owner, [](LambdaTask&) { return false; }, TaskType::NonIO, priority),
            ownerState, shard));
        records.back()->key = Clock::time_point(key);
        return *records.back();
    }
};

TEST(ReadyQueue, PopsTheBestHeadOfEveryLane) {
    QueueWorld w;
    ReadyQueue q(4);
    ASSERT_EQ(q.laneCount(), 4u);
    using std::chrono::milliseconds;
    detail::MutexLock lock(w.shard.mutex);
    // Tags are the expected pop order.
    Record& third = w.make(1, milliseconds(30));
    Record& first = w.make(0, milliseconds(50));
    Record& second = w.make(1, milliseconds(10));
    Record& fourth = w.make(5, milliseconds(1));
    q.pushTo(fourth, 0);
    q.pushTo(third, 1);
    q.pushTo(second, 2);
    q.pushTo(first, 3);
    EXPECT_TRUE(q.anyQueued());
    EXPECT_EQ(q.size(), 4u);
    for (Record* expected : {&first, &second, &third, &fourth}) {
        bool more = false;
        EXPECT_EQ(q.pop(more), expected);
        // Every pop empties its lane; `more` says whether another holds work.
        EXPECT_EQ(more, expected != &fourth);
        EXPECT_EQ(expected->loadState(), Record::State::Running);
    }
    bool more = true;
    EXPECT_EQ(q.pop(more), nullptr);
    EXPECT_FALSE(q.anyQueued());
}

TEST(ReadyQueue, ALaneWithMoreRecordsSaysSoAndAnUnlinkEmptiesIt) {
    QueueWorld w;
    ReadyQueue q(2);
    detail::MutexLock lock(w.shard.mutex);
    Record& a = w.make(0, std::chrono::milliseconds(1));
    Record& b = w.make(0, std::chrono::milliseconds(2));
    Record& c = w.make(0, std::chrono::milliseconds(3));
    q.pushTo(a, 1);
    q.pushTo(b, 1);
    q.pushTo(c, 0);
    {
        detail::MutexLock laneLock(q.laneOf(c).mutex);
        q.unlinkLocked(c);
    }
    EXPECT_EQ(c.loadState(), Record::State::Timer);
    bool more = false;
    EXPECT_EQ(q.pop(more), &a);
    EXPECT_TRUE(more);
    EXPECT_EQ(q.pop(more), &b);
    EXPECT_FALSE(more);
    EXPECT_FALSE(q.anyQueued());
}

TEST(IdleWorkers, TakesASpinnerFirstThenTheLowestSleeper) {
    IdleWorkers idle;
    idle.enlist(3, /*spinning=*/false);
    idle.enlist(70, /*spinning=*/true);  // a second word
    idle.enlist(1, /*spinning=*/false);
    EXPECT_EQ(idle.count(), 3u);
    EXPECT_EQ(idle.take(), 70u);
    EXPECT_EQ(idle.take(), 1u);
    EXPECT_EQ(idle.take(), 3u);
    EXPECT_EQ(idle.take(), std::nullopt);
    EXPECT_EQ(idle.count(), 0u);
}

// The last to go to sleep has often not reached its futex yet: it comes
// before lower sleepers, and once taken (or withdrawn) the rest go by index.
TEST(IdleWorkers, TakesTheLastSleeperBeforeTheLowestOne) {
    IdleWorkers idle;
    idle.enlist(1, /*spinning=*/false);
    idle.enlist(2, /*spinning=*/false);
    idle.enlist(3, /*spinning=*/false);
    EXPECT_EQ(idle.take(), 3u);
    EXPECT_EQ(idle.take(), 1u);
    idle.enlist(4, /*spinning=*/false);
    EXPECT_TRUE(idle.withdraw(4, /*spinning=*/false));  // the hint is now stale
    EXPECT_EQ(idle.take(), 2u);
    EXPECT_EQ(idle.take(), std::nullopt);
}

TEST(IdleWorkers, AWithdrawAndATakeNeverBothGetTheWorker) {
    IdleWorkers idle;
    idle.enlist(5, /*spinning=*/true);
    EXPECT_TRUE(idle.withdraw(5, /*spinning=*/true));
    EXPECT_EQ(idle.take(), std::nullopt);
    idle.enlist(5, /*spinning=*/false);
    EXPECT_EQ(idle.take(), 5u);
    EXPECT_FALSE(idle.withdraw(5, /*spinning=*/false));  // taken: owed an unpark
}

// Producers taking while workers enlist and withdraw: each enlisting ends
// with exactly one of the two owning the worker.
TEST(IdleWorkers, EveryEnlistingIsEndedOnceUnderRaces) {
    IdleWorkers idle;
    constexpr std::size_t kWorkers = 8;
    constexpr int kRounds = 20000;
    std::atomic<int> taken{0};
    std::atomic<bool> done{false};
    std::thread producer([&] {
        while (!done.load()) {
            if (idle.take()) {
                taken.fetch_add(1);
            }
        }
    });
    int withdrawn = 0;
    for (int round = 0; round < kRounds; ++round) {
        const std::size_t index = static_cast<std::size_t>(round) % kWorkers;
        const bool spinning = round % 3 == 0;
        idle.enlist(index, spinning);
        if (idle.withdraw(index, spinning)) {
            ++withdrawn;
        }
    }
    done.store(true);
    producer.join();
    EXPECT_EQ(withdrawn + taken.load(), kRounds);
    EXPECT_EQ(idle.count(), 0u);
}

TEST(IdleWorkers, TakeAllTakesSpinnersAndSleepers) {
    IdleWorkers idle;
    idle.enlist(0, /*spinning=*/true);
    idle.enlist(200, /*spinning=*/false);
    std::set<std::size_t> all;
    idle.takeAll([&](std::size_t index) { all.insert(index); });
    EXPECT_EQ(all, (std::set<std::size_t>{0, 200}));
    EXPECT_EQ(idle.count(), 0u);
}

// The idle set has a bit per worker: more workers of one type than it has
// bits is refused with an error, before any thread starts (a throw after
// would destroy running threads and end the process).
TEST(WheelPool, RefusesMoreWorkersOfATypeThanTheIdleSetHolds) {
    PoolConfig config;
    config.readers = ReadyQueue::kMaxWorkers + 1;
    EXPECT_THROW(ExecutorPool::create(Backend::Wheel, config), std::invalid_argument);
    auto pool = ExecutorPool::create(Backend::Wheel);
    EXPECT_THROW(pool->setThreadCount(TaskType::Reader, ReadyQueue::kMaxWorkers + 1),
                 std::invalid_argument);
}

// More lanes than the lane bits hold is refused the same way; the most it
// holds is accepted.
TEST(WheelPool, RefusesMoreReadyLanesThanItsLaneBitsHold) {
    PoolConfig config{1, 1, 1, 1};
    config.wheelReadyLanes = ReadyQueue::kMaxLanes + 1;
    EXPECT_THROW(ExecutorPool::create(Backend::Wheel, config), std::invalid_argument);
    config.wheelReadyLanes = ReadyQueue::kMaxLanes;
    EXPECT_NO_THROW(ExecutorPool::create(Backend::Wheel, config));
}

}  // namespace
}  // namespace kvexec::wheel
