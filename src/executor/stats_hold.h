// stats_hold.h: the task references a stats() call holds, counted, so that
// unregisterTaskable() can wait until no stats() call still holds a task of
// the owner (it must return only when nothing of the pool references them).
//
// Thread safety: construct and destroy with no lock held; `mutex` guards
// `*count` (a pool member GUARDED_BY it, hence passed by address) and is
// what unregisterTaskable() waits on with `drained`.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <vector>

#include "executor/thread_annotations.h"
#include "kvexec/task.h"

namespace kvexec::detail {

class StatsHold {
  public:
    StatsHold(Mutex& mutex, std::condition_variable& drained, std::size_t* count)
        : mutex_(mutex), drained_(drained), count_(count) {
        MutexLock lock(mutex_);
        ++*count_;
    }
    // Drops the references first (a task's destructor may run here, with no
    // lock held), then stops counting, even if describing them threw.
    ~StatsHold() {
        tasks.clear();
        MutexLock lock(mutex_);
        --*count_;
        drained_.notify_all();
    }
    StatsHold(const StatsHold&) = delete;
    StatsHold& operator=(const StatsHold&) = delete;

    std::vector<TaskPtr> tasks;

  private:
    Mutex& mutex_;
    std::condition_variable& drained_;
    std::size_t* const count_;
};

}  // namespace kvexec::detail
