// task.cc: Task and LambdaTask.
#include "kvexec/task.h"

#include <algorithm>
#include <atomic>

#include "executor/task_access.h"
#include "executor/task_runner.h"
#include "kvexec/taskable.h"

namespace kvexec {

namespace {

// Ids are process-wide so that a task keeps its id across pools. A thread
// takes them from the shared counter in blocks, and hands out each block
// in order: threads creating tasks on many cores (a one-shot task per
// request) would otherwise all write the counter's line once per task.
// A thread's blocks grow from one id to kMaxTaskIdBlock, so that threads
// which each make only a few tasks still take ids one after another from
// the counter; blocks of one size for all would start every thread at the
// same remainder modulo the block size, and the Wheel's shard is the id
// modulo 8. Ids that one thread makes in a row stay consecutive, so that
// its tasks sit side by side in the Wheel's index (wheel/id_table.h), and
// a benchmark that splits its tasks between threads by their order splits
// the shards between them too.
constexpr TaskId kMaxTaskIdBlock = 64;
std::atomic<TaskId> nextTaskId{1};

TaskId newTaskId() noexcept {
    thread_local TaskId next = 0;
    thread_local TaskId blockEnd = 0;
    thread_local TaskId blockSize = 1;
    if (next == blockEnd) {
        next = nextTaskId.fetch_add(blockSize, std::memory_order_relaxed);
        blockEnd = next + blockSize;
        blockSize = std::min(2 * blockSize, kMaxTaskIdBlock);
    }
    return next++;
}

}  // namespace

std::string_view to_string(TaskType type) {
    switch (type) {
        case TaskType::Writer:
            return "Writer";
        case TaskType::Reader:
            return "Reader";
        case TaskType::AuxIO:
            return "AuxIO";
        case TaskType::NonIO:
            return "NonIO";
    }
    return "Unknown";
}

std::string_view to_string(TaskState state) {
    switch (state) {
        case TaskState::Running:
            return "Running";
        case TaskState::Snoozed:
            return "Snoozed";
        case TaskState::Dead:
            return "Dead";
    }
    return "Unknown";
}

Task::Task(Taskable& owner, TaskType type, int priority, Clock::duration initialSleep,
           bool blockShutdown)
    : id_(newTaskId()),
      owner_(owner),
      type_(type),
      priority_(priority),
      blockShutdown_(blockShutdown),
      wakeTime_(detail::deadlineAfter(Clock::now(), initialSleep).time_since_epoch().count()) {}

Task::~Task() = default;

void Task::cancel() noexcept {
    if (auto* host = detail::TaskAccess::host(*this)) {
        host->onTaskCancelled(*this);
    } else {
        detail::TaskAccess::setState(*this, TaskState::Dead);
    }
}

void Task::snooze(Clock::duration d) noexcept {
    const detail::SnoozeMade made =
        detail::TaskAccess::snoozeUntil(*this, detail::deadlineAfter(Clock::now(), d));
    auto* host = detail::TaskAccess::host(*this);
    // Inside its own run() the pool reads the new wake time when run()
    // returns; outside, the pool must move the task in its queues.
    if (host && detail::currentTask() != this) {
        host->onTaskSnoozed(*this, made);
    }
}

Clock::time_point Task::wakeTime() const noexcept {
    return Clock::time_point(Clock::duration(wakeTime_.load(std::memory_order_acquire)));
}

Clock::duration Task::totalRuntime() const noexcept {
    return Clock::duration(totalRuntime_.load(std::memory_order_relaxed));
}

Clock::duration Task::lastRuntime() const noexcept {
    return Clock::duration(lastRuntime_.load(std::memory_order_relaxed));
}

std::chrono::microseconds Task::maxExpectedDuration() const {
    return std::chrono::seconds(1);
}

LambdaTask::LambdaTask(Taskable& owner, TaskType type, std::string description, Fn fn, int priority,
                       Clock::duration initialSleep, bool blockShutdown)
    : Task(owner, type, priority, initialSleep, blockShutdown),
      description_(std::move(description)),
      fn_(std::move(fn)) {}

namespace detail {

Clock::time_point deadlineAfter(Clock::time_point now, Clock::duration d) noexcept {
    if (d <= Clock::duration::zero()) {
        return now;  // a negative duration means "due now", never a past wake time
    }
    if (d > Clock::time_point::max() - now) {
        return Clock::time_point::max();
    }
    return now + d;
}

void TaskAccess::setStateUnlessDead(Task& t, TaskState s) noexcept {
    auto current = t.state_.load(std::memory_order_acquire);
    // current == s: nothing to write (re-arming a snoozed task, the hot path).
    while (current != TaskState::Dead && current != s &&
           !t.state_.compare_exchange_weak(current, s, std::memory_order_acq_rel)) {
    }
}

void TaskAccess::recordRun(Task& t, Clock::duration ran) noexcept {
    t.runCount_.fetch_add(1, std::memory_order_relaxed);
    t.totalRuntime_.fetch_add(ran.count(), std::memory_order_relaxed);
    t.lastRuntime_.store(ran.count(), std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace kvexec
