// taskable.cc: the default Taskable hooks.
#include "kvexec/taskable.h"

#include <cstdio>
#include <exception>

namespace kvexec {

void Taskable::onTaskException(const Task& task, std::exception_ptr error) {
    std::string what = "unknown exception";
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr, "kvexec: task %llu '%s' of '%s' threw: %s\n",
                 static_cast<unsigned long long>(task.id()), task.description().c_str(),
                 name().c_str(), what.c_str());
}

}  // namespace kvexec
