// pool_metrics.cc: the per-pool registry of task kinds and workers.
#include "executor/observability/pool_metrics.h"

#include <algorithm>
#include <tuple>

namespace kvexec {

std::string_view to_string(WorkerState state) {
    return state == WorkerState::Running ? "running" : "idle";
}

}  // namespace kvexec

namespace kvexec::detail {

namespace {
constexpr const char* kOtherKinds = "(other kinds)";

WorkerInfo workerInfoOf(const WorkerSlot& slot, Clock::time_point now) {
    WorkerInfo info;
    info.name = slot.name();
    info.type = slot.type();
    const WorkerSlot::Run run = slot.read();
    if (run.task != 0) {
        info.state = WorkerState::Running;
        info.task = run.task;
        info.taskDescription = run.kind != nullptr ? run.kind->description : std::string();
        info.runningFor = std::max(Clock::duration::zero(), now - run.start);
    }
    return info;
}
}  // namespace

KindMetrics& PoolMetrics::kindFor(const Task& task, WorkerSlot* worker) {
    KindKey key{task.type(), task.description()};  // user code: no lock held
    if (worker != nullptr) {
        KindMetrics* last = worker->lastKind();
        if (last != nullptr && last->type == key.first && last->description == key.second) {
            return *last;
        }
    }
    KindMetrics& kind = findOrAddKind(std::move(key));
    if (worker != nullptr) {
        worker->rememberKind(kind);
    }
    return kind;
}

KindMetrics& PoolMetrics::findOrAddKind(KindKey key) {
    MutexLock lock(mutex_);
    auto it = kinds_.find(key);
    if (it != kinds_.end()) {
        return *it->second;
    }
    // Bound memory when descriptions carry ids (one kind per vBucket...).
    if (kinds_.size() >= kMaxTaskKinds) {
        key.second = kOtherKinds;
        it = kinds_.find(key);
        if (it != kinds_.end()) {
            return *it->second;
        }
    }
    auto metrics = std::make_unique<KindMetrics>(key.first, key.second);
    return *kinds_.emplace(std::move(key), std::move(metrics)).first->second;
}

WorkerSlot& PoolMetrics::addWorker(TaskType type, std::string name) {
    MutexLock lock(mutex_);
    return workers_.emplace_back(type, std::move(name));
}

void PoolMetrics::removeWorker(WorkerSlot& slot) {
    MutexLock lock(mutex_);
    workers_.remove_if([&slot](const WorkerSlot& s) { return &s == &slot; });
}

void PoolMetrics::fill(PoolStats& stats) const {
    const auto now = Clock::now();
    MutexLock lock(mutex_);
    stats.kinds.reserve(kinds_.size());
    for (const auto& [key, k] : kinds_) {
        TaskKindStats s;
        s.description = k->description;
        s.type = k->type;
        s.queueTime = k->queueTime.summary();
        s.runTime = k->runTime.summary();
        s.runs = s.runTime.count;
        s.slowRuns = k->slowRuns.load(std::memory_order_relaxed);
        stats.kinds.push_back(std::move(s));
    }
    stats.workers.reserve(workers_.size());
    for (const auto& slot : workers_) {
        stats.workers.push_back(workerInfoOf(slot, now));
    }
    std::stable_sort(stats.workers.begin(), stats.workers.end(),
                     [](const WorkerInfo& a, const WorkerInfo& b) {
                         return std::tuple(a.type, a.name.size(), std::string_view(a.name)) <
                                std::tuple(b.type, b.name.size(), std::string_view(b.name));
                     });
}

}  // namespace kvexec::detail
