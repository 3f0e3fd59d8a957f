// pillowfight/connection.h: one client: a TCP connection on a libevent
// loop that bootstraps (Handshake, unless --protocol memcached) and then
// runs closed-loop batches: schedule B operations, wait for all B answers,
// repeat for --num-cycles batches (load) or until its key slice is stored
// (population), or until the run's stop flag is set.
//
// On a cluster (a map of several servers) the client also opens one
// connection to each other node and sends each operation to its vBucket's
// active, as an SDK does; a batch spans the nodes. The map is read once:
// an operation the map sends to the wrong node is counted as the
// NOT_MY_VBUCKET error it gets.
//
// Every operation is accounted for: answered (latency recorded, error
// statuses counted by name) or, when the connection fails or a batch goes
// unanswered for --timeout, counted as an error of that kind (a failure
// with nothing in flight, e.g. in the bootstrap, counts once). A failed
// client is not reconnected: the report shows the failures instead.
//
// Between its bootstrap and the run's go (RunState) a client waits idle;
// the LoadLoop starts it.
//
// Thread safety: a Connection lives on the event loop of one thread and is
// touched only from it; it reports to the shared RunState (atomics).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pillowfight/handshake.h"
#include "pillowfight/run_state.h"
#include "pillowfight/workload.h"

struct bufferevent;
struct event;
struct event_base;
struct sockaddr;

namespace kvexec::pillowfight {

class Connection {
  public:
    // `onReady` runs (on the loop) once the client has bootstrapped and
    // waits for the run's go; `onFinished` once it is done or failed.
    Connection(event_base* base, RunState& run, Workload& workload,
               std::function<void(Connection&)> onReady, std::function<void()> onFinished);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    void start();
    // Sends the first batch (after the run's go).
    void startLoad();
    bool finished() const { return finished_; }

  private:
    struct Pending {
        std::uint32_t opaque;
        OpKind kind;
        bool subdoc;  // a lookup or mutation, not a whole-document get or set
        Clock::time_point start;
    };
    // One server's connection: its bootstrap and the bytes of the batch
    // bound for it. links_[0] is the bootstrap node's.
    struct Link {
        Link(Connection& c, const Options& options) : owner(c), handshake(options) {}
        Connection& owner;
        bufferevent* bev = nullptr;
        Handshake handshake;
        std::string out;
    };

    static void onRead(bufferevent* bev, void* link);
    static void onEvent(bufferevent* bev, short what, void* link);
    static void onTimeout(int fd, short what, void* self);

    void connect(const sockaddr* address, int length);
    void readResponses(Link& link);
    void handshakeResponse(Link& link, const protocol::Response& r);
    void bootstrapped(Link& link);
    void connectToEveryNode();
    Link& linkFor(std::uint16_t vbucket);
    void loadResponse(const protocol::Response& r);
    void ready();
    void armTimeout();
    void sendBatch();
    bool nextOp(Op& op);
    void appendOp(const Op& op, std::uint32_t opaque);
    std::string writeFrames() const;
    void fail(const std::string& what);
    void finish();

    event_base* base_;
    RunState& run_;
    Workload& workload_;
    std::function<void(Connection&)> onReady_;
    std::function<void()> onFinished_;
    event* timer_ = nullptr;
    std::vector<std::unique_ptr<Link>> links_;
    std::size_t bootstrapping_ = 0;    // links still connecting or in their handshake
    ClusterRoute route_;               // from the bootstrap node's map
    std::vector<Link*> linkOfServer_;  // route_.servers' links; empty: links_[0] for all
    std::uint16_t vbucketCount_ = 1;
    std::string keyPrefix_;  // the collection id in front of each key (--collection)
    std::string wireKey_;    // scratch: the prefixed key of the op being encoded
    std::vector<Pending> pending_;
    std::uint32_t nextOpaque_ = Handshake::kLastOpaque + 1;
    std::int64_t batchesDone_ = 0;
    bool finished_ = false;
};

}  // namespace kvexec::pillowfight
