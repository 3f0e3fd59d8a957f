// backends.h: the backends the typed contract suite runs against. A new
// backend joins every contract test by adding its tag here. Rules about
// worker threads themselves (their names and count) run over the threaded
// backends only; the Manual backend runs the others with a driver that
// plays its workers (contract_fixture.h).
#pragma once

#include <gtest/gtest.h>

#include "kvexec/executor_pool.h"

namespace kvexec::test {

struct ClassicBackend {
    static constexpr Backend value = Backend::Classic;
};

struct WheelBackend {
    static constexpr Backend value = Backend::Wheel;
};

struct ManualBackend {
    static constexpr Backend value = Backend::Manual;
};

using ThreadedBackends = ::testing::Types<ClassicBackend, WheelBackend>;
using AllBackends = ::testing::Types<ClassicBackend, WheelBackend, ManualBackend>;

struct BackendNames {
    template <class T>
    static std::string GetName(int) {
        return std::string(to_string(T::value));
    }
};

}  // namespace kvexec::test
