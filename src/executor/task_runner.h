// task_runner.h: runs one Task on the calling thread, the same way for every
// backend: queue-time and run-time hooks, run accounting, exceptions.
//
// Thread safety: runTask() may be called from any thread, holding none of
// the pool's locks (it calls user code); the caller guarantees that the task
// is not running anywhere else.
#pragma once

#include "kvexec/task.h"

namespace kvexec::detail {

// Runs task.run() and returns its result; false if it threw (the task is
// then Dead and Taskable::onTaskException has been called).
bool runTask(Task& task);

// The task whose run() is executing on this thread, or null.
const Task* currentTask() noexcept;

}  // namespace kvexec::detail
