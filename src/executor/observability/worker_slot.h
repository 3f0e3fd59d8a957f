// worker_slot.h: one worker thread's entry in the worker view: its name,
// type, and the run in progress (task id, kind, start time).
//
// Thread safety: begin()/end() are called only by the worker thread that
// owns the slot; read() from any thread. The three fields of a run are
// published as a seqlock over atomics (writer: sequence odd, fields,
// sequence even), so a reader never mixes two runs and never blocks the
// writer. Memory ordering: the writer's release fence after the odd store
// and release store of the even one pair with the reader's acquire loads.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "kvexec/task.h"

namespace kvexec::detail {

struct KindMetrics;

class WorkerSlot {
  public:
    WorkerSlot(TaskType type, std::string name) : type_(type), name_(std::move(name)) {}

    struct Run {
        TaskId task = 0;  // 0: idle
        const KindMetrics* kind = nullptr;
        Clock::time_point start{};
    };

    void begin(TaskId task, const KindMetrics* kind, Clock::time_point start) noexcept {
        publish(task, kind, start.time_since_epoch().count());
    }
    void end() noexcept { publish(0, nullptr, 0); }
    // The run in progress; Run{} when idle. Retries while a write is in
    // progress (a few times at most: writes are a handful of stores).
    Run read() const noexcept;

    TaskType type() const noexcept { return type_; }
    const std::string& name() const noexcept { return name_; }

    // The kind this worker resolved last (PoolMetrics::kindFor): a worker
    // running one kind of task after another, one-shot tasks of one kind
    // above all, finds it here instead of under the registry's mutex.
    // Owner thread only.
    KindMetrics* lastKind() const noexcept { return lastKind_; }
    void rememberKind(KindMetrics& kind) noexcept { lastKind_ = &kind; }

  private:
    void publish(TaskId task, const KindMetrics* kind, Clock::rep start) noexcept;

    const TaskType type_;
    const std::string name_;
    std::atomic<std::uint32_t> seq_{0};
    std::atomic<TaskId> task_{0};
    std::atomic<const KindMetrics*> kind_{nullptr};
    std::atomic<Clock::rep> start_{0};
    KindMetrics* lastKind_ = nullptr;
};

}  // namespace kvexec::detail
