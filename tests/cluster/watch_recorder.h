// watch_recorder.h: collects what a watch delivers, so that a test can
// wait, with a deadline, for the events it expects instead of sleeping.
//
// Thread safety: onEvent/onEnd (the watch thread) and the waits (the test
// thread) may run at once; everything is under one mutex.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/etcd_watch.h"

namespace kvexec::cluster::test {

class WatchRecorder {
  public:
    EtcdWatch::OnEvent onEvent() {
        return [this](const WatchEvent& event) {
            std::lock_guard lock(mutex_);
            events_.push_back(event);
            changed_.notify_all();
        };
    }
    EtcdWatch::OnEnd onEnd() {
        return [this](const std::string& reason) {
            std::lock_guard lock(mutex_);
            endReason_ = reason;
            ended_ = true;
            changed_.notify_all();
        };
    }

    // Waits until `count` events came (true) or the deadline passed.
    bool waitForEvents(std::size_t count, std::chrono::milliseconds deadline) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, deadline, [&] { return events_.size() >= count; });
    }
    // Waits until an event satisfies `match` (true) or the deadline passed.
    bool waitFor(const std::function<bool(const WatchEvent&)>& match,
                 std::chrono::milliseconds deadline) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(
            lock, deadline, [&] { return std::any_of(events_.begin(), events_.end(), match); });
    }
    // Waits until the stream ended (true) or the deadline passed.
    bool waitForEnd(std::chrono::milliseconds deadline) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, deadline, [&] { return ended_; });
    }

    std::vector<WatchEvent> events() {
        std::lock_guard lock(mutex_);
        return events_;
    }
    std::string endReason() {
        std::lock_guard lock(mutex_);
        return endReason_;
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<WatchEvent> events_;
    std::string endReason_;
    bool ended_ = false;
};

}  // namespace kvexec::cluster::test
