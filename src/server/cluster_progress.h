// server/cluster_progress.h: how far every node of the cluster has got with
// something a REST request asked of them all (the manifest uid they hold,
// the flushes they carried out), as the cluster node learns it from their
// statuses; the request waits here until they all have.
//
// Thread safety: every member from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>

#include "executor/thread_annotations.h"

namespace kvexec::server {

class ClusterProgress {
  public:
    // The lowest value the registered nodes have reached (the agent thread).
    void observe(std::uint64_t everywhere) EXCLUDES(mutex_);
    // No more observations come (the node left the cluster).
    void close() EXCLUDES(mutex_);
    // Waits until every node has reached `target`, the progress is closed,
    // or `timeout` passed; true only in the first case.
    bool waitFor(std::uint64_t target, std::chrono::milliseconds timeout) EXCLUDES(mutex_);

  private:
    detail::Mutex mutex_;
    std::condition_variable observed_;
    std::uint64_t everywhere_ GUARDED_BY(mutex_) = 0;
    bool closed_ GUARDED_BY(mutex_) = false;
};

}  // namespace kvexec::server
