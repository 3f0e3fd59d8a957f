// owner_registry.h: the owners (Taskables) a pool knows, and the rules for
// them that every backend keeps: registering, refusing tasks of an owner
// that is not registered or is being unregistered (rule 2), unregistering
// (refuse, then wait until the pool holds none of its tasks: rule 9), and
// the task references stats() holds, which unregistering waits for too.
//
// A backend keeps its own task table (Classic's locator, the Wheel's
// shards) and calls in here at the steps below; what differs between
// backends (how tasks are found and cancelled) stays with them.
//
// Thread safety: `mutex` guards the owner table and the stopping flag; a
// backend may guard its own tables with it too (Classic does). A backend
// whose schedule() calls must not all meet on `mutex` (the Wheel) admits
// through admit() instead: the registry keeps a copy of the owner table
// per admission stripe, each under its own mutex, and a thread admits
// through the stripe of the core it runs on (registering and forgetting an
// owner visit every stripe). OwnerState is atomic: read under any lock,
// counted out without one. release() and StatsHold's constructor and
// destructor take `mutex`: call them holding none of the pool's locks
// (they drop task references, so a task's destructor may run there).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "executor/common/striped_count.h"
#include "executor/thread_annotations.h"
#include "kvexec/task.h"
#include "kvexec/taskable.h"

namespace kvexec::detail {

// One registration of an owner, as a pool tracks it. Lives from
// registerTaskable() until the unregisterTaskable() that forgets it, which
// waits for every task counted in it: a held task's record may point at it.
struct OwnerState {
    OwnerState(std::size_t stripes, std::uint64_t registration)
        : registration(registration), added(stripes), released(stripes) {}

    // Which registration of the owner this is (OwnerRegistry::Registration).
    const std::uint64_t registration;
    // Set (under OwnerRegistry::mutex) when unregistering starts; also
    // while registerOwner() publishes the state (no task is admitted then).
    std::atomic<bool> unregistering{false};
    // Tasks the pool holds: added - released. Each is split into stripes,
    // indexed by the core of the thread that counts a task in (the
    // scheduling thread's admission stripe) or out (the thread that drops
    // it), so that the threads that schedule tasks and the workers that
    // drop them, on many cores at once, do not all write one line.
    StripedCount added;
    StripedCount released;

    // Exact once no task is being admitted, that is once
    // beginUnregisterLocked() has returned for this registration: `added`
    // is read first and no longer moves, and `released` read after it is
    // at most what has been released, never more than was added.
    std::size_t held() const noexcept {
        const std::uint64_t in = added.sum();
        return in - released.sum();
    }

    // Rule 9: while its owner is being unregistered, a blockShutdown task
    // is never put to sleep: it runs until it returns false.
    bool mustNotSleep(const Task& task) const {
        return task.blocksShutdown() && unregistering.load();
    }
};

// Task references a backend has erased from its tables under its locks,
// to be dropped (and counted out of their owners) once the locks are
// released: OwnerRegistry::release().
class ReleasedTasks {
  public:
    void add(TaskPtr task, OwnerState& owner) { items_.push_back({std::move(task), &owner}); }
    bool empty() const noexcept { return items_.empty(); }

  private:
    friend class OwnerRegistry;
    // One vector (not one per field): a pool's hand-off path builds one of
    // these per run, and the lock holders' Deferred structs stay small.
    struct Item {
        TaskPtr task;
        OwnerState* owner;
    };
    std::vector<Item> items_;
};

class OwnerRegistry {
  public:
    // `admissionStripes` (at least 1): how many stripes admit() spreads
    // its callers over, as a rule one per core on a machine with many.
    explicit OwnerRegistry(std::size_t admissionStripes = 1);

    // registerTaskable(): again for a registered owner does nothing; throws
    // std::logic_error while the pool stops or the owner is unregistering.
    void registerOwner(Taskable& owner) EXCLUDES(mutex);
    std::size_t count() const EXCLUDES(mutex);

    // schedule(): the registered owner of `task`, which the caller then
    // holds the task for (addTaskLocked once it is in the caller's table).
    // Throws std::logic_error (rule 2, or the pool stops).
    OwnerState& admitLocked(const Task& task) REQUIRES(mutex);
    void addTaskLocked(OwnerState& owner) REQUIRES(mutex) { owner.added.add(stripeOfThisCore()); }

    // schedule() without `mutex`: admits the task and counts it in through
    // the admission stripe of the caller's core; null when refused (rule
    // 2, or the pool stops: throw refusedError(), made holding no lock, as
    // it runs the task's description()). Then as for admitLocked(), and
    // the caller must look at refusesNow() under its table's lock (below).
    // An owner that begins unregistering has every stripe visited after
    // its flag is set: an admission that saw the flag clear has counted
    // its task in before that visit ends.
    OwnerState* admit(const Task& task) EXCLUDES(mutex);

