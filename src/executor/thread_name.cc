// thread_name.cc: worker thread names (<Type>_worker_<n>, cut to 15 characters).
#include "executor/thread_name.h"

#include <pthread.h>

namespace kvexec::detail {

namespace {
constexpr std::size_t kLinuxThreadNameMax = 15;
}

std::string workerThreadName(TaskType type, std::size_t index) {
    std::string name = std::string(to_string(type)) + "_worker_" + std::to_string(index);
    if (name.size() > kLinuxThreadNameMax) {
        name.resize(kLinuxThreadNameMax);
    }
    return name;
}

void setCurrentThreadName(const std::string& name) {
    pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace kvexec::detail
