// cluster/etcd_watch.h: one etcd watch stream (POST /v3/watch), read on a
// thread of its own and delivered, event by event, in etcd's order (store
// revision order) to a callback. How a node learns that the map, the
// leader or the membership changed.
//
// Thread safety:
// - onEvent and onEnd run on the watch's thread, one at a time, never
//   after stop() has returned. They must not call stop() or destroy the
//   watch (that would wait for their own thread).
// - stop() may be called from any other thread, at once from several, and
//   again (it is idempotent); the destructor calls it.
// - The callbacks must not throw; if one does, the stream ends (onEnd).
//
// The stream has no timeout of its own: etcd sends nothing while nothing
// changes. When it ends for any reason but stop() (etcd gone, watch
// canceled, e.g. because startRevision was compacted), onEnd is called
// once with the reason and no event follows; to go on, start a new watch
// from the last revision seen + 1.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/etcd_types.h"
#include "executor/thread_annotations.h"

namespace kvexec::cluster {

class EtcdWatch {
  public:
    using OnEvent = std::function<void(const WatchEvent&)>;
    using OnEnd = std::function<void(const std::string& reason)>;

    // Opens a watch of the keys in [key, rangeEnd) (rangeEnd empty: `key`
    // alone) from `startRevision` (0: changes after now), and returns once
    // etcd has confirmed it. Throws EtcdError if etcd refuses, or does not
    // confirm within `timeout`.
    EtcdWatch(const EtcdEndpoint& endpoint, std::string key, std::string rangeEnd,
              std::int64_t startRevision, OnEvent onEvent, OnEnd onEnd,
              std::chrono::milliseconds timeout);
    ~EtcdWatch();
    EtcdWatch(const EtcdWatch&) = delete;
    EtcdWatch& operator=(const EtcdWatch&) = delete;

    // Ends the stream and joins the thread; no callback runs afterwards.
    void stop();

  private:
    class Stream;  // the libevent side, touched only by the watch thread

    enum class Phase { Opening, Open, Ended };
    // From the watch thread's Stream: the stream's confirmation or end.
    void advance(Phase phase, const std::string& reason) EXCLUDES(mutex_);

    std::unique_ptr<Stream> stream_;
    std::thread thread_;
    std::once_flag stopOnce_;
    detail::Mutex mutex_;
    std::condition_variable phaseChanged_;
    Phase phase_ GUARDED_BY(mutex_) = Phase::Opening;
    std::string endReason_ GUARDED_BY(mutex_);
};

}  // namespace kvexec::cluster
