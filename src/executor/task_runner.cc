// task_runner.cc: the one place where a pool calls Task::run().
#include "executor/task_runner.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <string>

#include "executor/observability/pool_metrics.h"
#include "executor/task_access.h"
#include "kvexec/taskable.h"

namespace kvexec::detail {

namespace {
thread_local const Task* runningTask = nullptr;

// Restores the previous current task even if run() throws.
class CurrentTaskScope {
  public:
    explicit CurrentTaskScope(const Task& t) : previous_(runningTask) { runningTask = &t; }
    ~CurrentTaskScope() { runningTask = previous_; }
    CurrentTaskScope(const CurrentTaskScope&) = delete;
    CurrentTaskScope& operator=(const CurrentTaskScope&) = delete;

  private:
    const Task* previous_;
};

// Publishes the run in the worker view for as long as it lasts.
class WorkerRunScope {
  public:
    WorkerRunScope(WorkerSlot* slot, const Task& t, const KindMetrics* kind,
                   Clock::time_point start)
        : slot_(slot) {
        if (slot_ != nullptr) {
            slot_->begin(t.id(), kind, start);
        }
    }
    ~WorkerRunScope() {
        if (slot_ != nullptr) {
            slot_->end();
        }
    }
    WorkerRunScope(const WorkerRunScope&) = delete;
    WorkerRunScope& operator=(const WorkerRunScope&) = delete;

  private:
    WorkerSlot* slot_;
};

std::string callingThreadName(const WorkerSlot* slot) {
    if (slot != nullptr) {
        return slot->name();
    }
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    return name;
}

// Calls run(); an exception is returned, not thrown.
bool invokeRun(Task& task, std::exception_ptr& error) {
    CurrentTaskScope scope(task);
    try {
        return TaskAccess::run(task);
    } catch (...) {
        error = std::current_exception();
        return false;
    }
}

void reportSlowRun(Task& task, Clock::duration ran, KindMetrics* kind, const WorkerSlot* slot) {
    if (ran <= task.maxExpectedDuration()) {
        return;
    }
    if (kind != nullptr) {
        kind->slowRuns.fetch_add(1, std::memory_order_relaxed);
    }
    task.owner().onSlowRun(task, ran, callingThreadName(slot));
}
}  // namespace

const Task* currentTask() noexcept {
    return runningTask;
}

bool runTask(Task& task, RunSite site, KindMetrics*& kind) {
    if (site.metrics != nullptr && kind == nullptr) {
        kind = &site.metrics->kindFor(task, site.worker);
    }
    Taskable& owner = task.owner();
    const auto start = Clock::now();
    const auto waited = std::max(Clock::duration::zero(), start - task.wakeTime());
    owner.logQueueTime(task, waited);

    bool again = false;
    std::exception_ptr error;
    {
        WorkerRunScope published(site.worker, task, kind, start);
        again = invokeRun(task, error);
    }
    const auto ran = Clock::now() - start;
    TaskAccess::recordRun(task, ran);
    if (kind != nullptr) {
        kind->queueTime.record(waited);
        kind->runTime.record(ran);
    }
    owner.logRunTime(task, ran);
    reportSlowRun(task, ran, kind, site.worker);
    if (error) {
        TaskAccess::setState(task, TaskState::Dead);
        owner.onTaskException(task, error);
        return false;
    }
    return again;
}

}  // namespace kvexec::detail
