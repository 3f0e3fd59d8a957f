// classic_pool.h: ExecutorPool over the Classic ("CB3") scheduler with
// worker threads. See scheduler.h for the design and locking rules.
#pragma once

#include "executor/classic/scheduler.h"
#include "kvexec/executor_pool.h"

namespace kvexec::classic {

class ClassicPool final : public ExecutorPool {
  public:
    explicit ClassicPool(const PoolConfig& config) : scheduler_(config) {}
    ~ClassicPool() override { scheduler_.shutdown(); }

    std::string_view backendName() const override { return "Classic"; }
    void registerTaskable(Taskable& t) override { scheduler_.registerTaskable(t); }
    void unregisterTaskable(Taskable& t, bool force) override {
        scheduler_.unregisterTaskable(t, force);
    }
    std::size_t taskableCount() const override { return scheduler_.taskableCount(); }
    TaskId schedule(TaskPtr task) override { return scheduler_.schedule(std::move(task)); }
    bool cancel(TaskId id, bool remove) override { return scheduler_.cancel(id, remove); }
    void wake(TaskId id) override { scheduler_.wake(id); }
    bool wakeAndWait(TaskId id) override { return scheduler_.wake(id); }
    void snooze(TaskId id, Clock::duration d) override { scheduler_.snooze(id, d); }
    bool snoozeAndWait(TaskId id, Clock::duration d) override { return scheduler_.snooze(id, d); }
    std::size_t threadCount(TaskType type) const override { return scheduler_.threadCount(type); }
    void setThreadCount(TaskType type, std::size_t n) override {
        scheduler_.setThreadCount(type, n);
    }
    PoolStats stats() const override { return scheduler_.stats(); }

  private:
    Scheduler scheduler_;
};

}  // namespace kvexec::classic
