// slow_run.cc: the default Taskable::onSlowRun (one line to stderr).
#include <chrono>
#include <cstdio>
#include <string>

#include "kvexec/taskable.h"

namespace kvexec {

void Taskable::onSlowRun(const Task& task, Clock::duration ran, std::string_view thread) {
    using std::chrono::duration_cast;
    using std::chrono::microseconds;
    std::fprintf(stderr,
                 "kvexec: slow task %llu '%s' of '%s' on %.*s ran %lld us (expected <= %lld us)\n",
                 static_cast<unsigned long long>(task.id()), task.description().c_str(),
                 name().c_str(), static_cast<int>(thread.size()), thread.data(),
                 static_cast<long long>(duration_cast<microseconds>(ran).count()),
                 static_cast<long long>(task.maxExpectedDuration().count()));
}

}  // namespace kvexec
