// backends.h: the threaded backends the typed contract suite runs against.
// A new backend joins every contract test by adding its tag here.
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

using ThreadedBackends = ::testing::Types<ClassicBackend, WheelBackend>;

struct BackendNames {
    template <class T>
    static std::string GetName(int) {
        return std::string(to_string(T::value));
    }
};

}  // namespace kvexec::test
