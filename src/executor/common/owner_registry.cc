// owner_registry.cc: register, admit (rule 2), unregister and release of
// owners, and the stats() hold: the owner rules of every backend.
#include "executor/common/owner_registry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "executor/task_runner.h"
#include "executor/this_core.h"

namespace kvexec::detail {

OwnerRegistry::OwnerRegistry(std::size_t admissionStripes)
    : stripeCount_(std::max<std::size_t>(admissionStripes, 1)),
      stripes_(std::make_unique<AdmissionStripe[]>(stripeCount_)) {}

std::size_t OwnerRegistry::stripeOfThisCore() const noexcept {
    return stripeCount_ == 1 ? 0 : thisCore() % stripeCount_;
}

void OwnerRegistry::registerOwner(Taskable& owner) {
    MutexLock lock(mutex);
    if (stopping_) {
        throw std::logic_error("kvexec: registerTaskable() on a pool that is shutting down");
    }
    auto [it, inserted] = owners_.try_emplace(&owner);
    if (inserted) {
        try {
            // Published refusing tasks, as if unregistering: if a stripe's
            // table cannot take it, it is withdrawn from the others before
            // any task was admitted through them.
            it->second = std::make_unique<OwnerState>(stripeCount_, ++registrations_);
            it->second->unregistering = true;
            publishLocked(owner, it->second.get());
        } catch (...) {
            withdrawLocked(owner);
            owners_.erase(it);
            throw;
        }
        it->second->unregistering = false;
    } else if (it->second->unregistering) {
        throw std::logic_error("kvexec: registerTaskable() of '" + owner.name() +
                               "' while it is being unregistered");
    }
}

void OwnerRegistry::publishLocked(const Taskable& owner, OwnerState* state) {
    for (std::size_t i = 0; i < stripeCount_; ++i) {
        MutexLock stripeLock(stripes_[i].mutex);
        stripes_[i].owners.emplace(&owner, state);
    }
}

void OwnerRegistry::withdrawLocked(const Taskable& owner) noexcept {
    for (std::size_t i = 0; i < stripeCount_; ++i) {
        MutexLock stripeLock(stripes_[i].mutex);
        stripes_[i].owners.erase(&owner);
    }
}

void OwnerRegistry::passStripesLocked() {
    for (std::size_t i = 0; i < stripeCount_; ++i) {
        MutexLock stripeLock(stripes_[i].mutex);
    }
}

std::size_t OwnerRegistry::count() const {
    MutexLock lock(mutex);
    return owners_.size();
}

// Rule 2, for the owner table and for each stripe's copy of it.
template <class Table>
OwnerState* OwnerRegistry::admissibleIn(const Table& table, const Taskable& owner) const {
    const auto it = table.find(&owner);
    if (it == table.end() || refusesNow(*it->second)) {
        return nullptr;
    }
    return &*it->second;
}

OwnerState& OwnerRegistry::admitLocked(const Task& task) {
    OwnerState* owner = admissibleIn(owners_, task.owner());
    if (owner == nullptr) {
        throw refusedError(task);
    }
    return *owner;
}

OwnerState* OwnerRegistry::admit(const Task& task) {
    const std::size_t stripe = stripeOfThisCore();
    AdmissionStripe& s = stripes_[stripe];
    MutexLock lock(s.mutex);
    OwnerState* owner = admissibleIn(s.owners, task.owner());
    if (owner != nullptr) {
        owner->added.add(stripe);
    }
    return owner;
}

std::logic_error OwnerRegistry::refusedError(const Task& task) const {
    if (stopping_) {
        return std::logic_error("kvexec: schedule() on a pool that is shutting down");
    }
    return std::logic_error("kvexec: schedule() of task '" + task.description() +
                            "' whose owner '" + task.owner().name() +
                            "' is not registered (or is being unregistered)");
}

void OwnerRegistry::checkNotOwnTask(const Taskable& owner) {
    const Task* current = currentTask();
    if (current != nullptr && &current->owner() == &owner) {
        throw std::logic_error("kvexec: unregisterTaskable('" + owner.name() +
                               "') from one of its own tasks would wait for itself");
    }
}

std::optional<OwnerRegistry::Registration> OwnerRegistry::beginUnregisterLocked(Taskable& owner) {
    auto it = owners_.find(&owner);
    if (it == owners_.end()) {
        return std::nullopt;
    }
    it->second->unregistering = true;
    passStripesLocked();  // admissions that saw the flag clear are counted
    return it->second->registration;
}

// Another unregistering of the same registration may have forgotten the
// owner while this one waited (and the owner may have been registered
// again since): then there is nothing left to wait for or to forget. The
// registration number, not the state's address, tells the two apart: a
// new state may be allocated where the old one was.
bool OwnerRegistry::awaitDrainedLocked(Taskable& owner, Registration registration, UniqueLock& lock,
                                       const std::function<bool()>& hasWork) {
    const auto current = [&]() REQUIRES(mutex) -> OwnerState* {
        auto it = owners_.find(&owner);
        return it != owners_.end() && it->second->registration == registration ? it->second.get()
                                                                               : nullptr;
    };
    const auto drained = [&]() REQUIRES(mutex) {
        const OwnerState* state = current();
        return state == nullptr || (state->held() == 0 && statsHolding_ == 0);
    };
    drainWaiters_.fetch_add(1);  // before the first look at the counts: see release()
    drained_.wait(lock.native(),
                  [&]() REQUIRES(mutex) { return drained() || (hasWork && hasWork()); });
    drainWaiters_.fetch_sub(1);
    if (!drained()) {
        return false;
    }
    if (current() != nullptr) {
        withdrawLocked(owner);
        owners_.erase(&owner);
    }
    return true;
}

void OwnerRegistry::wakeDrainWaitersLocked() {
    if (drainWaiters_.load() > 0) {
        drained_.notify_all();
    }
}

// Counting out needs no lock, and takes the mutex only while an
// unregisterTaskable() waits, to wake it. (The waiter counts itself before
// it reads the counts, and both sides are seq_cst: either it sees this
// count rise or this sees it waiting.) Nothing here touches an OwnerState
// after counting a task out of it: the waiter may free it at once. `added`
// no longer changes once unregistering has begun (admission stops under
// the mutex, and through the stripes once beginUnregisterLocked() has
// passed them), so the waiter's held() is exact. Without the waiter check, a
// pool running one task at a time took the mutex after every run, against
// schedule() taking it too.
void OwnerRegistry::release(ReleasedTasks& released) {
    if (released.items_.empty()) {
        return;
    }
    for (auto& item : released.items_) {
        item.task.reset();  // destructors run here, with no lock held
    }
    for (auto& item : released.items_) {
        uncount(*item.owner);
    }
    released.items_.clear();
}

// Counts one task out of `owner`; wakes unregisterTaskable() if one waits.
void OwnerRegistry::uncount(OwnerState& owner) {
    owner.released.add(stripeOfThisCore());
    if (drainWaiters_.load() > 0) {
        MutexLock lock(mutex);
        drained_.notify_all();
    }
}

StatsHold::StatsHold(const OwnerRegistry& registry) : registry_(registry) {
    MutexLock lock(registry_.mutex);
    ++registry_.statsHolding_;
}

StatsHold::~StatsHold() {
    tasks.clear();
    MutexLock lock(registry_.mutex);
    --registry_.statsHolding_;
    registry_.drained_.notify_all();
}

}  // namespace kvexec::detail
