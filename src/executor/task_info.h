// task_info.h: the TaskInfo rows of PoolStats, built the same way by every
// backend. Calls user code (description(), name()): hold no pool lock.
#pragma once

#include <vector>

#include "kvexec/executor_pool.h"

namespace kvexec::detail {

std::vector<TaskInfo> describeTasks(const std::vector<TaskPtr>& tasks);

}  // namespace kvexec::detail
