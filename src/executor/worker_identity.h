// worker_identity.h: which worker of which pool queue the calling thread is,
// so that setThreadCount() can refuse to stop (and so join) its caller.
//
// Thread safety: thread-local; each call concerns the calling thread only.
#pragma once

#include <cstddef>

namespace kvexec::detail {

// Called once by a worker thread when it starts. `queue` identifies the
// per-type queue the worker serves (any stable address of the backend's).
void setCurrentWorker(const void* queue, std::size_t index) noexcept;
// True if the calling thread is a worker of `queue` with index >= n.
bool callerIsWorkerAtOrAbove(const void* queue, std::size_t n) noexcept;

}  // namespace kvexec::detail
