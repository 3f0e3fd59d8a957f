// pillowfight/connection.h: one client: a TCP connection on a libevent
// loop that bootstraps (Handshake, unless --protocol memcached) and then
// runs closed-loop batches: schedule B operations, wait for all B answers,
// repeat for --num-cycles batches (load) or until its key slice is stored
// (population), or until the run's stop flag is set.
//
// On a cluster (a map of several servers) the client also opens one
// connection to each other node and sends each operation to its vBucket's
// active, as an SDK does; a batch spans the nodes. The client follows the
// map as the SDKs do (retry.h): an op answered NOT_MY_VBUCKET or TMPFAIL
// is sent again, to the active of the newest map the client has seen (a
// NOT_MY_VBUCKET answer carries the node's map; a newer one replaces the
// client's, and a node it names that the client has no connection to gets
// one, bootstrapped with the same handshake, its ops held until then). A
// retry is counted by the status that caused it; an op retried more than
// kMaxRetries times counts as the error of its last answer. Backoffs run on
// the loop's timer, never blocking it; the batch waits for them.
//
// Every operation is accounted for: answered (latency recorded from its
// first send, error statuses counted by name) or, when a connection fails
// or a batch goes unanswered for --timeout, counted as an error of that
// kind (a failure with nothing in flight, e.g. in the bootstrap, counts
// once).
//
// On a cluster, once bootstrapped, a connection to one node that drops
// (EOF, a network error, a reconnection's handshake failing) does not fail
// the client, as with the SDKs: its ops in flight follow retry.h's
// retryOfLost() (reads are sent again after a backoff; writes count as
// "SET: connection lost (ambiguous)"), the batch goes on, and the client
// reconnects the link (reconnectDelay(): 10 ms doubling to 1 s; a fresh
// Handshake, given 2 s, or --timeout if shorter) until it succeeds or the
// run ends. Meanwhile ops for that node's vBuckets are held (a retry,
// "node not connected", each taking one of the op's kMaxRetries, then an
// error), and while the map still names the node the client asks a
// connected node for its map every 250 ms (GET_CLUSTER_CONFIG), so that a
// failover's new map, where the node no longer leads, routes them
// elsewhere; the nodes also push each new map (the handshake asks for it:
// HELLO ClustermapChangeNotification), which is taken the same way; a
// link that comes back brings its node's map too. A batch therefore never waits on a
// dead node longer than its ops' retries (about 3 s; --timeout still
// fails the client). A connection failing fails its client otherwise: on
// one server (or --protocol memcached), or during the client's own
// bootstrap; a failed client is not reconnected, the report counts it
// ("clientsFailed" in --json).
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
#include <optional>
#include <string>
#include <vector>

#include <sys/socket.h>

#include "pillowfight/cluster_route.h"
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
    struct Link;
    // An op of the batch on the wire (or waiting for its backoff).
    struct Pending {
        std::uint32_t opaque;
        std::uint32_t slot;       // its Op in batch_
        std::uint16_t vbucket;    // where the key hashes
        std::uint16_t retries;    // sent again so far
        Link* link;               // where it went last
        Clock::time_point start;  // its first send: latency includes retries
    };
    struct Backoff {
        Pending op;
        Clock::time_point due;
        bool held = false;  // waiting for a node being reconnected (or its op was lost)
    };
    // One server's connection: its bootstrap and the bytes bound for it
    // not yet written (held until its bootstrap is done). links_[0] is the
    // bootstrap node's. A link that dropped (cluster only) is reconnected
    // to the same address; ops for it are held meanwhile, not queued.
    struct Link {
        Link(Connection& c, const Options& options, std::string name)
            : owner(c), server(std::move(name)), handshake(std::in_place, options) {}
        Connection& owner;
        const std::string server;  // "host:port", as the map names it
        sockaddr_storage address{};
        int addressLength = 0;
        bufferevent* bev = nullptr;          // null between a drop and the next attempt
        std::optional<Handshake> handshake;  // a fresh one for each connection
        bool ready = false;                  // bootstrapped: `out` may be written
        bool reconnecting = false;           // dropped, not bootstrapped again yet
        unsigned attempts = 0;               // failed reconnections since the drop
        event* timer = nullptr;              // reconnecting: the next attempt, or its deadline
        std::string out;
    };

    static void onRead(bufferevent* bev, void* link);
    static void onEvent(bufferevent* bev, short what, void* link);
    static void onTimeout(int fd, short what, void* self);
    static void onRetry(int fd, short what, void* self);
    static void onLinkTimer(int fd, short what, void* link);
    static void onPoll(int fd, short what, void* self);

    Link& connect(const sockaddr* address, int length, std::string server);
    void open(Link& link);
    bool reconnects() const;
    void lost(Link& link, const std::string& what);
    void reconnect(Link& link);
    void hold(Pending p, bool sent, const char* reason);
    void releaseHeld();
    void pollConfig();
    void batchStep();
    void readResponses(Link& link);
    void serverRequest(const protocol::Response& r);
    void handshakeResponse(Link& link, const protocol::Response& r);
    void bootstrapped(Link& link);
    void routeBy(ClusterRoute route);
    bool adoptNewer(const ClusterRoute& route);
    Link& linkTo(const std::string& server);
    Link& linkFor(std::uint16_t vbucket);
    void loadResponse(Link& link, const protocol::Response& r);
    bool retried(Pending& op, const protocol::Response& r);
    void ready();
    void armTimeout();
    void armRetry();
    void sendBatch();
    bool nextOp(Op& op);
    void send(Pending op);
    void flush();
    std::string writeFrames() const;
    void fail(const std::string& what);
    void finish();

    event_base* base_;
    RunState& run_;
    Workload& workload_;
    std::function<void(Connection&)> onReady_;
    std::function<void()> onFinished_;
    event* timer_ = nullptr;
    event* retryTimer_ = nullptr;               // the earliest backoff's end
    event* pollTimer_ = nullptr;                // GET_CLUSTER_CONFIG while a link is down
    Link* configPoll_ = nullptr;                // where the one in flight went
    std::vector<std::unique_ptr<Link>> links_;  // heap-held: a Link* stays valid
    std::size_t bootstrapping_ = 0;             // the client's own bootstrap: links not done yet
    bool bootstrapped_ = false;                 // ...and done: links opened later hold their ops
    ClusterRoute route_;                        // the newest map seen (the bootstrap node's first)
    std::vector<Link*> linkOfServer_;           // route_.servers' links; empty: links_[0] for all
    std::uint16_t vbucketCount_ = 1;
    std::string keyPrefix_;  // the collection id in front of each key (--collection)
    std::string wireKey_;    // scratch: the prefixed key of the op being encoded
    std::vector<Op> batch_;  // the batch's ops, kept to be sent again
    std::vector<Pending> pending_;
    std::vector<Backoff> backoff_;  // ops waiting to be sent again
    std::uint32_t nextOpaque_ = Handshake::kLastOpaque + 1;
    std::int64_t batchesDone_ = 0;
    bool inBatch_ = false;  // a batch's ops are out (or held)
    bool finished_ = false;
};

}  // namespace kvexec::pillowfight
