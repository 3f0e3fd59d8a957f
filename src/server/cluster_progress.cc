#include "server/cluster_progress.h"

namespace kvexec::server {

void ClusterProgress::observe(std::uint64_t everywhere) {
    {
        detail::MutexLock lock(mutex_);
        everywhere_ = everywhere;
    }
    observed_.notify_all();
}

void ClusterProgress::close() {
    {
        detail::MutexLock lock(mutex_);
        closed_ = true;
    }
    observed_.notify_all();
}

bool ClusterProgress::waitFor(std::uint64_t target, std::chrono::milliseconds timeout) {
    detail::UniqueLock lock(mutex_);
    observed_.wait_for(lock.native(), timeout, [&] {
        mutex_.assertHeld();
        return closed_ || everywhere_ >= target;
    });
    return everywhere_ >= target;
}

}  // namespace kvexec::server
