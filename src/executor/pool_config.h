// pool_config.h: how a backend reads a PoolConfig.
#pragma once

#include "kvexec/executor_pool.h"

namespace kvexec::detail {

// The worker count the config asks for `type`: its entry, or the default
// for this machine when the entry is 0.
std::size_t threadsFor(const PoolConfig& config, TaskType type);

}  // namespace kvexec::detail
