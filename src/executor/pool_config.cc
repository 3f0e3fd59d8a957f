// pool_config.cc: how a backend turns a PoolConfig entry into a thread count.
#include "executor/pool_config.h"

namespace kvexec::detail {

std::size_t threadsFor(const PoolConfig& config, TaskType type) {
    std::size_t n = 0;
    switch (type) {
        case TaskType::Writer:
            n = config.writers;
            break;
        case TaskType::Reader:
            n = config.readers;
            break;
        case TaskType::AuxIO:
            n = config.auxIO;
            break;
        case TaskType::NonIO:
            n = config.nonIO;
            break;
    }
    return n != 0 ? n : defaultThreadCount(type);
}

}  // namespace kvexec::detail
