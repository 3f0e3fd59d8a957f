// kvexec/executor_pool.h: the pool that runs tasks in the background.
//
// An ExecutorPool owns worker threads of four types (Writer, Reader, AuxIO,
// NonIO) and runs each scheduled Task on a thread of the task's type, at or
// after its wake time, in priority order. Tasks belong to a Taskable that
// must be registered first. Tasks are addressed by id: wake(), snooze() and
// cancel() never need the TaskPtr, so hot paths (a front-end write waking
// the flusher) only carry a number.
//
// Backends (one API, one test suite):
//   Classic  KV-Engine's "CB3" design: per-type future heap + ready heap
//            under a mutex and condition variable. Our baseline.
//   Wheel    sharded hierarchical timing wheels + per-type ready queues +
//            workers that spin briefly, then park. The default.
//   Manual   no threads; the caller runs tasks (ManualExecutorPool).
//
// Thread safety: every member function may be called from any thread,
// including from inside a task's run(), except where noted:
// - unregisterTaskable(t) from a task of t throws std::logic_error (it would
//   wait for itself).
// - setThreadCount(type, n) from a worker of that type that would have to
//   stop throws std::logic_error.
// - The destructor must not run concurrently with any other call.
//
// Rules every backend keeps (the executor contract; tests/executor runs
// one typed suite of them over every backend):
//  1. schedule(t) returns t->id(); the task runs at or after its wake time.
//     Scheduling a task the pool holds and that is not Dead does nothing.
//     Scheduling a Dead task revives it (state Running) and runs it again.
//  2. Scheduling for an owner that is not registered, or is being
//     unregistered, throws std::logic_error; the task stays unscheduled.
//  3. A task never runs on two threads at once.
//  4. run() returning false makes the task Dead and the pool drops it
//     (destroyed on the pool's thread holding no pool lock if the pool held
//     the last reference). run() returning true reschedules it: at its wake
//     time if it snoozed during run(), else as soon as possible.
//  5. wake(id) makes a snoozed task due now. A wake while the task runs makes
//     it run once more after the current run returns true, even if that run
//     snoozed. Unknown or Dead ids are ignored (wakeAndWait returns false).
//  6. snooze(id, d) sets the wake time to now + d; it never revives a Dead
//     task; unknown or Dead ids are ignored (snoozeAndWait returns false).
//  7. cancel(id) marks the task Dead; a run in progress finishes. With
//     remove = true the pool drops its reference at once when the task is
//     not running. Returns true if the pool held the task.
//  8. Ready tasks of one type run by priority (lower first), then wake time.
//  9. unregisterTaskable(t, force) refuses new tasks of t, cancels t's tasks
//     (except blockShutdown ones unless force; those are woken and run until
//     they return false; while the owner unregisters, such a task is never
//     put to sleep: a snooze makes it due at once), and returns when the
//     pool holds none of them.
// 10. setThreadCount changes the worker count live; threads are named
//     <Type>_worker_<n> (cut to 15 characters).
// 11. An exception escaping run() marks the task Dead and is passed to
//     Taskable::onTaskException; the worker goes on.
// 12. stats() is safe at any time; counts are exact when the pool is idle.
// 13. The destructor cancels everything, runs nothing more, joins threads.
//
// Defined outcomes for bad input (every backend, tested in
// tests/executor/hardening_test.cc):
// - schedule(nullptr) throws std::invalid_argument.
// - Unknown ids, and id 0 (never a task's id), are ignored: cancel() and
//   wakeAndWait()/snoozeAndWait() return false, wake()/snooze() do nothing.
// - snooze(id, d) with d < 0 is snooze(id, 0): the task is due now.
// - setThreadCount(type, 0) is allowed: tasks of that type are kept and
//   wait (none is lost) until threads are added again.
//
// Defined outcomes for tasks that misbehave or call back into the pool:
// - run() throws: rule 11; the next task runs on the same worker.
// - run() returns true forever without snoozing: it is re-queued as soon as
//   possible, behind the tasks of its type and priority already due (by
//   wake time), so it never starves them; it stops when cancelled.
// - From inside run(), on its own pool: schedule() of other tasks, wake(),
//   snooze(), cancel() of any task (itself included: it does not run again,
//   even if this run returns true) and stats() work as from any thread;
//   schedule() of itself returns its id and does nothing (it is held and
//   not Dead); unregisterTaskable() of its own owner throws
//   std::logic_error at once (it would wait for itself); setThreadCount()
//   that would stop the calling worker throws std::logic_error.
//
// Observability (PoolStats::kinds, PoolStats::workers): the worker thread
// records each run's queue time and run time in its kind's histograms
// without locks; a run longer than maxExpectedDuration() is counted and
// passed to Taskable::onSlowRun. stats_format.h prints a PoolStats as a
// table or JSON.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvexec/histogram.h"
#include "kvexec/task.h"
#include "kvexec/taskable.h"

