// task_runner.h: runs one Task on the calling thread, the same way for every
// backend: queue-time and run-time hooks, run accounting, exceptions, slow
// runs, and (when the pool records metrics) the kind's histograms and the
// worker view. See observability/pool_metrics.h for what a backend passes.
//
// Thread safety: runTask() may be called from any thread, holding none of
// the pool's locks (it calls user code); the caller guarantees that the task
// is not running anywhere else, and that `kind` is not used concurrently.
#pragma once

#include "kvexec/task.h"

namespace kvexec::detail {

class PoolMetrics;
class WorkerSlot;
struct KindMetrics;

// Where a run happens: the pool's metrics (null: record nothing) and the
// calling worker's slot in the worker view (null: not a pool worker).
struct RunSite {
    PoolMetrics* metrics = nullptr;
    WorkerSlot* worker = nullptr;
};

// Runs task.run() and returns its result; false if it threw (the task is
// then Dead and Taskable::onTaskException has been called). `kind` is the
// backend's per-task cache of the task's kind: null on the first run
// (resolved here), reused after.
bool runTask(Task& task, RunSite site, KindMetrics*& kind);

// The task whose run() is executing on this thread, or null.
const Task* currentTask() noexcept;

}  // namespace kvexec::detail
