// server.h: kvexec-server as an object: listens, spreads accepted
// connections over the front-end threads, and stops gracefully.
//
// Thread safety: run() is called once, from the thread that built the
// Server (the main thread); it returns after a stop. requestStop() may be
// called from any thread. SIGTERM and SIGINT stop it through the main
// event loop: the caller blocks them in every thread before starting any,
// and run() unblocks them on its own thread once it handles them.
#pragma once

#include <event2/event.h>
#include <event2/listener.h>

#include <memory>
#include <ostream>
#include <vector>

#include "server/cluster_admin.h"
#include "server/cluster_node.h"
#include "server/front_end.h"
#include "server/mgmt/management_server.h"
#include "server/server_context.h"
#include "server/tls_context.h"

namespace kvexec::server {

class Server {
  public:
    explicit Server(ServerContext& context);
    ~Server();

    // Binds (the TLS port too, with --tls-port, once its certificate and
    // key are loaded), starts the management endpoint (with --mgmt-port)
    // and the front ends, joins the cluster (with --cluster; the bound
    // ports are what it registers), prints the ready line to `ready`
    // (preceded by "kvexec-server: mgmt on HOST:PORT" with --mgmt-port and
    // "kvexec-server: tls on HOST:PORT" with --tls-port), then serves
    // until stopped. Stopping: leave the cluster, stop accepting, stop the
    // management endpoint, let every connection finish the request in flight and send
    // its response (bounded by the SyncWrite timeout), close the
    // connections, join the front ends. Throws std::runtime_error if an
    // address cannot be bound or the TLS files cannot be used.
    void run(std::ostream& ready);
    void requestStop();

  private:
    static void onAccept(evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* self);
    static void onAcceptError(evconnlistener*, void* self);
    static void onAcceptResume(evutil_socket_t, short, void* self);
    // Over --max-connections: refuses `fd` with memcached's error line.
    void refuse(evutil_socket_t fd);
    static void onSignal(evutil_socket_t, short, void* self);
    static void onStop(evutil_socket_t, short, void* self);
    // Waits (bounded) until no connection is left.
    void waitForConnectionsToFinish();

    // Binds host:port, accepting into onAccept; throws std::runtime_error
    // naming `option` when it cannot.
    evconnlistener* listen(std::uint16_t port, const char* option);
    // `fn` on the plain listener and, with --tls-port, the TLS one.
    template <class Fn>
    void forEachListener(Fn fn) {
        for (evconnlistener* listener : {listener_, tlsListener_}) {
            if (listener != nullptr) {
                fn(listener);
            }
        }
    }

    ServerContext& context_;
    event_base* base_ = nullptr;
    evconnlistener* listener_ = nullptr;
    evconnlistener* tlsListener_ = nullptr;  // with --tls-port
    std::unique_ptr<TlsContext> tls_;        // with --tls-port
    // With --cluster-tls-ca; outlives clusterNodes_, whose replication uses it.
    std::unique_ptr<TlsClientContext> clusterTls_;
    event* sigterm_ = nullptr;
    event* sigint_ = nullptr;
    event* stop_ = nullptr;
    event* acceptResume_ = nullptr;  // accept() failed (out of descriptors): retry later
    bool acceptFailing_ = false;     // main loop only
    // With --cluster, one of each per bucket, in context_.buckets' order.
    // The admins outlive the management endpoint, which changes them.
    std::vector<std::unique_ptr<ClusterAdmin>> clusterAdmins_;
    std::unique_ptr<mgmt::ManagementServer> management_;  // with --mgmt-port
    std::vector<std::unique_ptr<ClusterNode>> clusterNodes_;
    std::vector<std::unique_ptr<FrontEnd>> frontEnds_;
    std::size_t next_ = 0;
};

}  // namespace kvexec::server
