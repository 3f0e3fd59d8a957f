// mgmt/management_server.h: the management (REST) endpoint of
// kvexec-server (--mgmt-port): libevent's evhttp on a thread and event
// loop of its own, answering what management_routes.h lists.
//
// Why its own thread: a scope or collection change waits for the bucket to
// sync its manifest to disk, and a front-end loop must never block. One
// thread is enough: management requests are rare, and the bucket
// serialises manifest changes anyway. Requests are answered one at a
// time, in the order they arrive.
//
// Thread safety: the owner (the Server's main thread) calls start() and
// stop(); requests run on the management thread only, which reads the
// context (read-only while serving) and calls the bucket (safe from any
// thread). stop() reaches the loop from another thread, so libevent must be
// set up for threads (evthread_use_pthreads) before construction, as the
// front ends already require.
#pragma once

#include <event2/event.h>
#include <event2/http.h>

#include <cstdint>
#include <thread>

#include "server/server_context.h"

namespace kvexec::server::mgmt {

class ManagementServer {
  public:
    explicit ManagementServer(ServerContext& context);
    // Stops, if still serving.
    ~ManagementServer();
    ManagementServer(const ManagementServer&) = delete;
    ManagementServer& operator=(const ManagementServer&) = delete;

    // Binds config.host:config.mgmtPort (0: any free port), records the
    // port in context.boundMgmtPort and starts serving; returns the port.
    // Throws std::runtime_error if the address cannot be bound.
    std::uint16_t start();
    // Stops accepting and serving, and joins the thread: a request being
    // answered (a manifest change waiting for its fsync) finishes first,
    // though its reply may not reach the client. Idempotent.
    void stop();

  private:
    static void onRequest(evhttp_request* request, void* self);
    void answer(evhttp_request* request);

    ServerContext& context_;
    event_base* base_ = nullptr;
    evhttp* http_ = nullptr;
    std::thread thread_;
};

}  // namespace kvexec::server::mgmt
