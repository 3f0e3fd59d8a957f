// kvexec/taskable.h: an owner of tasks (in a KV engine: a bucket).
//
// A pool runs a task only while its owner is registered with it
// (ExecutorPool::registerTaskable). Unregistering cancels the owner's tasks
// and waits for them, so an owner can be destroyed right after
// unregisterTaskable() returns. A Taskable must outlive its registration.
//
// Thread safety: the hooks below are called on the worker thread that ran
// the task, holding none of the pool's locks, possibly on several worker
// threads at once; an implementation synchronises its own state. name()
// may be called from any thread and must not change while registered.
#pragma once

#include <chrono>
#include <exception>
#include <string>
#include <string_view>

#include "kvexec/task.h"

namespace kvexec {

class Taskable {
  public:
    virtual ~Taskable() = default;
    virtual const std::string& name() const = 0;
    // Called on the worker thread; defaults do nothing.
    // logQueueTime: how long the task waited between its wake time and the
    // start of its run.
    virtual void logQueueTime(const Task&, Clock::duration /*waited*/) {}
    virtual void logRunTime(const Task&, Clock::duration /*ran*/) {}
    // An exception escaped task.run(): the task is already Dead; the pool
    // goes on. The default writes one line to stderr.
    virtual void onTaskException(const Task&, std::exception_ptr);
    // A run took longer than task.maxExpectedDuration(). Called on the
    // worker thread (named `thread`) right after the run. The default
    // writes one line to stderr: the task, the thread and the time.
    virtual void onSlowRun(const Task& task, Clock::duration ran, std::string_view thread);
};

}  // namespace kvexec
