#include "server/replication/replication_client.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <iostream>
#include <iterator>

#include "dcp/consumer.h"
#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/cluster_map.h"

namespace kvexec::server {

using protocol::Opcode;

namespace {

// The vBuckets of `from` that `without` does not list.
std::vector<engine::Vbid> difference(std::vector<engine::Vbid> from,
                                     std::vector<engine::Vbid> without) {
    std::ranges::sort(from);
    std::ranges::sort(without);
    std::vector<engine::Vbid> out;
    std::ranges::set_difference(from, without, std::back_inserter(out));
    return out;
}

}  // namespace

// One peer's connection: connect, HELLO (collections), SASL PLAIN when the
// node has credentials, then the DCP consumer. On the loop thread only,
// except the consumer's own thread-safe members.
class ReplicationClient::Link : public std::enable_shared_from_this<Link> {
  public:
    Link(ReplicationClient& client, ReplicationPeer peer)
        : client_(client), peer_(std::move(peer)) {}
    ~Link() { shutdown(); }

    const ReplicationPeer& peer() const { return peer_; }

    // The same peer at the same address, streaming another set of
    // vBuckets: the connection stays, and with it the streams of the
    // vBuckets both sets list. Removed ones close (their messages still
    // in flight are dropped), added ones are asked for. Before the
    // consumer exists (connecting), the new set is simply the one it
    // will ask for.
    void update(ReplicationPeer peer) {
        const auto removed = difference(peer_.vbuckets, peer.vbuckets);
        const auto added = difference(peer.vbuckets, peer_.vbuckets);
        peer_ = std::move(peer);
        if (!consumer_) {
            return;
        }
        for (const auto vb : removed) {
            consumer_->closeStream(vb);
        }
        client_.untrack(removed, consumer_.get());
        client_.track(added, consumer_);
        for (const auto vb : added) {
            requestStream(vb);
        }
        client_.streamsClosed_.fetch_add(removed.size(), std::memory_order_relaxed);
        flush();
    }

