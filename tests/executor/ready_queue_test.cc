// The Wheel backend's ready queue (src/executor/wheel/ready_queue.h): which
// idle worker a producer wakes. One that spins comes first: waking it is a
// store, where a sleeper costs a futex wake and the time until its vCPU
// runs again; within each group the most recently idle comes first.
#include "executor/wheel/ready_queue.h"

#include <gtest/gtest.h>

namespace kvexec::wheel {
namespace {

TEST(ReadyQueue, TakesASpinningIdleWorkerBeforeSleepingOnes) {
    ReadyQueue q;
    detail::MutexLock lock(q.mutex);
    Parker& first = q.parkerLocked(0);
    Parker& spinner = q.parkerLocked(1);
    Parker& last = q.parkerLocked(2);
    q.enlistIdleLocked(first, /*spinning=*/false);
    q.enlistIdleLocked(spinner, /*spinning=*/true);
    q.enlistIdleLocked(last, /*spinning=*/false);
    EXPECT_EQ(q.idleLocked(), 3u);
    EXPECT_EQ(q.takeIdleLocked(), &spinner);
    EXPECT_EQ(q.takeIdleLocked(), &last);
    EXPECT_EQ(q.takeIdleLocked(), &first);
    EXPECT_EQ(q.takeIdleLocked(), nullptr);
    EXPECT_EQ(q.idleLocked(), 0u);
}

TEST(ReadyQueue, TakeAllIdleTakesSpinnersAndSleepers) {
    ReadyQueue q;
    detail::MutexLock lock(q.mutex);
    q.enlistIdleLocked(q.parkerLocked(0), /*spinning=*/true);
    q.enlistIdleLocked(q.parkerLocked(1), /*spinning=*/false);
    EXPECT_EQ(q.takeAllIdleLocked().size(), 2u);
    EXPECT_EQ(q.idleLocked(), 0u);
}

}  // namespace
}  // namespace kvexec::wheel
