// kvexec/task.h: the unit of background work.
//
// A Task is a piece of work owned by a Taskable (a bucket) that an
// ExecutorPool runs on a worker thread of the task's TaskType. A task runs
// once or many times: run() returns true to be run again (at its wake time
// if it snoozed during the run, else as soon as possible) and false when it
// is done. Tasks are shared: the pool holds a TaskPtr while the task is
// scheduled, and the scheduling code usually keeps one too, to wake() it.
//
// Thread safety:
// - id(), type(), priority(), owner(), blocksShutdown(), description() and
//   the run accounting (runCount(), totalRuntime(), lastRuntime()) may be
//   read from any thread at any time.
// - state(), wakeTime() are atomics: any thread, any time.
// - snooze() and cancel() may be called from any thread, including from the
//   task's own run(), as long as the pool that holds the task (if any)
//   exists. When the task is held by a pool they act through that pool, as
//   ExecutorPool::snooze / ExecutorPool::cancel do.
// - run() is only ever called by a pool, never on two threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace kvexec {

using Clock = std::chrono::steady_clock;

enum class TaskType : std::uint8_t { Writer, Reader, AuxIO, NonIO };
inline constexpr std::size_t kTaskTypeCount = 4;
std::string_view to_string(TaskType);

enum class TaskState : std::uint8_t {
    Running,  // ready to run, or running right now
    Snoozed,  // waiting for its wake time, or for wake()
    Dead      // cancelled or finished; will not run again unless re-scheduled
};
std::string_view to_string(TaskState);

using TaskId = std::uint64_t;  // unique per Task object, never 0
inline constexpr Clock::duration kForever = Clock::duration::max();

class Taskable;

namespace detail {
class TaskHost;
class TaskAccess;
}  // namespace detail

class Task {
  public:
    // The wake time starts at now + initialSleep (kForever: until woken).
    Task(Taskable& owner, TaskType type, int priority = 0,
         Clock::duration initialSleep = Clock::duration::zero(), bool blockShutdown = false);
    virtual ~Task();
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;

    TaskId id() const noexcept { return id_; }
    TaskType type() const noexcept { return type_; }
    int priority() const noexcept { return priority_; }  // lower value runs first
    Taskable& owner() const noexcept { return owner_; }
    bool blocksShutdown() const noexcept { return blockShutdown_; }

    TaskState state() const noexcept { return state_.load(std::memory_order_acquire); }
    bool isDead() const noexcept { return state() == TaskState::Dead; }
    // Marks the task Dead. When a pool holds it, this is ExecutorPool::cancel
    // (remove = false): it will not start again; a run in progress finishes.
    void cancel() noexcept;

    // Sets the wake time to now + d (kForever: until woken). Safe to call
    // from inside run() and from any thread. Inside run() it decides when the
    // task runs next (if run() returns true); outside, it moves the task in
    // its pool's queue. It never revives a Dead task.
    void snooze(Clock::duration d) noexcept;
    Clock::time_point wakeTime() const noexcept;

    std::uint64_t runCount() const noexcept { return runCount_.load(std::memory_order_relaxed); }
    Clock::duration totalRuntime() const noexcept;
    Clock::duration lastRuntime() const noexcept;

    virtual std::string description() const = 0;
    // A run longer than this is reported as slow. Default: 1 second.
    virtual std::chrono::microseconds maxExpectedDuration() const;

  protected:
    // Return true to run again: at the wake time if run() snoozed, else as
    // soon as possible. Return false when done (the task becomes Dead).
    virtual bool run() = 0;

  private:
    friend class detail::TaskAccess;

    const TaskId id_;
    Taskable& owner_;
    const TaskType type_;
    const int priority_;
    const bool blockShutdown_;

    std::atomic<TaskState> state_{TaskState::Running};
    // Nanoseconds since the clock's epoch; time_point::max() means forever.
    std::atomic<Clock::rep> wakeTime_;
    // Counts of snoozes, whose sum a pool compares across run() to tell
    // whether the run snoozed the task. Two counts, so that a pool's own
    // snooze(id), made under the pool's lock that orders its snoozes of
    // this task, increments its count with a plain load and store (an
    // atomic increment cost TimeoutAddCancel 7% at one thread); snooze()
    // comes from any thread without that lock, and increments its count
    // atomically.
    std::atomic<std::uint32_t> snoozeSeq_{0};      // snooze() on the task
    std::atomic<std::uint32_t> poolSnoozeSeq_{0};  // the pool's snooze(id)
    std::atomic<std::uint64_t> runCount_{0};
    std::atomic<Clock::rep> totalRuntime_{0};
    std::atomic<Clock::rep> lastRuntime_{0};
    // The pool that holds the task right now, or null.
    std::atomic<detail::TaskHost*> host_{nullptr};
};
using TaskPtr = std::shared_ptr<Task>;

// A Task around a callable; the callable gets the task itself so that it can
// snooze() it.
class LambdaTask final : public Task {
  public:
    using Fn = std::function<bool(LambdaTask&)>;
    LambdaTask(Taskable& owner, TaskType type, std::string description, Fn fn, int priority = 0,
               Clock::duration initialSleep = Clock::duration::zero(), bool blockShutdown = false);

    std::string description() const override { return description_; }

  protected:
    bool run() override { return fn_(*this); }

  private:
    std::string description_;
    Fn fn_;
};

}  // namespace kvexec
