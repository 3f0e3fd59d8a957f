// mgmt/management_server.h: the management (REST) endpoint of
// kvexec-server (--mgmt-port): libevent's evhttp on a thread and event
// loop of its own, answering what management_routes.h lists.
//
// Why its own threads: a scope or collection change waits for the bucket
// to sync its manifest to disk, and on a cluster a change or a flush waits
// for every node (up to 5 s and 15 s, cluster_admin.h); a front-end loop
// must never block. The loop thread only reads requests and writes
// replies; kWorkers worker threads answer them, so a flush waiting for a
// hung node does not hold up a listing of scopes. Up to kQueuedRequests
// more wait, in arrival order; beyond that a request gets 503 at once.
//
// Thread safety: the owner (the Server's main thread) calls start() and
// stop(). The loop thread parses each request into an HttpRequest (no
// libevent object leaves it) and sends the replies that workers hand back
// (ready_, then event_active of repliesReady_, which libevent allows from
// any thread once set up for threads: evthread_use_pthreads before
// construction, as the front ends already require). Workers read the
// context (read-only while serving) and call the bucket and the cluster
// admin (both safe from any thread).
#pragma once

#include <event2/event.h>
#include <event2/http.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "executor/thread_annotations.h"
#include "server/mgmt/management_routes.h"
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
    // With config.mgmtTlsPort (and context.tls) it also serves HTTPS
    // there, recorded in context.boundMgmtTlsPort. Throws
    // std::runtime_error if an address cannot be bound.
    std::uint16_t start();
    // Stops accepting and serving, and joins the threads: a request being
    // answered (a manifest change waiting for its fsync) finishes first,
    // though its reply may not reach the client; queued ones get 503.
    // Idempotent.
    void stop();

    static constexpr std::size_t kWorkers = 4;
    static constexpr std::size_t kQueuedRequests = 64;

  private:
    // A request and its answer; `request` is only touched on the loop
    // thread (or after it stopped).
    struct Exchange {
        evhttp_request* request = nullptr;
        HttpRequest parsed;
        HttpResponse response;
    };

    static void onRequest(evhttp_request* request, void* self);
    // The HTTPS endpoint's connections: a TLS bufferevent each.
    static bufferevent* newTlsConnection(event_base* base, void* self);
    // Limits, callbacks and methods, the same for both endpoints.
    void configure(evhttp* http);
    // Binds `http` to host:port; throws naming `option`.
    std::uint16_t bind(evhttp* http, std::uint16_t port, const char* option);
    static void onRepliesReady(evutil_socket_t, short, void* self);
    // Loop thread: queues the request for a worker, or answers it at once
    // (a bad path, a full queue, stopping).
    void accept(evhttp_request* request) EXCLUDES(mutex_);
    void work() EXCLUDES(mutex_);
    // Tells the workers to stop once the queue is empty, and joins them.
    void stopWorkers() EXCLUDES(mutex_);
    // Sends every reply the workers finished.
    void sendReplies() EXCLUDES(mutex_);
    static void send(evhttp_request* request, const HttpResponse& response);

    ServerContext& context_;
    event_base* base_ = nullptr;
    evhttp* http_ = nullptr;
    evhttp* https_ = nullptr;  // with --mgmt-tls-port
    event* repliesReady_ = nullptr;
    std::thread thread_;
    std::vector<std::thread> workers_;
    detail::Mutex mutex_;
    std::condition_variable workQueued_;
    bool stopping_ GUARDED_BY(mutex_) = false;
    std::deque<Exchange> queued_ GUARDED_BY(mutex_);  // for a worker
    std::vector<Exchange> ready_ GUARDED_BY(mutex_);  // answered, to send
};

}  // namespace kvexec::server::mgmt
