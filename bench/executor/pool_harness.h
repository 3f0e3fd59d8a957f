// bench/executor/pool_harness.h: a kvexec pool with one registered owner,
// torn down in the right order.
//
// Destruction: the pool's destructor force-unregisters the owner (cancels
// its tasks, runs none of them) and joins the workers. The harness does not
// call unregisterTaskable(force) itself first: in the Classic backend that
// removes tasks from the heap one by one, O(n) each (6.5 s for 30,000
// snoozed tasks, hours for 1,000,000), while the destructor drops them all
// at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <kvexec/executor_pool.h>
#include <kvexec/taskable.h>

namespace kvexec::bench {

class BenchOwner final : public Taskable {
  public:
    const std::string& name() const override { return name_; }

  private:
    std::string name_ = "bench";
};

class PoolHarness {
  public:
    PoolHarness(Backend backend, PoolConfig config) : pool_(ExecutorPool::create(backend, config)) {
        pool_->registerTaskable(owner_);
    }
    ~PoolHarness() { pool_.reset(); }
    PoolHarness(const PoolHarness&) = delete;
    PoolHarness& operator=(const PoolHarness&) = delete;

    ExecutorPool& pool() { return *pool_; }
    Taskable& owner() { return owner_; }

  private:
    BenchOwner owner_;  // outlives pool_
    std::unique_ptr<ExecutorPool> pool_;
};

// nonIOPool: one NonIO worker per benchmark thread, one of each other type.
// (A count of 0 would mean "choose from the core count".)
inline PoolConfig nonIOPool(std::size_t nonIO) {
    PoolConfig c;
    c.writers = c.readers = c.auxIO = 1;
    c.nonIO = nonIO;
    return c;
}

// availableBackends: the threaded backends create() can build in this
// binary (Classic; Wheel once it lands). Manual has no threads: skipped.
std::vector<Backend> availableBackends();

}  // namespace kvexec::bench
