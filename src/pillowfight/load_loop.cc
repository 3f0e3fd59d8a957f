#include "pillowfight/load_loop.h"

#include <event2/event.h>

#include <iostream>

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
        clients.push_back(std::make_unique<Connection>(base.get(), run_, *workload, [&] {
            if (--active == 0) {
                event_base_loopbreak(base.get());
            }
        }));
    }
    for (auto& client : clients) {
        client->start();
    }
    if (active > 0) {
        event_base_dispatch(base.get());
    }
    clients.clear();  // closes the sockets before the loop goes
}

}  // namespace kvexec::pillowfight