    // For a backend that admits and counts a task under `mutex` or through
    // admit(), and inserts the task into its own table after (so that
    // schedule() calls do not queue on one lock): under the lock of that
    // table, the owner may have begun unregistering or the pool stopping
    // since. unregisterTaskable() and shutdown set their flag before they
    // walk the tables, each part under its lock, so a task is either seen
    // by the walk or refused here. Refused (or found already held), it is
    // counted out with uncount(), holding none of the pool's locks. A
    // refused schedule() throws refusedError(), made before the count out
    // (it names the owner, which unregistering may free after it).
    bool refusesNow(const OwnerState& owner) const noexcept {
        return owner.unregistering.load() || stopping_.load();
    }
    void uncount(OwnerState& owner) EXCLUDES(mutex);
    std::logic_error refusedError(const Task& task) const;

    // unregisterTaskable(), in order:
    // 1. checkNotOwnTask(): from one of the owner's own tasks it would wait
    //    for itself: throws std::logic_error.
    static void checkNotOwnTask(const Taskable& owner);
    // 2. beginUnregisterLocked(): refuse its tasks from now on. Returns the
    //    registration being unregistered; none when the owner is not
    //    registered (then there is nothing to do).
    // 3. (the backend cancels and drops the registration's tasks)
    // 4. awaitDrainedLocked(): wait until the pool holds none of the
    //    registration's tasks and no stats() call holds any task, then
    //    forget the owner. Two
    //    threads may unregister one owner at once, and the owner may be
    //    registered again once the first has returned: the second then
    //    returns too, and leaves the new registration alone.
    //    A backend that runs some of the tasks itself while unregistering
    //    (Manual, which has no workers) passes `hasWork`, read under the
    //    mutex: the wait then also ends, returning false, once it says
    //    there is something to run; the backend runs it and waits again.
    //    It calls wakeDrainWaitersLocked() whenever that may have changed.
    //    Returns true once the registration is forgotten.
    using Registration = std::uint64_t;
    std::optional<Registration> beginUnregisterLocked(Taskable& owner) REQUIRES(mutex);
    bool awaitDrainedLocked(Taskable& owner, Registration registration, UniqueLock& lock,
                            const std::function<bool()>& hasWork = {}) REQUIRES(mutex);
    void wakeDrainWaitersLocked() REQUIRES(mutex);

    // Drops the references (their destructors may run here), then counts
    // them out of their owners, waking unregisterTaskable().
    void release(ReleasedTasks& released) EXCLUDES(mutex);

    // Shutdown: refuse new owners and tasks from now on.
    void stopLocked() REQUIRES(mutex) { stopping_.store(true); }

    mutable Mutex mutex;

  private:
    friend class StatsHold;

    // A copy of the owner table that admit() reads, one per stripe; each
    // on its own lines, so that threads on different cores admit without
    // meeting. Changed under `mutex` and the stripe's own lock.
    struct alignas(64) AdmissionStripe {
        Mutex mutex;
        std::unordered_map<const Taskable*, OwnerState*> owners GUARDED_BY(mutex);
    };

    std::size_t stripeOfThisCore() const noexcept;
    // The owner's state if it may take a task now, else null.
    template <class Table>
    OwnerState* admissibleIn(const Table& table, const Taskable& owner) const;
    // Adds or removes `owner` in every stripe's table.
    void publishLocked(const Taskable& owner, OwnerState* state) REQUIRES(mutex);
    void withdrawLocked(const Taskable& owner) noexcept REQUIRES(mutex);
    // Takes and releases each stripe's lock: an admission under way
    // through any of them has ended once this returns.
    void passStripesLocked() REQUIRES(mutex);

    // A task count or statsHolding_ fell, or a backend's hasWork may hold.
    mutable std::condition_variable drained_;
    std::atomic<std::size_t> drainWaiters_{0};  // threads in awaitDrainedLocked()
    std::unordered_map<const Taskable*, std::unique_ptr<OwnerState>> owners_ GUARDED_BY(mutex);
    // Written under `mutex`; read without it by refusesNow().
    std::atomic<bool> stopping_{false};
    // stats() calls holding task references (StatsHold).
    mutable std::size_t statsHolding_ GUARDED_BY(mutex) = 0;
    Registration registrations_ GUARDED_BY(mutex) = 0;  // the last one given
    const std::size_t stripeCount_;
    const std::unique_ptr<AdmissionStripe[]> stripes_;
};

// The task references a stats() call holds, counted in the registry, so
// that unregisterTaskable() returns only when nothing of the pool
// references the owner's tasks. Construct and destroy holding no lock.
class StatsHold {
  public:
    explicit StatsHold(const OwnerRegistry& registry);
    // Drops the references first (a task's destructor may run here), then
    // stops counting, even if describing them threw.
    ~StatsHold();
    StatsHold(const StatsHold&) = delete;
    StatsHold& operator=(const StatsHold&) = delete;

    std::vector<TaskPtr> tasks;

  private:
    const OwnerRegistry& registry_;
};

}  // namespace kvexec::detail
