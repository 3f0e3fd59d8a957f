// thread_name.h: names worker threads "<Type>_worker_<n>" so that top -H and
// debuggers show them. Linux keeps 15 characters; longer names are cut.
#pragma once

#include <cstddef>
#include <string>

#include "kvexec/task.h"

namespace kvexec::detail {

// The name a worker of this type and index gets, already cut to 15 chars.
std::string workerThreadName(TaskType type, std::size_t index);
// Names the calling thread.
void setCurrentThreadName(const std::string& name);

}  // namespace kvexec::detail
