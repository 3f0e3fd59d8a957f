// contract_fixture.h: the fixture of the typed contract suite: a pool of
// the backend under test with one worker per type (so that "a fence task
// has run" proves what ran before it), and one registered owner.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "executor/backends.h"
#include "executor/test_support.h"

namespace kvexec::test {

template <class B>
class ExecutorContract : public ::testing::Test {
  protected:
    void SetUp() override {
        pool = ExecutorPool::create(B::value, PoolConfig{1, 1, 1, 1});
        pool->registerTaskable(owner);
    }
    void TearDown() override {
        if (pool) {
            pool->unregisterTaskable(owner, true);
        }
    }

    // Schedules a task of `type` and waits until it has run. With one worker
    // per type, every task of that type that was due before it has been
    // taken by then.
    void fence(TaskType type = TaskType::NonIO) {
        Gate ran;
        pool->schedule(makeTask(
            owner,
            [&ran](LambdaTask&) {
                ran.open();
                return false;
            },
            type, /*priority=*/1000));
        ASSERT_TRUE(ran.wait()) << "fence task did not run";
    }

    TaskPtr task(LambdaTask::Fn fn, TaskType type = TaskType::NonIO, int priority = 0,
                 Clock::duration sleep = Clock::duration::zero(), bool blockShutdown = false) {
        return makeTask(owner, std::move(fn), type, priority, sleep, blockShutdown);
    }

    TestOwner owner;  // declared first: outlives the pool
    std::unique_ptr<ExecutorPool> pool;
};

}  // namespace kvexec::test
