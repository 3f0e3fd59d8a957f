// contract_fixture.h: the fixture of the typed contract suite: a pool of
// the backend under test with one worker per type (so that "a fence task
// has run" proves what ran before it), and one registered owner. The
// Manual backend has no threads: a ManualDriver plays its workers.
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>

#include <array>
#include <atomic>
#include <memory>
#include <thread>

#include "executor/backends.h"
#include "executor/test_support.h"
#include "kvexec/manual_executor_pool.h"

namespace kvexec::test {

// Drives a ManualExecutorPool by hand the way a threaded pool's workers
// would: one thread per type, named as worker 0 of that type, that runs
// what is due (runReady) and looks again every millisecond when nothing was.
class ManualDriver {
  public:
    explicit ManualDriver(ManualExecutorPool& pool) {
        for (std::size_t i = 0; i < kTaskTypeCount; ++i) {
            threads_[i] = std::thread([this, &pool, type = static_cast<TaskType>(i)] {
                const std::string name = std::string(to_string(type)) + "_worker_0";
                pthread_setname_np(pthread_self(), name.c_str());
                while (!stop_.load()) {
                    if (pool.runReady(type) == 0) {
                        std::this_thread::sleep_for(1ms);
                    }
                }
            });
        }
    }
    ~ManualDriver() {
        stop_ = true;
        for (auto& t : threads_) {
            t.join();
        }
    }
    ManualDriver(const ManualDriver&) = delete;
    ManualDriver& operator=(const ManualDriver&) = delete;

  private:
    std::atomic<bool> stop_{false};
    std::array<std::thread, kTaskTypeCount> threads_;
};

template <class B>
class ExecutorContract : public ::testing::Test {
  protected:
    void SetUp() override {
        pool = makePool<B>(PoolConfig{1, 1, 1, 1});
        if (auto* manual = dynamic_cast<ManualExecutorPool*>(pool.get())) {
            driver = std::make_unique<ManualDriver>(*manual);
        }
        pool->registerTaskable(owner);
    }
    void TearDown() override {
        retireOwner();
        destroyPool();
    }
    // Unregisters the fixture's owner, which returns once none of its tasks
    // is queued or running (rule 9). A test whose tasks may still be woken
    // when its body ends calls it before the counters those tasks touch go
    // out of scope.
    void retireOwner() {
        if (pool && !ownerRetired) {
            pool->unregisterTaskable(owner, true);
            ownerRetired = true;
        }
    }
    // Stops the driver (if any), then destroys the pool.
    void destroyPool() {
        driver.reset();
        pool.reset();
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
    std::unique_ptr<ManualDriver> driver;  // Manual backend only
    bool ownerRetired = false;
};

}  // namespace kvexec::test
