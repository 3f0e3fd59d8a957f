// worker_threads.cc: starting, stopping and joining worker threads
// (setThreadCount and shutdown) for every threaded backend.
#include "executor/common/worker_threads.h"

#include <stdexcept>

#include "executor/observability/pool_metrics.h"
#include "executor/thread_name.h"
#include "executor/worker_identity.h"

namespace kvexec::detail {

void WorkerThreads::resize(TaskType type, std::size_t n, const void* queue,
                           const std::function<bool()>& retarget, const Body& body) {
    MutexLock lock(mutex_);
    if (callerIsWorkerAtOrAbove(queue, n)) {
        throw std::logic_error("kvexec: setThreadCount() would stop the calling worker thread");
    }
    if (!retarget()) {
        return;
    }
    auto& threads = threads_[static_cast<std::size_t>(type)];
    for (std::size_t i = threads.size(); i < n; ++i) {
        start(type, i, queue, body);
    }
    for (std::size_t i = n; i < threads.size(); ++i) {
        threads[i].join();  // a running task finishes its run first
    }
    if (threads.size() > n) {
        threads.resize(n);
    }
}

// The worker's slot is added to the worker view before the thread starts,
// so that stats() shows every worker as soon as setThreadCount() returns.
void WorkerThreads::start(TaskType type, std::size_t index, const void* queue, const Body& body) {
    WorkerSlot* slot =
        metrics_ != nullptr ? &metrics_->addWorker(type, workerThreadName(type, index)) : nullptr;
    threads_[static_cast<std::size_t>(type)].emplace_back([this, type, index, queue, slot, body] {
        setCurrentThreadName(workerThreadName(type, index));
        setCurrentWorker(queue, index);
        body(index, slot);
        if (slot != nullptr) {
            metrics_->removeWorker(*slot);
        }
    });
}

void WorkerThreads::stopAll(const std::function<void()>& stop) {
    MutexLock lock(mutex_);
    stop();
    for (auto& threads : threads_) {
        for (auto& t : threads) {
            t.join();
        }
        threads.clear();
    }
}

}  // namespace kvexec::detail
