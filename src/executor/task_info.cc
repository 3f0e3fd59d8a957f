// task_info.cc: the TaskInfo rows of PoolStats, built the same way by every backend.
#include "executor/task_info.h"

namespace kvexec::detail {

std::vector<TaskInfo> describeTasks(const std::vector<TaskPtr>& tasks) {
    std::vector<TaskInfo> infos;
    infos.reserve(tasks.size());
    for (const auto& t : tasks) {
        infos.push_back(TaskInfo{t->id(), t->description(), t->owner().name(), t->type(),
                                 t->state(), t->priority(), t->wakeTime(), t->runCount(),
                                 t->lastRuntime(), t->totalRuntime()});
    }
    return infos;
}

}  // namespace kvexec::detail
