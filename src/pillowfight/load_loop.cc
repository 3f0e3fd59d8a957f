#include "pillowfight/load_loop.h"

#include <event2/event.h>

#include "pillowfight/connection.h"

namespace kvexec::pillowfight {

void LoadLoop::start() {
    thread_ = std::thread([this] { run(); });
}

void LoadLoop::join() {
    if (thread_.joinable()) {
        thread_.join();
    }
}

void LoadLoop::run() {
    std::unique_ptr<event_base, void (*)(event_base*)> base(event_base_new(), &event_base_free);
    if (!base) {
        run_.errors.add("cannot create an event loop", workloads_.size());
        run_.clientsDone.fetch_add(workloads_.size());
        return;
    }
    std::size_t active = workloads_.size();
    std::vector<std::unique_ptr<Connection>> clients;
    clients.reserve(workloads_.size());
    for (Workload* workload : workloads_) {
        clients.push_back(std::make_unique<Connection>(
            base.get(), run_, *workload,
            [this](Connection& client) {
                waiting_.push_back(&client);
                onPoll(-1, 0, this);
            },
            [&] {
                if (--active == 0) {
                    event_base_loopbreak(base.get());
                }
            }));
    }
    poll_ = evtimer_new(base.get(), &LoadLoop::onPoll, this);
    for (auto& client : clients) {
        client->start();
    }
    if (active > 0) {
        event_base_dispatch(base.get());
    }
    clients.clear();  // closes the sockets before the loop goes
    event_free(poll_);
    poll_ = nullptr;
}

// Starts the waiting clients once the run says go; until then polls every
// millisecond (cheap, and only while clients wait).
void LoadLoop::onPoll(int, short, void* self) {
    auto* loop = static_cast<LoadLoop*>(self);
    if (loop->waiting_.empty()) {
        return;
    }
    if (!loop->run_.go.load(std::memory_order_acquire)) {
        if (loop->poll_ != nullptr && evtimer_pending(loop->poll_, nullptr) == 0) {
            const timeval millisecond{0, 1000};
            evtimer_add(loop->poll_, &millisecond);
        }
        return;
    }
    auto waiting = std::move(loop->waiting_);
    loop->waiting_.clear();
    for (Connection* client : waiting) {
        client->startLoad();
    }
}

}  // namespace kvexec::pillowfight
