// front_end.h: one front-end thread: a libevent event_base, the
// connections it serves, and an inbox through which other threads hand it
// work (new connections, engine completions).
//
// Thread safety: post() may be called from any thread (it locks the inbox
// and activates the inbox event; libevent is set up for threads with
// evthread_use_pthreads before any base exists). Everything else about the
// connections runs on the loop thread only; the front end never blocks on
// the engine or another thread.
#pragma once

#include <event2/event.h>

#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "executor/thread_annotations.h"
#include "server/connection_info.h"
#include "server/request_counters.h"
#include "server/server_context.h"

namespace kvexec::server {

class Connection;

class FrontEnd {
  public:
    FrontEnd(ServerContext& context, std::size_t index);
    ~FrontEnd();
    FrontEnd(const FrontEnd&) = delete;
    FrontEnd& operator=(const FrontEnd&) = delete;

    void start();
    // Graceful stop, any thread: every connection stops reading requests,
    // finishes the one in flight, sends its responses and closes.
    void finishConnections();
    // Asks the loop to close every connection and exit; then joins.
    void stopAndJoin();

    // Runs `work` on the loop thread, soon. Any thread.
    void post(std::function<void()> work);
    // Takes an accepted socket; any thread. `tls`: accepted on the TLS
    // port, the connection speaks TLS (context.tls).
    void adopt(evutil_socket_t fd, bool tls = false);
    // Any thread: describes this front end's connections on its loop
    // thread and calls `done` there with the list.
    void describeConnections(std::function<void(ConnectionList)> done);
    // Any thread: pushes `served`'s `topology`, on the loop thread, to each
    // connection on that bucket that asked for it (Connection::pushClusterMap).
    void pushClusterMap(const ServedBucket& served,
                        std::shared_ptr<const ClusterTopology> topology);

    // What this front end's connections have counted, the server's and
    // each bucket's; its connections add, any thread reads.
    FrontEndCounters& counters() { return counters_; }
    RequestCounters& requestCounters(const ServedBucket& served);
    // One counter summed over every front end (STAT, the graceful stop).
    static std::uint64_t sum(const std::vector<FrontEnd*>& frontEnds,
                             FrontEndCounters::Counter FrontEndCounters::*counter);
    // One of `served`'s counters summed over every front end.
    static std::uint64_t sum(const std::vector<FrontEnd*>& frontEnds, const ServedBucket& served,
                             RequestCounters::Counter RequestCounters::*counter);

    event_base* base() const { return base_; }
    bool onLoopThread() const { return std::this_thread::get_id() == threadId_; }
    // Loop thread only: a connection is done and may be released.
    void forget(Connection* connection);

  private:
    static void onInbox(evutil_socket_t, short, void* self);
    void drainInbox();

    FrontEndCounters counters_;  // first: its own cache lines, no neighbour written by others
    ServerContext& context_;
    // One set per served bucket, in context_.buckets' order (each aligned
    // to cache lines of its own).
    std::vector<RequestCounters> bucketCounters_;
    std::size_t index_;
    event_base* base_ = nullptr;
    event* inbox_ = nullptr;
    kvexec::detail::Mutex mutex_;
    std::vector<std::function<void()>> queue_ GUARDED_BY(mutex_);
    std::thread thread_;
    std::thread::id threadId_;
    // Loop thread only.
    std::unordered_map<Connection*, std::shared_ptr<Connection>> connections_;
};

}  // namespace kvexec::server