namespace kvexec {

enum class Backend { Classic, Wheel, Manual };
std::string_view to_string(Backend);

struct PoolConfig {
    // Worker threads per TaskType; 0 means "choose from the core count".
    std::size_t writers = 0, readers = 0, auxIO = 0, nonIO = 0;
    // Per-kind histograms, slow-run counts and the worker view (PoolStats'
    // kinds and workers). Off: those stay empty; the Taskable hooks
    // (including onSlowRun) are still called.
    bool recordMetrics = true;
    // Wheel only: how many lanes each task type's ready queue is split
    // into (1-64); producers on different cores push into different lanes,
    // so that they and the workers do not all meet on one lock. 0 means
    // one per core on machines with more than 4 cores, else one (on a few
    // cores one lock is not where a hand-off waits, and a lane costs the
    // one-thread round trip a cache line). It also sets how many per-core
    // stripes schedule() admits tasks through (each owner then costs two
    // cache lines per stripe). Other backends ignore it.
    std::size_t wheelReadyLanes = 0;
};

struct TaskTypeStats {
    std::size_t threads = 0;     // worker threads of this type
    std::size_t sleeping = 0;    // of those, idle right now
    std::size_t ready = 0;       // tasks due and waiting for a thread
    std::size_t future = 0;      // tasks waiting for their wake time
    std::uint64_t executed = 0;  // runs completed since the pool started
};

struct TaskInfo {
    TaskId id;
    std::string description;
    std::string owner;  // Taskable::name()
    TaskType type;
    TaskState state;
    int priority;
    Clock::time_point wakeTime;
    std::uint64_t runCount;
    Clock::duration lastRuntime, totalRuntime;
};

// What the pool has measured for one kind of task: the tasks of one type
// with one description(), over the life of the pool. Kinds are resolved
// once per task per pool; after kMaxTaskKinds distinct kinds, further ones
// are counted under the description "(other kinds)".
struct TaskKindStats {
    std::string description;
    TaskType type;
    std::uint64_t runs = 0;
    // Runs longer than the task's maxExpectedDuration().
    std::uint64_t slowRuns = 0;
    HistogramSummary queueTime;  // from wake time to the start of the run
    HistogramSummary runTime;    // length of run()
};
// About 20 KB each, and 20 KB more for each further group of cores its
// tasks ran on (its histograms are split by core, up to 8 ways).
inline constexpr std::size_t kMaxTaskKinds = 256;

enum class WorkerState : std::uint8_t { Idle, Running };
std::string_view to_string(WorkerState);

// One worker thread as seen at the moment stats() looked.
struct WorkerInfo {
    std::string name;  // the thread's name, e.g. "NonIO_worker_0"
    TaskType type;
    WorkerState state = WorkerState::Idle;
    // When Running: the task, its kind's description, and for how long.
    TaskId task = 0;
    std::string taskDescription;
    Clock::duration runningFor{};
};

struct PoolStats {
    std::array<TaskTypeStats, kTaskTypeCount> byType;  // index: TaskType
    std::vector<TaskInfo> tasks;                       // every live task
    // Empty when PoolConfig::recordMetrics is false.
    std::vector<TaskKindStats> kinds;  // sorted by type, then description
    std::vector<WorkerInfo> workers;   // sorted by type, then thread index
};

class ExecutorPool {
  public:
    // Builds a pool of the given backend. Throws std::invalid_argument for a
    // value that names no backend.
    static std::unique_ptr<ExecutorPool> create(Backend backend = Backend::Wheel,
                                                PoolConfig config = {});
    // Rule 13: marks every task Dead, lets runs in progress finish, joins
    // the threads and drops every task reference. It does not unregister
    // the owners (no Taskable hook is called for them).
    virtual ~ExecutorPool();
    virtual std::string_view backendName() const = 0;  // "Classic", ...

    // registerTaskable: registering a registered owner again does nothing;
    // registering one that is being unregistered throws std::logic_error.
    virtual void registerTaskable(Taskable&) = 0;
    // unregisterTaskable: an owner that is not registered is ignored.
    virtual void unregisterTaskable(Taskable&, bool force) = 0;
    virtual std::size_t taskableCount() const = 0;

    virtual TaskId schedule(TaskPtr task) = 0;
    virtual bool cancel(TaskId id, bool remove = false) = 0;
    // wake(id) has done its work when it returns (rule 5): the task is due,
    // or marked to run again if it is running. It never waits for another
    // thread: it holds the pool's own locks only briefly (never across a
    // run or other user code) and does not wait for the task to be picked
    // up or to run. That is all a front-end path needs: once wake()
    // returns, the wake-up cannot be lost. wakeAndWait() is the same call
    // and also says whether the task was found and woken; snooze() and
    // snoozeAndWait() likewise.
    virtual void wake(TaskId id) = 0;
    virtual bool wakeAndWait(TaskId id) = 0;  // true: found and woken
    virtual void snooze(TaskId id, Clock::duration d) = 0;
    virtual bool snoozeAndWait(TaskId id, Clock::duration d) = 0;  // true: found, not Dead

    virtual std::size_t threadCount(TaskType) const = 0;
    virtual void setThreadCount(TaskType, std::size_t n) = 0;

    virtual PoolStats stats() const = 0;
};

// The thread count a PoolConfig entry of 0 stands for, on this machine.
std::size_t defaultThreadCount(TaskType type);

}  // namespace kvexec
