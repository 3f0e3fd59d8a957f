#include "server/front_end.h"

#include <pthread.h>

#include <stdexcept>
#include <string>

#include "server/connection.h"
#include "server/tls_context.h"

namespace kvexec::server {

FrontEnd::FrontEnd(ServerContext& context, std::size_t index)
    : context_(context), bucketCounters_(context.buckets.size()), index_(index) {
    base_ = event_base_new();
    if (base_ == nullptr) {
        throw std::runtime_error("event_base_new failed");
    }
    inbox_ = event_new(base_, -1, EV_PERSIST, &FrontEnd::onInbox, this);
    event_add(inbox_, nullptr);
}

RequestCounters& FrontEnd::requestCounters(const ServedBucket& served) {
    return bucketCounters_.at(context_.indexOf(served));
}

std::uint64_t FrontEnd::sum(const std::vector<FrontEnd*>& frontEnds,
                            FrontEndCounters::Counter FrontEndCounters::*counter) {
    std::uint64_t total = 0;
    for (const FrontEnd* frontEnd : frontEnds) {
        total += (frontEnd->counters_.*counter).load(std::memory_order_acquire);
    }
    return total;
}

std::uint64_t FrontEnd::sum(const std::vector<FrontEnd*>& frontEnds, const ServedBucket& served,
                            RequestCounters::Counter RequestCounters::*counter) {
    std::uint64_t total = 0;
    for (FrontEnd* frontEnd : frontEnds) {
        total += (frontEnd->requestCounters(served).*counter).load(std::memory_order_acquire);
    }
    return total;
}

FrontEnd::~FrontEnd() {
    stopAndJoin();
    event_free(inbox_);
    event_base_free(base_);
}

void FrontEnd::start() {
    thread_ = std::thread([this] {
        const std::string name = "frontend_" + std::to_string(index_);
        pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
        // The inbox is no I/O event: without this flag the loop would exit at once.
        event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
    });
    threadId_ = thread_.get_id();
}

void FrontEnd::finishConnections() {
    post([this] {
        auto open = connections_;  // finishing may close (and forget) a connection
        for (auto& [raw, connection] : open) {
            connection->finishAndClose();
        }
    });
}

void FrontEnd::stopAndJoin() {
    if (!thread_.joinable()) {
        return;
    }
    post([this] {
        auto open = connections_;
        for (auto& [raw, connection] : open) {
            connection->close();
        }
        event_base_loopexit(base_, nullptr);
    });
    thread_.join();
}

void FrontEnd::post(std::function<void()> work) {
    bool wasEmpty = false;
    {
        kvexec::detail::MutexLock lock(mutex_);
        wasEmpty = queue_.empty();
        queue_.push_back(std::move(work));
    }
    if (wasEmpty) {
        event_active(inbox_, EV_READ, 0);
    }
}

void FrontEnd::adopt(evutil_socket_t fd, bool tls) {
    post([this, fd, tls] {
        SSL* session = nullptr;
        if (tls && (session = context_.tls->newSession()) == nullptr) {
            context_.counters.currConnections.fetch_sub(1, std::memory_order_relaxed);
            context_.counters.rejectedConnections.fetch_add(1, std::memory_order_relaxed);
            evutil_closesocket(fd);  // out of memory: as a refused accept
            return;
        }
        auto connection = std::make_shared<Connection>(*this, context_, fd, session);
        connections_.emplace(connection.get(), connection);
        connection->start();
    });
}

void FrontEnd::describeConnections(std::function<void(ConnectionList)> done) {
    post([this, done = std::move(done)] {
        ConnectionList list;
        list.reserve(connections_.size());
        for (const auto& [raw, connection] : connections_) {
            list.push_back(connection->describe());
        }
        done(std::move(list));
    });
}

void FrontEnd::pushClusterMap(const ServedBucket& served,
                              std::shared_ptr<const ClusterTopology> topology) {
    post([this, &served, topology = std::move(topology)] {
        auto open = connections_;  // a push may close a connection that cannot take it
        for (const auto& [raw, connection] : open) {
            connection->pushClusterMap(served, *topology);
        }
    });
}

void FrontEnd::forget(Connection* connection) {
    connections_.erase(connection);
}

void FrontEnd::onInbox(evutil_socket_t, short, void* self) {
    static_cast<FrontEnd*>(self)->drainInbox();
}

void FrontEnd::drainInbox() {
    std::vector<std::function<void()>> work;
    {
        kvexec::detail::MutexLock lock(mutex_);
        work.swap(queue_);
    }
    for (auto& item : work) {
        item();
    }
}

}  // namespace kvexec::server
