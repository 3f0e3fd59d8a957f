// worker_identity.cc: which queue and index the calling worker serves (setThreadCount check).
#include "executor/worker_identity.h"

namespace kvexec::detail {

namespace {
thread_local const void* workerQueue = nullptr;
thread_local std::size_t workerIndex = 0;
}  // namespace

void setCurrentWorker(const void* queue, std::size_t index) noexcept {
    workerQueue = queue;
    workerIndex = index;
}

bool callerIsWorkerAtOrAbove(const void* queue, std::size_t n) noexcept {
    return workerQueue == queue && workerIndex >= n;
}

}  // namespace kvexec::detail
