// executor_pool.cc: the factory that picks a backend, and shared defaults.
#include "kvexec/executor_pool.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "executor/classic/classic_pool.h"
#include "executor/wheel/wheel_pool.h"
#include "kvexec/manual_executor_pool.h"

namespace kvexec {

std::string_view to_string(Backend backend) {
    switch (backend) {
        case Backend::Classic:
            return "Classic";
        case Backend::Wheel:
            return "Wheel";
        case Backend::Manual:
            return "Manual";
    }
    return "Unknown";
}

std::size_t defaultThreadCount(TaskType type) {
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    // KV-Engine's proportions: readers scale with cores, a few
    // writers, little AuxIO, NonIO between 2 and 8.
    switch (type) {
        case TaskType::Writer:
            return 4;
        case TaskType::Reader:
            return std::clamp<std::size_t>(cores * 3 / 4, 4, 16);
        case TaskType::AuxIO:
            return std::max<std::size_t>(1, cores / 10);
        case TaskType::NonIO:
            return std::clamp<std::size_t>(cores * 3 / 10, 2, 8);
    }
    return 1;
}

ExecutorPool::~ExecutorPool() = default;

std::unique_ptr<ExecutorPool> ExecutorPool::create(Backend backend, PoolConfig config) {
    switch (backend) {
        case Backend::Classic:
            return std::make_unique<classic::ClassicPool>(config);
        case Backend::Manual:
            return std::make_unique<ManualExecutorPool>();
        case Backend::Wheel:
            return std::make_unique<wheel::WheelPool>(config);
    }
    throw std::invalid_argument("kvexec: unknown backend");
}

}  // namespace kvexec
