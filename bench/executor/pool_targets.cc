// bench/executor/pool_targets.cc: adapters from the benchmark targets to
// the kvexec ExecutorPool API.
#include "executor/pool_targets.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <kvexec/task.h>

#include "executor/pool_harness.h"

namespace kvexec::bench {

std::vector<Backend> availableBackends() {
    std::vector<Backend> found;
    for (Backend b : {Backend::Classic, Backend::Wheel}) {
        try {
            ExecutorPool::create(b, nonIOPool(1));
            found.push_back(b);
        } catch (const std::invalid_argument&) {
            // not built yet
        }
    }
    return found;
}

namespace {

class PoolOneShot final : public OneShotTarget {
  public:
    PoolOneShot(Backend b, std::size_t threads) : h_(b, nonIOPool(threads)) {}

    void runOnce(Signal& done) override {
        h_.pool().schedule(std::make_shared<LambdaTask>(
            h_.owner(), TaskType::NonIO, "OneShot", [this, &done](LambdaTask&) {
                runs_.fetch_add(1, std::memory_order_relaxed);
                done.post();
                return false;
            }));
    }

  private:
    PoolHarness h_;
};

class PoolLongLived final : public LongLivedTarget {
  public:
    PoolLongLived(Backend b, std::size_t threads) : h_(b, nonIOPool(threads)) {}

    std::size_t add(Signal& done) override {
        auto task = std::make_shared<LambdaTask>(
            h_.owner(), TaskType::NonIO, "LongLived",
            [this, &done](LambdaTask& self) {
                runs_.fetch_add(1, std::memory_order_relaxed);
                self.snooze(kForever);
                done.post();
                return true;
            },
            /*priority=*/0, /*initialSleep=*/kForever);
        ids_.push_back(h_.pool().schedule(std::move(task)));
        return ids_.size() - 1;
    }

    void wake(std::size_t handle) override { h_.pool().wake(ids_[handle]); }

  private:
    PoolHarness h_;
    std::vector<TaskId> ids_;  // filled before timing
};

// A timeout that does fire (nobody re-armed it in time) re-arms itself.
bool timeoutFired(LambdaTask& self) {
    self.snooze(kMinDelay);
    return true;
}

class PoolTimeouts final : public TimeoutTarget {
  public:
    PoolTimeouts(Backend b, std::size_t count, const DelayTable& delays) : h_(b, nonIOPool(1)) {
        ids_.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            ids_.push_back(h_.pool().schedule(std::make_shared<LambdaTask>(
                h_.owner(), TaskType::NonIO, "Timeout", timeoutFired, 0, delays.at(i))));
        }
    }

    void rearm(std::size_t index, Delay d) override { h_.pool().snooze(ids_[index], d); }

  private:
    PoolHarness h_;
    std::vector<TaskId> ids_;
};

}  // namespace

Implementation poolImplementation(Backend backend) {
    const std::string label(to_string(backend));
    return {"ExecutorPoolFixture<" + label + ">", label,
            [backend](std::size_t n) { return std::make_unique<PoolOneShot>(backend, n); },
            [backend](std::size_t n) { return std::make_unique<PoolLongLived>(backend, n); },
            [backend](std::size_t count, const DelayTable& delays) {
                return std::make_unique<PoolTimeouts>(backend, count, delays);
            }};
}

}  // namespace kvexec::bench