    void connect() {
        shutdown();
        const bool tls = client_.settings_.tls != nullptr;
        const std::uint16_t port = tls ? peer_.tlsPort : peer_.port;
        if (port == 0) {
            return fail(peer_.node + " advertises no TLS port (kvSSL)");
        }
        client_.connections_.fetch_add(1, std::memory_order_relaxed);
        bev_ = tls ? tlsBufferevent()
                   : bufferevent_socket_new(client_.loop_.base(), -1, BEV_OPT_CLOSE_ON_FREE);
        if (bev_ == nullptr) {
            return fail("cannot make a connection to " + peer_.node);
        }
        bufferevent_setcb(bev_, &Link::onRead, nullptr, &Link::onEvent, this);
        bufferevent_enable(bev_, EV_READ | EV_WRITE);
        // Until DCP runs (and its noops tell a silent peer), a peer that
        // accepts and then answers nothing (the TLS handshake, HELLO, SASL)
        // is given up on after the handshake timeout.
        const timeval handshake = delayOf(client_.settings_.handshakeTimeout);
        bufferevent_set_timeouts(bev_, &handshake, nullptr);
        const std::string address = protocol::hostPort(peer_.host, port);
        sockaddr_storage storage{};
        int length = sizeof(storage);
        if (evutil_parse_sockaddr_port(address.c_str(), reinterpret_cast<sockaddr*>(&storage),
                                       &length) != 0) {
            return fail("cannot connect to " + address + ": not an IP address");
        }
        if (bufferevent_socket_connect(bev_, reinterpret_cast<sockaddr*>(&storage), length) != 0) {
            fail("cannot connect to " + address + ": " +
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        }
    }

    // Closes the connection and forgets the consumer; no retry.
    void shutdown() {
        if (consumer_) {
            client_.untrack(peer_.vbuckets, consumer_.get());
            consumer_.reset();
        }
        if (bev_ != nullptr) {
            bufferevent_free(bev_);
            bev_ = nullptr;
        }
        for (event** timer : {&retry_, &streamRetry_}) {
            if (*timer != nullptr) {
                event_free(*timer);
                *timer = nullptr;
            }
        }
        phase_ = Phase::Hello;
    }

    void flush() {
        if (bev_ != nullptr && consumer_) {
            const auto bytes = consumer_->takeOutput();
            bufferevent_write(bev_, bytes.data(), bytes.size());
        }
    }

  private:
    enum class Phase { Hello, Sasl, SelectBucket, Dcp };

    // A client session that checks the peer's certificate against the
    // node's CA and the peer's address; BEV_EVENT_CONNECTED comes once
    // the handshake is done. Null if OpenSSL or libevent cannot make one.
    bufferevent* tlsBufferevent() const {
        SSL* session = client_.settings_.tls->newSession(peer_.host);
        if (session == nullptr) {
            return nullptr;
        }
        // With BEV_OPT_CLOSE_ON_FREE the bufferevent owns the session from
        // here, even when it cannot be made (libevent frees it then).
        return bufferevent_openssl_socket_new(client_.loop_.base(), -1, session,
                                              BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
    }

    static void onEvent(bufferevent* bev, short what, void* self) {
        auto& link = *static_cast<Link*>(self);
        if ((what & BEV_EVENT_CONNECTED) != 0) {
            link.hello();
            return;
        }
        link.fail("connection to " + link.peer_.node + " lost" + reasonOf(bev, what));
    }

    // Why a connection failed: TLS's reason (a refused certificate, a
    // handshake error), else the socket's error, else the peer's close.
    static std::string reasonOf(bufferevent* bev, short what) {
        const int socketError = EVUTIL_SOCKET_ERROR();
        if ((what & BEV_EVENT_TIMEOUT) != 0) {
            return ": no answer before the handshake timeout";
        }
        if (SSL* session = bufferevent_openssl_get_ssl(bev)) {
            std::vector<unsigned long> errors;
            while (const unsigned long error = bufferevent_get_openssl_error(bev)) {
                // libevent also queues SSL_get_error's codes (no library):
                // the socket's error or the close says more.
                if (ERR_GET_LIB(error) != 0) {
                    errors.push_back(error);
                }
            }
            if (auto why = tlsFailure(session, errors); !why.empty()) {
                return ": " + why;
            }
        }
        if ((what & BEV_EVENT_ERROR) != 0 && socketError != 0) {
            return std::string(": ") + evutil_socket_error_to_string(socketError);
        }
        return ": closed by the peer";
    }

    static void onRead(bufferevent* bev, void* self) {
        auto& link = *static_cast<Link*>(self);
        evbuffer* input = bufferevent_get_input(bev);
        const auto length = evbuffer_get_length(input);
        const std::string_view bytes(
            reinterpret_cast<const char*>(evbuffer_pullup(input, static_cast<ev_ssize_t>(length))),
            length);
        std::size_t consumed = 0;
        const bool ok = link.phase_ == Phase::Dcp ? link.consumer_->receive(bytes, consumed)
                                                  : link.handshake(bytes, consumed);
        if (!ok) {
            return link.fail("replication from " + link.peer_.node + " broke off");
        }
        evbuffer_drain(input, consumed);
        link.flush();
    }

    void send(Opcode opcode, std::string_view key, std::string_view value) {
        std::string bytes;
        protocol::appendRequest(bytes, {opcode, 0, 0, 0, 0}, {}, {}, key, value);
        bufferevent_write(bev_, bytes.data(), bytes.size());
    }

    void hello() {
        std::string features;
        for (const auto f : {protocol::Feature::Collections, protocol::Feature::Xerror}) {
            protocol::appendBe16(features, static_cast<std::uint16_t>(f));
        }
        phase_ = Phase::Hello;
        send(Opcode::Hello, "kvexec-replication", features);
    }

    // The answers to HELLO, SASL and SELECT_BUCKET, one at a time.
    bool handshake(std::string_view bytes, std::size_t& consumed) {
        const auto parsed = protocol::parseResponse(bytes);
        if (parsed.outcome == protocol::ResponseOutcome::Incomplete) {
            return true;
        }
        if (parsed.outcome != protocol::ResponseOutcome::Ok ||
            parsed.response.status != protocol::Status::Success) {
            return false;
        }
        consumed = parsed.consumed;
        const auto& settings = client_.settings_;
        if (phase_ == Phase::Hello && settings.user) {
            phase_ = Phase::Sasl;
            std::string payload(1, '\0');
            payload += *settings.user;
            payload += '\0';
            payload += settings.password.value_or("");
            send(Opcode::SaslAuth, "PLAIN", payload);
            return true;
        }
        if (phase_ != Phase::SelectBucket) {
            // The peer's producer streams the bucket the connection is on.
            phase_ = Phase::SelectBucket;
            send(Opcode::SelectBucket, settings.bucket, {});
            return true;
        }
        startDcp();
        return true;
    }

    void startDcp() {
        phase_ = Phase::Dcp;
        bufferevent_set_timeouts(bev_, nullptr, nullptr);  // the noops watch the peer now
        lastLogged_.clear();                               // a new failure is news again
        std::weak_ptr<Link> self = weak_from_this();
        FrontEnd* loop = &client_.loop_;
        const auto& settings = client_.settings_;
        consumer_ = std::make_shared<dcp::DcpConsumer>(
            client_.bucket_,
            dcp::ConsumerOptions{"replication:" + settings.nodeName + "<-" + peer_.node,
                                 settings.nodeName, settings.bufferSize, true},
            [self, loop] {
                loop->post([self] {
                    if (const auto link = self.lock()) {
                        link->flush();
                    }
                });
            });
        client_.track(peer_.vbuckets, consumer_);
        consumer_->open();
        for (const auto vb : peer_.vbuckets) {
            requestStream(vb);
        }
        streamRetry_ = event_new(client_.loop_.base(), -1, EV_PERSIST, &Link::onStreamRetry, this);
        const timeval every = delayOf(client_.settings_.reconnectDelay);
        evtimer_add(streamRetry_, &every);
    }

    void requestStream(engine::Vbid vb) {
        client_.streamRequests_.fetch_add(1, std::memory_order_relaxed);
        consumer_->requestStream(vb);
    }

    // A refused or ended stream (its vBucket not active on the peer yet, or
    // no longer: the nodes apply a new map at their own pace) is asked for
    // again while the map says the peer is its active and this node holds
    // the vBucket as a replica (a stream closed because the replica was
    // taken away waits for the map that gives it back, or for the one that
    // removes it from this link). A peer silent for two noop intervals is
    // taken for gone (a dead process, or a path that drops packets), and
    // the connection is made again.
    static void onStreamRetry(evutil_socket_t, short, void* self) {
        auto& link = *static_cast<Link*>(self);
        if (!link.consumer_) {
            return;
        }
        if (!link.consumer_->tick(std::chrono::steady_clock::now())) {
            return link.fail("nothing from " + link.peer_.node + " for two noop intervals");
        }
        for (const auto vb : link.peer_.vbuckets) {
            const auto state = link.consumer_->streamState(vb);
            if ((state == dcp::DcpConsumer::StreamState::Failed ||
                 state == dcp::DcpConsumer::StreamState::Ended) &&
                link.holdsReplica(vb)) {
                link.requestStream(vb);
            }
        }
        link.flush();
    }

    bool holdsReplica(engine::Vbid vb) const {
        const auto held = client_.bucket_.vbucketAssignment(vb);
        return held && (held->state == engine::VBucketState::Replica ||
                        held->state == engine::VBucketState::Pending);
    }

    static timeval delayOf(std::chrono::milliseconds delay) {
        return {static_cast<time_t>(delay.count() / 1000),
                static_cast<suseconds_t>(delay.count() % 1000 * 1000)};
    }

    // Drops the connection and tries again after the delay.
    void fail(const std::string& why) {
        if (why != lastLogged_) {  // a peer that keeps failing alike is logged once
            std::cerr << "kvexec replication: " << why << "; retrying\n";
            lastLogged_ = why;
        }
        client_.broke(why);
        shutdown();
        retry_ = evtimer_new(client_.loop_.base(), &Link::onRetry, this);
        const timeval after = delayOf(client_.settings_.reconnectDelay);
        evtimer_add(retry_, &after);
    }

    static void onRetry(evutil_socket_t, short, void* self) { static_cast<Link*>(self)->connect(); }

    ReplicationClient& client_;
    ReplicationPeer peer_;
    bufferevent* bev_ = nullptr;
    event* retry_ = nullptr;
    event* streamRetry_ = nullptr;
    Phase phase_ = Phase::Hello;
    std::string lastLogged_;  // the last failure written to stderr
    std::shared_ptr<dcp::DcpConsumer> consumer_;
};

ReplicationClient::ReplicationClient(ServerContext& context, engine::Bucket& bucket,
                                     ReplicationSettings settings)
    : bucket_(bucket), settings_(std::move(settings)), loop_(context, 1000) {
    loop_.start();
}

ReplicationClient::~ReplicationClient() {
    stop();
}

void ReplicationClient::stop() {
    loop_.post([this] {
        for (auto& [node, link] : links_) {
            link->shutdown();
        }
        links_.clear();
    });
    loop_.stopAndJoin();
}

void ReplicationClient::setPeers(std::vector<ReplicationPeer> peers) {
    loop_.post([this, peers = std::move(peers)] {
        std::map<std::string, std::shared_ptr<Link>> next;
        for (const auto& peer : peers) {
            const auto it = links_.find(peer.node);
            if (it != links_.end() && it->second->peer().host == peer.host &&
                it->second->peer().port == peer.port &&
                it->second->peer().tlsPort == peer.tlsPort) {
                // Same node, same address: the connection stays, and the
                // streams of the vBuckets it keeps go on.
                if (it->second->peer() != peer) {
                    it->second->update(peer);
                }
                next.emplace(peer.node, it->second);
                continue;
            }
            auto link = std::make_shared<Link>(*this, peer);
            link->connect();
            next.emplace(peer.node, std::move(link));
        }
        for (auto& [node, link] : links_) {
            if (!next.contains(node) || next.at(node) != link) {
                link->shutdown();
            }
        }
        links_.swap(next);
        kvexec::detail::MutexLock lock(mutex_);
        peers_ = links_.size();
    });
}

void ReplicationClient::prepared(engine::Vbid vbid, engine::Seqno seqno) {
    std::shared_ptr<dcp::DcpConsumer> consumer;
    {
        kvexec::detail::MutexLock lock(mutex_);
        const auto it = consumers_.find(vbid);
        if (it == consumers_.end()) {
            return;
        }
        consumer = it->second;
    }
    consumer->prepared(vbid, seqno);
}

void PreparedForwarder::set(ReplicationClient* client) {
    kvexec::detail::MutexLock lock(mutex_);
    client_ = client;
}

void PreparedForwarder::forward(engine::Vbid vbid, engine::Seqno seqno) {
    kvexec::detail::MutexLock lock(mutex_);
    if (client_ != nullptr) {
        client_->prepared(vbid, seqno);
    }
}

std::optional<ReplicationReport> PreparedForwarder::report() const {
    kvexec::detail::MutexLock lock(mutex_);
    if (client_ == nullptr) {
        return std::nullopt;
    }
    return client_->report();
}

ReplicationCounters ReplicationClient::counters() const {
    return {connections_.load(std::memory_order_relaxed), breaks_.load(std::memory_order_relaxed),
            streamRequests_.load(std::memory_order_relaxed),
            streamsClosed_.load(std::memory_order_relaxed)};
}

void ReplicationClient::broke(const std::string& why) {
    {
        kvexec::detail::MutexLock lock(mutex_);
        lastBreak_ = why;
    }
    breaks_.fetch_add(1,
                      std::memory_order_relaxed);  // after: a reader of the count finds the reason
}

ReplicationReport ReplicationClient::report() const {
    ReplicationReport report;
    report.counters = counters();
    report.streamsOpen = openStreams();
    report.tls = settings_.tls != nullptr;
    kvexec::detail::MutexLock lock(mutex_);
    report.peers = peers_;
    report.lastBreak = lastBreak_;
    return report;
}

std::size_t ReplicationClient::openStreams() const {
    std::size_t open = 0;
    kvexec::detail::MutexLock lock(mutex_);
    for (const auto& [vb, consumer] : consumers_) {
        open += consumer->streamState(vb) == dcp::DcpConsumer::StreamState::Open ? 1 : 0;
    }
    return open;
}

std::vector<engine::Vbid> ReplicationClient::openStreamVBuckets() const {
    std::vector<engine::Vbid> open;
    kvexec::detail::MutexLock lock(mutex_);
    for (const auto& [vb, consumer] : consumers_) {
        if (consumer->streamState(vb) == dcp::DcpConsumer::StreamState::Open) {
            open.push_back(vb);
        }
    }
    return open;
}

void ReplicationClient::track(const std::vector<engine::Vbid>& vbuckets,
                              const std::shared_ptr<dcp::DcpConsumer>& consumer) {
    kvexec::detail::MutexLock lock(mutex_);
    for (const auto vb : vbuckets) {
        consumers_[vb] = consumer;
    }
}

void ReplicationClient::untrack(const std::vector<engine::Vbid>& vbuckets,
                                const dcp::DcpConsumer* consumer) {
    kvexec::detail::MutexLock lock(mutex_);
    for (const auto vb : vbuckets) {
        const auto it = consumers_.find(vb);
        if (it != consumers_.end() && it->second.get() == consumer) {
            consumers_.erase(it);
        }
    }
}

}  // namespace kvexec::server
