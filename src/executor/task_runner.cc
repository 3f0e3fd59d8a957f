// task_runner.cc: the one place where a pool calls Task::run().
#include "executor/task_runner.h"

#include <algorithm>
#include <exception>

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
}  // namespace

const Task* currentTask() noexcept {
    return runningTask;
}

bool runTask(Task& task) {
    Taskable& owner = task.owner();
    const auto start = Clock::now();
    owner.logQueueTime(task, std::max(Clock::duration::zero(), start - task.wakeTime()));

    bool again = false;
    std::exception_ptr error;
    {
        CurrentTaskScope scope(task);
        try {
            again = TaskAccess::run(task);
        } catch (...) {
            error = std::current_exception();
        }
    }
    const auto ran = Clock::now() - start;
    TaskAccess::recordRun(task, ran);
    owner.logRunTime(task, ran);
    if (error) {
        TaskAccess::setState(task, TaskState::Dead);
        owner.onTaskException(task, error);
        return false;
    }
    return again;
}

}  // namespace kvexec::detail
