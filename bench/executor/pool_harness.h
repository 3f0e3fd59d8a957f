// bench/executor/pool_harness.h: a kvexec pool with one registered owner,
// torn down in the right order.
//
// Destruction: unregisterTaskable(force) first (cancels the owner's tasks
// and waits until the pool holds none), then the pool (joins its threads).
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
    ~PoolHarness() {
        pool_->unregisterTaskable(owner_, /*force=*/true);
        pool_.reset();
    }
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
