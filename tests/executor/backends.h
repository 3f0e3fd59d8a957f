// backends.h: the backends the typed contract suite runs against. A new
// backend joins every contract test by adding its tag here. Rules about
// worker threads themselves (their names and count) run over the threaded
// backends only; the Manual backend runs the others with a driver that
// plays its workers (contract_fixture.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kvexec/executor_pool.h"

namespace kvexec::test {

// `configure` adds what the tag needs to a test's PoolConfig.
struct ClassicBackend {
    static constexpr Backend value = Backend::Classic;
    static constexpr const char* name = "Classic";
    static PoolConfig configure(PoolConfig c) { return c; }
};

// The Wheel as this machine gets it: one ready lane on up to 4 cores.
struct WheelBackend {
    static constexpr Backend value = Backend::Wheel;
    static constexpr const char* name = "Wheel";
    static PoolConfig configure(PoolConfig c) { return c; }
};

// The Wheel with its ready queues split into lanes, as on a many-core
// machine, whatever the cores here: producers on different cores push into
// different lanes, and workers choose between them.
struct WheelLanesBackend {
    static constexpr Backend value = Backend::Wheel;
    static constexpr const char* name = "WheelLanes";
    static PoolConfig configure(PoolConfig c) {
        c.wheelReadyLanes = 4;
        return c;
    }
};

struct ManualBackend {
    static constexpr Backend value = Backend::Manual;
    static constexpr const char* name = "Manual";
    static PoolConfig configure(PoolConfig c) { return c; }
};

using ThreadedBackends = ::testing::Types<ClassicBackend, WheelBackend, WheelLanesBackend>;
// The Wheel's own rules beyond the contract (its hand-off to idle workers).
using WheelBackends = ::testing::Types<WheelBackend, WheelLanesBackend>;
using AllBackends =
    ::testing::Types<ClassicBackend, WheelBackend, WheelLanesBackend, ManualBackend>;

struct BackendNames {
    template <class T>
    static std::string GetName(int) {
        return T::name;
    }
};

// A pool of the tag's backend, configured as the tag says.
template <class B>
std::unique_ptr<ExecutorPool> makePool(PoolConfig config) {
    return ExecutorPool::create(B::value, B::configure(config));
}

}  // namespace kvexec::test
