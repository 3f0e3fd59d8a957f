// bench/peers/libevent_peer.cc: evtimer_add re-arm on one event_base.
//
// evthread_use_pthreads() must run before the base is made, so that
// evtimer_add() from the benchmark threads locks the base and wakes its loop.
#include "peers/libevent_peer.h"

#include <event2/event.h>
#include <event2/thread.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kvexec::bench {
namespace {

timeval toTimeval(Delay d) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
}

void onTimeout(evutil_socket_t, short, void*) {}

void onStop(evutil_socket_t, short, void* base) {
    event_base_loopbreak(static_cast<event_base*>(base));
}

class LibeventTimers final : public TimeoutTarget {
  public:
    LibeventTimers(std::size_t count, const DelayTable& delays) {
        if (base_ == nullptr)
            throw std::runtime_error("libevent setup failed");
        stop_ = event_new(base_, -1, 0, onStop, base_);
        events_.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            events_.push_back(evtimer_new(base_, onTimeout, nullptr));
            rearm(i, delays.at(i));
        }
        thread_ = std::thread([this] { event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY); });
    }

    // The loop may not have started yet, and event_base_loop() clears an
    // earlier loopbreak: activate an event whose callback breaks instead.
    ~LibeventTimers() override {
        event_active(stop_, EV_TIMEOUT, 0);
        thread_.join();
        for (event* ev : events_)
            event_free(ev);
        event_free(stop_);
        event_base_free(base_);
    }

    void rearm(std::size_t index, Delay d) override {
        const timeval tv = toTimeval(d);
        evtimer_add(events_[index], &tv);
    }

  private:
    static event_base* makeBase() {
        static const int threading = evthread_use_pthreads();
        return threading == 0 ? event_base_new() : nullptr;
    }

    event_base* base_ = makeBase();
    event* stop_ = nullptr;
    std::vector<event*> events_;
    std::thread thread_;
};

}  // namespace

Implementation libeventPeer() {
    return {"Peer<Libevent>", "Libevent", {}, {}, [](std::size_t count, const DelayTable& delays) {
                return std::make_unique<LibeventTimers>(count, delays);
            }};
}

}  // namespace kvexec::bench
