// task_run.h: one run of a task a backend has taken from its queue, and
// what the contract says happens after it (rules 1, 4 and 5), the same for
// every backend:
//   - re-queue it if the run returned true and the task is not Dead since,
//     or if schedule() revived it while it ran; else drop it;
//   - a re-queued task runs again as soon as possible, unless it was
//     snoozed while it ran, and no wake() or revive came while it ran: then
//     at its wake time. A snooze counts as made while it ran if the run
//     sees the task's snooze sequence change, or if the snooze reached the
//     backend's lock while the task was taken (the backend marks it then:
//     a snooze from another thread counts before it takes that lock, so
//     the run may have read the new count already).
// Where a backend re-queues it (heaps, a wheel) stays with the backend.
//
// Thread safety: construct (which runs the task) holding none of the
// pool's locks, on the thread that took the task; call requeue() and
// asap() under the backend's lock that orders wake(), cancel() and
// schedule() with the end of the run.
#pragma once

#include <cstdint>

#include "executor/task_access.h"
#include "executor/task_runner.h"

namespace kvexec::detail {

class TaskRun {
  public:
    // Runs task.run() unless the task is Dead (see runTask()).
    TaskRun(Task& task, RunSite site, KindMetrics*& kind)
        : TaskRun(task, site, kind, TaskAccess::snoozeSeq(task)) {}
    // The same, for a backend that read the task's snooze sequence before
    // (to look for a snooze since the task became due): a snooze after
    // that read counts as one made during the run (rule 4), so none falls
    // between the backend's look and the run's.
    TaskRun(Task& task, RunSite site, KindMetrics*& kind, std::uint32_t snoozeSeqBefore)
        : task_(task),
          snoozeSeqBefore_(snoozeSeqBefore),
          ran_(!task.isDead()),
          again_(ran_ && runTask(task, site, kind)) {}

    bool ran() const noexcept { return ran_; }
    // Rules 1 and 4: re-queue, or drop.
    bool requeue(bool revived) const { return revived || (again_ && !task_.isDead()); }
    // Rules 4 and 5: when re-queued, at once (else at its wake time).
    bool asap(bool revived, bool woken, bool snoozedWhileTaken) const {
        const bool snoozed =
            snoozedWhileTaken || TaskAccess::snoozeSeqUnderLock(task_) != snoozeSeqBefore_;
        return revived || woken || !snoozed;
    }

  private:
    Task& task_;
    const std::uint32_t snoozeSeqBefore_;
    const bool ran_;
    const bool again_;
};

}  // namespace kvexec::detail
