// kvexec/manual_executor_pool.h: a pool with no threads, for deterministic
// tests of code that schedules tasks.
//
// The caller runs tasks, one at a time, on its own thread, with runReady()
// and runNext(). Everything else behaves as in the threaded backends (same
// rules, same ids, same stats), with these differences, by design:
// - threadCount() is 0 for every type; setThreadCount() is accepted and
//   ignored (nothing would run the tasks anyway).
// - unregisterTaskable(t, false) runs t's blockShutdown tasks on the calling
//   thread, as if due now, until they return false (there is no other
//   thread to run them). It waits for other threads only while they hold
//   t's tasks (inside a run, dropping one, or in stats()); a task that
//   another caller's run queues again is run by whichever of the two
//   takes it first, so it never waits for a runReady() that may not come.
//
// Thread safety: any member may be called from any thread; runReady() and
// runNext() run tasks on the calling thread. Calling them from two threads
// at once is safe: a task still never runs on two threads at once.
#pragma once

#include <cstddef>
#include <memory>

#include "kvexec/executor_pool.h"

namespace kvexec {

namespace manual {
class Scheduler;
}

class ManualExecutorPool : public ExecutorPool {
  public:
    ManualExecutorPool();
    ~ManualExecutorPool() override;

    // Runs every task of this type that is due now (and any that become due
    // while doing so), in priority order. Returns how many runs happened.
    std::size_t runReady(TaskType type);
    // Runs the one task of this type with the earliest wake time, even if
    // that is in the future. Returns its id, or 0 if there is none.
    TaskId runNext(TaskType type);

    std::string_view backendName() const override { return "Manual"; }
    void registerTaskable(Taskable&) override;
    void unregisterTaskable(Taskable&, bool force) override;
    std::size_t taskableCount() const override;
    TaskId schedule(TaskPtr task) override;
    bool cancel(TaskId id, bool remove = false) override;
    void wake(TaskId id) override;
    bool wakeAndWait(TaskId id) override;
    void snooze(TaskId id, Clock::duration d) override;
    bool snoozeAndWait(TaskId id, Clock::duration d) override;
    std::size_t threadCount(TaskType) const override { return 0; }
    void setThreadCount(TaskType, std::size_t) override {}
    PoolStats stats() const override;

  private:
    std::unique_ptr<manual::Scheduler> scheduler_;
};

}  // namespace kvexec
