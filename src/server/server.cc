#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "server/bound_port.h"

namespace kvexec::server {
namespace {

sockaddr_storage parseAddress(const std::string& host, std::uint16_t port, socklen_t& length) {
    sockaddr_storage address{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    const std::string name = host == "localhost" ? "127.0.0.1" : host;
    if (inet_pton(AF_INET, name.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, name.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        length = sizeof(sockaddr_in6);
    } else {
        throw std::invalid_argument("--host: not a numeric IPv4 or IPv6 address: " + host);
    }
    return address;
}

}  // namespace

Server::Server(ServerContext& context) : context_(context) {
    base_ = event_base_new();
    if (base_ == nullptr) {
        throw std::runtime_error("event_base_new failed");
    }
    stop_ = event_new(base_, -1, 0, &Server::onStop, this);
    acceptResume_ = evtimer_new(base_, &Server::onAcceptResume, this);
}

Server::~Server() {
    clusterNodes_.clear();  // leaves the clusters, if run() did not
    for (auto& admin : clusterAdmins_) {
        admin->close();  // a REST request in hand stops waiting for the nodes
    }
    management_.reset();  // stopped (thread joined) first, if run() did not
    for (auto& served : context_.buckets) {
        served.cluster->admin = nullptr;
    }
    context_.tls = nullptr;  // tls_ goes with the Server
    for (auto* e : {sigterm_, sigint_, stop_, acceptResume_}) {
        if (e != nullptr) {
            event_free(e);
        }
    }
    forEachListener(&evconnlistener_free);
    context_.frontEnds.clear();
    frontEnds_.clear();
    event_base_free(base_);
}

evconnlistener* Server::listen(std::uint16_t port, const char* option) {
    socklen_t length = 0;
    sockaddr_storage address = parseAddress(context_.config.host, port, length);
    evconnlistener* listener = evconnlistener_new_bind(
        base_, &Server::onAccept, this, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 1024,
        reinterpret_cast<sockaddr*>(&address), static_cast<int>(length));
    if (listener == nullptr) {
        throw cannotListen(option, context_.config.host, port);
    }
    evconnlistener_set_error_cb(listener, &Server::onAcceptError);
    return listener;
}

void Server::run(std::ostream& ready) {
    listener_ = listen(context_.config.port, "--port");
    const std::uint16_t port = boundPort(evconnlistener_get_fd(listener_));
    context_.boundPort.store(port);
    const bool v6 = context_.config.host.find(':') != std::string::npos;
    const std::string host = v6 ? "[" + context_.config.host + "]" : context_.config.host;
    if (context_.config.tlsPort || context_.config.mgmtTlsPort) {
        tls_ = std::make_unique<TlsContext>(context_.config.tlsCert, context_.config.tlsKey);
        context_.tls = tls_.get();
    }
    if (!context_.config.clusterTlsCa.empty()) {
        clusterTls_ = std::make_unique<TlsClientContext>(context_.config.clusterTlsCa);
    }
    if (context_.config.tlsPort) {
        tlsListener_ = listen(*context_.config.tlsPort, "--tls-port");
        const std::uint16_t tlsPort = boundPort(evconnlistener_get_fd(tlsListener_));
        context_.boundTlsPort.store(tlsPort);
        ready << "kvexec-server: tls on " << host << ":" << tlsPort << std::endl;
    }
    if (context_.config.cluster) {
        // Before the management endpoint, which sends changes to them.
        for (auto& served : context_.buckets) {
            clusterAdmins_.push_back(std::make_unique<ClusterAdmin>(
                etcdEndpoint(context_.config), clusterRoot(served.name), *served.bucket));
            served.cluster->admin = clusterAdmins_.back().get();
        }
    }
    if (context_.config.mgmtPort) {
        // Before the ready line: whoever waits for that line finds this one.
        management_ = std::make_unique<mgmt::ManagementServer>(context_);
        const std::uint16_t mgmtPort = management_->start();
        ready << "kvexec-server: mgmt on " << host << ":" << mgmtPort << std::endl;
        if (const std::uint16_t httpsPort = context_.boundMgmtTlsPort.load()) {
            ready << "kvexec-server: mgmt tls on " << host << ":" << httpsPort << std::endl;
        }
    }
    // Every front end is listed in the context before any starts: the
    // list is read-only from then on.
    for (std::size_t i = 0; i < context_.config.frontendThreads; ++i) {
        frontEnds_.push_back(std::make_unique<FrontEnd>(context_, i));
        context_.frontEnds.push_back(frontEnds_.back().get());
    }
    for (auto& frontEnd : frontEnds_) {
        frontEnd->start();
    }
    if (context_.config.cluster) {
        for (const auto& served : context_.buckets) {
            clusterNodes_.push_back(
                std::make_unique<ClusterNode>(context_, served, clusterTls_.get()));
        }
    }
    sigterm_ = evsignal_new(base_, SIGTERM, &Server::onSignal, this);
    sigint_ = evsignal_new(base_, SIGINT, &Server::onSignal, this);
    event_add(sigterm_, nullptr);
    event_add(sigint_, nullptr);
    sigset_t stopSignals;  // held since main() began; one that came meanwhile is taken now
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGTERM);
    sigaddset(&stopSignals, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &stopSignals, nullptr);
    ready << "kvexec-server: ready on " << host << ":" << port << std::endl;

    event_base_dispatch(base_);

    // Graceful stop, in order: 0. leave the cluster (the lease is revoked,
    // so the others remap at once); 1. accept nothing more; 2. the
    // management endpoint stops (a manifest change in hand finishes
    // first); 3. every connection finishes its request in flight (a durable
    // write answers or times out), sends its responses and closes; 4. the
    // loops stop. The caller then destroys the bucket, which persists what
    // is dirty and closes its files.
    clusterNodes_.clear();
    forEachListener(&evconnlistener_disable);
    event_del(acceptResume_);
    if (management_) {
        management_->stop();
    }
    for (auto& frontEnd : frontEnds_) {
        frontEnd->finishConnections();
    }
    waitForConnectionsToFinish();
    for (auto& frontEnd : frontEnds_) {
        frontEnd->stopAndJoin();
    }
}

void Server::waitForConnectionsToFinish() {
    // Bounded by the longest SyncWrite timeout plus time to send responses;
    // whatever is left then is closed by stopAndJoin.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(35);
    while ((context_.counters.currConnections.load(std::memory_order_acquire) != 0 ||
            FrontEnd::sum(context_.frontEnds, &FrontEndCounters::operationsInFlight) != 0) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // main thread, stopping
    }
}

void Server::requestStop() {
    event_active(stop_, 0, 0);
}

void Server::onStop(evutil_socket_t, short, void* self) {
    event_base_loopbreak(static_cast<Server*>(self)->base_);
}

void Server::onSignal(evutil_socket_t, short, void* self) {
    event_base_loopbreak(static_cast<Server*>(self)->base_);
}

void Server::onAccept(evconnlistener* listener, evutil_socket_t fd, sockaddr*, int, void* self) {
    auto* server = static_cast<Server*>(self);
    // Counted here, at accept, so that a burst cannot overshoot the limit
    // before the front ends have set the connections up.
    auto& open = server->context_.counters.currConnections;
    if (open.fetch_add(1, std::memory_order_acq_rel) >= server->context_.config.maxConnections) {
        open.fetch_sub(1, std::memory_order_acq_rel);
        server->refuse(fd);
        return;
    }
    server->acceptFailing_ = false;
    auto& frontEnd = *server->frontEnds_[server->next_++ % server->frontEnds_.size()];
    frontEnd.adopt(fd, listener == server->tlsListener_);
}

void Server::refuse(evutil_socket_t fd) {
    // As memcached: one error line (text clients show it), then close. The
    // connections already in are untouched. Best effort, never blocking.
    context_.counters.rejectedConnections.fetch_add(1, std::memory_order_relaxed);
    constexpr std::string_view kTooMany = "ERROR Too many open connections\r\n";
    (void)send(fd, kTooMany.data(), kTooMany.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    evutil_closesocket(fd);
}

void Server::onAcceptError(evconnlistener* listener, void* self) {
    // Typically EMFILE: the listener stays readable, so retrying at once
    // would spin. Pause accepting briefly; connections already in go on.
    auto* server = static_cast<Server*>(self);
    if (!server->acceptFailing_) {  // once per episode, not every 100 ms
        server->acceptFailing_ = true;
        std::cerr << "kvexec-server: accept failed: "
                  << evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR())
                  << "; pausing accepts until it succeeds again\n";
    }
    server->context_.counters.listenDisabled.fetch_add(1, std::memory_order_relaxed);
    evconnlistener_disable(listener);
    const timeval pause{0, 100'000};
    evtimer_add(server->acceptResume_, &pause);
}

void Server::onAcceptResume(evutil_socket_t, short, void* self) {
    static_cast<Server*>(self)->forEachListener(&evconnlistener_enable);
}

}  // namespace kvexec::server
