#include "server/connection.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <utility>

#include "dcp/producer.h"
#include "protocol/binary_response.h"
#include "protocol/cluster_map.h"
#include "protocol/server_request.h"
#include "server/front_end.h"

namespace kvexec::server {
namespace {

// Output beyond this stops reading until the client drains it.
constexpr std::size_t kOutputHighWater = 4 * 1024 * 1024;
constexpr std::size_t kOutputLowWater = 256 * 1024;

// "tcp:<address>:<port>" of either end of the socket, as memcached's stats
// conns writes it; the bare address too (the cluster map wants it).
std::string socketAddress(evutil_socket_t fd, bool peer, std::string* host = nullptr) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    auto* raw = reinterpret_cast<sockaddr*>(&address);
    if ((peer ? getpeername(fd, raw, &length) : getsockname(fd, raw, &length)) != 0) {
        if (host != nullptr) {
            *host = "127.0.0.1";
        }
        return "tcp:unknown";
    }
    char text[INET6_ADDRSTRLEN] = {};
    std::uint16_t port = 0;
    if (address.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
        inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
        port = ntohs(v6->sin6_port);
    } else {
        const auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
        inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
        port = ntohs(v4->sin_port);
    }
    if (host != nullptr) {
        *host = text;
    }
    const bool v6 = address.ss_family == AF_INET6;
    return std::string("tcp:") + (v6 ? "[" : "") + text + (v6 ? "]" : "") + ":" +
           std::to_string(port);
}

protocol::FramingLimits framingLimits(const ServerConfig& config) {
    protocol::FramingLimits limits;
    limits.binary.maxBodyLength = config.maxBodyLength;
    limits.text.maxValueLength = config.maxValueBytes;
    return limits;
}

}  // namespace

Connection::Connection(FrontEnd& frontEnd, ServerContext& context, evutil_socket_t fd, SSL* tls)
    : frontEnd_(frontEnd),
      context_(context),
      frontEndCounters_(frontEnd.counters()),
      counters_(&frontEnd.requestCounters(context.buckets.front())),
      limits_(framingLimits(context.config)),
      tls_(tls != nullptr),
      peerAddress_(socketAddress(fd, true)),
      localAddress_(socketAddress(fd, false, &localHost_)),
      bucket_(&context.buckets.front()) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    evutil_make_socket_nonblocking(fd);
    input_ = evbuffer_new();
    if (tls_) {
        // Freed with the bufferevent: the session and the socket.
        bev_ = bufferevent_openssl_socket_new(frontEnd.base(), fd, tls, BUFFEREVENT_SSL_ACCEPTING,
                                              BEV_OPT_CLOSE_ON_FREE);
    } else {
        bev_ = bufferevent_socket_new(frontEnd.base(), fd, BEV_OPT_CLOSE_ON_FREE);
        readEvent_ =
            event_new(frontEnd.base(), fd, EV_READ | EV_PERSIST, &Connection::onReadable, this);
    }
    if (context_.users.empty()) {  // no authentication asked: anyone may do anything
        authenticated_ = true;
        role_ = protocol::auth::Role::Node;
    }
    context_.counters.totalConnections.fetch_add(1, std::memory_order_relaxed);
}

Connection::~Connection() {
    if (dcpProducer_) {
        dcpProducer_->close();
    }
    freeIo();
}

// Every libevent object the connection owns, freed and forgotten: the read
// event before the bufferevent, which closes the socket.
void Connection::freeIo() {
    const auto freeEvent = [](event*& e) {
        if (e != nullptr) {
            event_free(std::exchange(e, nullptr));
        }
    };
    freeEvent(readEvent_);
    if (bev_ != nullptr) {
        if (tls_) {
            sendCloseNotify();
        }
        bufferevent_free(std::exchange(bev_, nullptr));
    }
    if (input_ != nullptr) {
        evbuffer_free(std::exchange(input_, nullptr));
    }
    freeEvent(requestTimer_);
    freeEvent(dcpTick_);
}

// Best effort, never blocking: tells a TLS client that the stream ends
// here and was not cut (an EOF alone may be a truncation). Errors stay off
// the thread's OpenSSL queue, which the loop's other sessions read.
void Connection::sendCloseNotify() {
    SSL* session = bufferevent_openssl_get_ssl(bev_);
    if (session != nullptr && SSL_is_init_finished(session) == 1) {
        (void)SSL_shutdown(session);
    }
    ERR_clear_error();
}

void Connection::start() {
    bufferevent_setcb(bev_, tls_ ? &Connection::onTlsReadable : nullptr, &Connection::onWrite,
                      &Connection::onEvent, this);
    bufferevent_setwatermark(bev_, EV_WRITE, kOutputLowWater, 0);
    // A client that sends nothing (half a request, or nothing between
    // requests) or reads nothing of its responses for the idle timeout is
    // dropped; a pending engine operation stops the read clock. A request
    // trickling in byte by byte is bounded by the request timer.
    const auto ms = context_.config.idleTimeout.count();
    idle_ = {static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
    bufferevent_set_timeouts(bev_, tls_ ? &idle_ : nullptr, &idle_);
    requestTimer_ = evtimer_new(frontEnd_.base(), &Connection::onRequestTimeout, this);
    bufferevent_enable(bev_, EV_WRITE);
    resumeReading();
}

void Connection::resumeReading() {
    if (tls_ && bev_ != nullptr) {
        bufferevent_enable(bev_, EV_READ);  // restarts its read timeout
    } else if (readEvent_ != nullptr) {
        event_add(readEvent_, idleTimeouts_ ? &idle_ : nullptr);
    }
}

void Connection::pauseReading() {
    if (tls_ && bev_ != nullptr) {
        bufferevent_disable(bev_, EV_READ);
    } else if (readEvent_ != nullptr) {
        event_del(readEvent_);
    }
}

// libevent keeps a persistent event's timeout once given, through
// event_del() and an event_add() with none, and re-arms it on every read:
// only event_assign() forgets it.
void Connection::stopIdleTimeouts() {
    idleTimeouts_ = false;
    if (tls_) {
        // libevent removes a timeout only from an event that is pending:
        // reading must be on while it does.
        const bool paused = (bufferevent_get_enabled(bev_) & EV_READ) == 0;
        bufferevent_enable(bev_, EV_READ);
        bufferevent_set_timeouts(bev_, nullptr, nullptr);
        if (paused) {
            bufferevent_disable(bev_, EV_READ);
        }
        return;
    }
    bufferevent_set_timeouts(bev_, nullptr, nullptr);
    const bool reading = event_pending(readEvent_, EV_READ, nullptr) != 0;
    event_del(readEvent_);
    event_assign(readEvent_, frontEnd_.base(), event_get_fd(readEvent_), EV_READ | EV_PERSIST,
                 &Connection::onReadable, this);
    if (reading) {
        resumeReading();
    }
}

void Connection::close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    if (dcpProducer_) {
        dcpProducer_->close();  // its engine streams stop feeding this connection
    }
    context_.counters.currConnections.fetch_sub(1, std::memory_order_relaxed);  // counted at accept
    freeIo();
    held_.reset();                        // its bytes went with the input buffer
    auto keepAlive = shared_from_this();  // forget() may drop the last owner
    frontEnd_.forget(this);
}

ConnectionInfo Connection::describe() const {
    ConnectionInfo info;
    info.fd = bev_ != nullptr ? static_cast<int>(bufferevent_getfd(bev_)) : -1;
    info.peer = peerAddress_;
    info.local = localAddress_;
    if (closed_ || closing_) {
        info.state = "conn_closing";
    } else if (pending_) {
        info.state = "conn_parse_cmd";
    } else if (readPaused_) {
        info.state = "conn_mwrite";
    } else if (evbuffer_get_length(input_) != 0) {
        info.state = "conn_read";
    } else {
        info.state = "conn_waiting";
    }
    info.secondsSinceLastCommand = std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::steady_clock::now() - lastCommand_)
                                       .count();
    return info;
}

void Connection::onReadable(evutil_socket_t fd, short what, void* self) {
    auto* c = static_cast<Connection*>(self);
    if ((what & EV_TIMEOUT) != 0) {
        // Slowloris defence: nothing arrived for the idle timeout.
        c->frontEndCounters_.idleTimeouts.fetch_add(1, std::memory_order_relaxed);
        c->close();
        return;
    }
    if (c->readSocket(fd)) {
        c->process();
    }
}

// One read per readiness (the loop calls again while more is there), into
// a buffer on the stack, then appended: a request is usually a few hundred
// bytes, and the buffer's chain is then a small allocation, as libevent's
// own read sized by FIONREAD makes it.
bool Connection::readSocket(evutil_socket_t fd) {
    char buffer[16 * 1024];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0 && evbuffer_add(input_, buffer, static_cast<std::size_t>(n)) == 0) {
        return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return true;
    }
    close();  // end of stream, the connection failed, or no memory for the input
    return false;
}

// libevent has read every record the session holds (it reads on while
// OpenSSL has bytes pending) before it calls: nothing waits inside the
// session once its input is moved out.
void Connection::onTlsReadable(bufferevent*, void* self) {
    auto* c = static_cast<Connection*>(self);
    if (evbuffer_add_buffer(c->input_, bufferevent_get_input(c->bev_)) != 0) {
        c->close();  // no memory for the input
        return;
    }
    c->process();
}

void Connection::onWrite(bufferevent*, void* self) {
    auto* c = static_cast<Connection*>(self);
    if (c->closing_ && !c->pending_ && evbuffer_get_length(bufferevent_get_output(c->bev_)) == 0) {
        c->close();
        return;
    }
    if (c->resumeIfDrained()) {
        c->process();
    }
}

// The output drained while an operation was pending (onWrite skipped the
// resume then), and its response may have gone out by sendNow() without
// the bufferevent: nothing else would resume reading.
bool Connection::resumeIfDrained() {
    if (!readPaused_ || pending_ ||
        evbuffer_get_length(bufferevent_get_output(bev_)) > kOutputLowWater) {
        return false;
    }
    readPaused_ = false;
    if (!closing_) {
        resumeReading();
    }
    return true;
}

void Connection::onEvent(bufferevent*, short what, void* self) {
    auto* c = static_cast<Connection*>(self);
    if ((what & BEV_EVENT_TIMEOUT) != 0) {
        // Plain, the bufferevent only writes: the client read none of its
        // responses for the idle timeout. Over TLS it also reads: nothing
        // came (a handshake included) for that long.
        c->frontEndCounters_.idleTimeouts.fetch_add(1, std::memory_order_relaxed);
    }
    if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) != 0) {
        c->close();
    }
}

void Connection::onRequestTimeout(evutil_socket_t, short, void* self) {
    auto* c = static_cast<Connection*>(self);
    c->frontEndCounters_.idleTimeouts.fetch_add(1, std::memory_order_relaxed);
    c->close();
}

void Connection::process() {
    auto self = shared_from_this();  // a command may close the connection
    // Pipelined requests are served until the responses owed pass the high
    // water mark: a client that does not read cannot make the server buffer
    // without bound (reading resumes once the output drains, onWrite).
    bool served = false;
    for (;;) {
        bool stoppedByOutput = false;
        while (!closed_ && !closing_ && !pending_) {
            if (outputFull()) {
                stoppedByOutput = true;
                break;
            }
            if (!processNext()) {
                break;
            }
            served = true;
        }
        flushOutput();
        // Stopped with responses owed past the high water mark: if the
        // socket did not take them, flushOutput() paused reading and onWrite
        // resumes it; if it did, nothing else would come back to the
        // requests already buffered, so serve on.
        if (!stoppedByOutput || closed_ || readPaused_) {
            break;
        }
    }
    watchPartialRequest(served);
}

void Connection::watchPartialRequest(bool served) {
    if (closed_) {
        return;
    }
    // Only a request the client has yet to finish counts; waiting on the
    // engine or on the client reading its responses does not.
    const bool waitingOnClient = !closing_ && !pending_ && !readPaused_ &&
                                 (discarding_ != 0 || evbuffer_get_length(input_) != 0);
    if (!waitingOnClient) {
        evtimer_del(requestTimer_);
        return;
    }
    // The clock starts with the request's first bytes, not with each byte.
    if (served || evtimer_pending(requestTimer_, nullptr) == 0) {
        evtimer_add(requestTimer_, &idle_);
    }
}

bool Connection::outputFull() const {
    return out_.size() + evbuffer_get_length(bufferevent_get_output(bev_)) > kOutputHighWater;
}

std::string_view Connection::pullUp(std::size_t length) {
    auto* bytes = evbuffer_pullup(input_, static_cast<ev_ssize_t>(length));
    return {reinterpret_cast<const char*>(bytes), length};
}

bool Connection::processNext() {
    if (discarding_ != 0) {
        discardInput(discarding_);
    }
    const std::size_t available = evbuffer_get_length(input_);
    if (available == 0 || discarding_ != 0) {
        return false;
    }
    // Each request says its protocol by its first byte (clients such as
    // memccapable switch on one connection).
    char first = 0;
    evbuffer_copyout(input_, &first, 1);
    const protocol::Wire wire = protocol::wireOf(first);
    // Look at the front only (a header, or up to the first line end): a
    // partial request is not copied again and again as its bytes trickle in.
    std::size_t probe = std::min(available, protocol::probeLength(wire, limits_));
    if (wire == protocol::Wire::Text) {
        const evbuffer_ptr eol = evbuffer_search_eol(input_, nullptr, nullptr, EVBUFFER_EOL_LF);
        if (eol.pos >= 0) {
            probe = std::min(probe, static_cast<std::size_t>(eol.pos) + 1);
        }
    }
    const auto magic = static_cast<protocol::Magic>(first);
    const bool response = (dcpProducer_ && magic == protocol::Magic::ClientResponse) ||
                          (duplex_ && magic == protocol::Magic::ServerResponse);
    const std::size_t need = response ? protocol::responseExtent(pullUp(probe), limits_.binary)
                                      : protocol::requestExtent(wire, pullUp(probe), limits_);
    if (need > available) {
        return false;  // the rest of the request has not arrived yet
    }
    const std::string_view bytes = pullUp(need);
    lastCommand_ = std::chrono::steady_clock::now();
    return wire == protocol::Wire::Binary ? handleBinary(bytes) : handleText(bytes);
}

void Connection::discardInput(std::size_t length) {
    const std::size_t now = std::min(length, evbuffer_get_length(input_));
    evbuffer_drain(input_, now);
    discarding_ = length - now;
}

bool Connection::handleBinary(std::string_view bytes) {
    const auto magic = static_cast<protocol::Magic>(bytes.front());
    if (dcpProducer_ && magic == protocol::Magic::ClientResponse) {
        return handleDcpResponse(bytes);
    }
    if (duplex_ && magic == protocol::Magic::ServerResponse) {
        // A reply to a pushed map: none is needed, and kv_engine drops them
        // unread (its body as it comes, if it is over the limit).
        discardInput(protocol::kHeaderSize + protocol::readBe32(bytes, 8));
        return true;
    }
    auto result = protocol::parseRequest(bytes, limits_.binary);
    if (result.outcome == protocol::ParseOutcome::Invalid &&
        result.status == protocol::Status::ValueTooLarge) {
        // memcached's rule: refused from its header, the body is dropped as
        // it arrives and the connection goes on. Closing at once instead
        // would reset the connection while the client is still sending, and
        // the reset can destroy the answer before the client reads it.
        frontEndCounters_.protocolErrors.fetch_add(1, std::memory_order_relaxed);
        respondError(result.request, result.status, result.reason);
        discardInput(protocol::kHeaderSize + protocol::readBe32(bytes, 8));
        return true;
    }
    if (result.outcome != protocol::ParseOutcome::Ok) {
        // Framing is lost (or, Incomplete, the framer was wrong): answer with
        // the header's opcode and opaque when it was readable, then close.
        frontEndCounters_.protocolErrors.fetch_add(1, std::memory_order_relaxed);
        if (result.outcome == protocol::ParseOutcome::Incomplete) {
            result.status = protocol::Status::InternalError;
            result.reason = "request framing failed";
        }
        respondError(result.request, result.status, result.reason);
        closeAfterWrite();
        return false;
    }
    executeBinary(result.request);
    releaseRequest(bytes.substr(0, result.consumed));
    return true;
}

bool Connection::handleText(std::string_view bytes) {
    auto result = protocol::parseTextCommand(bytes, limits_.text);
    switch (result.outcome) {
        case protocol::TextOutcome::Incomplete:  // the framer was wrong: cannot go on
            result.errorLine = "SERVER_ERROR request framing failed\r\n";
            [[fallthrough]];
        case protocol::TextOutcome::Fatal:
            frontEndCounters_.protocolErrors.fetch_add(1, std::memory_order_relaxed);
            out_ += result.errorLine;
            closeAfterWrite();
            return false;
        case protocol::TextOutcome::Error:
            out_ += result.errorLine;
            break;
        case protocol::TextOutcome::Ok:
            executeText(result.command);
            break;
    }
    // A refused data block (discard) is dropped as it arrives.
    releaseRequest(bytes.substr(0, result.consumed), result.discard);
    return true;
}

void Connection::releaseRequest(std::string_view bytes, std::size_t discard) {
    if (bev_ == nullptr) {
        return;
    }
    if (pending_) {
        // The completion's handler reads the request later, through views
        // into these bytes: draining now could free them.
        held_.emplace(HeldRequest{bytes, discard, {}});
#ifndef NDEBUG
        held_->copy.assign(bytes);
#endif
        return;
    }
    evbuffer_drain(input_, bytes.size());
    if (discard != 0) {
        discardInput(discard);
    }
}

void Connection::releaseHeldRequest() {
    if (!held_ || pending_) {
        return;
    }
    const HeldRequest held = std::move(*held_);
    held_.reset();
    releaseRequest(held.bytes, held.discard);
}

bool Connection::heldRequestIntact() {
    if (!held_ || bev_ == nullptr) {
        return true;
    }
    // Read through the views the handler holds (freed bytes are an ASan
    // report here), and check that they are still the input's front.
    const auto* front = evbuffer_pullup(input_, static_cast<ev_ssize_t>(held_->bytes.size()));
    return held_->bytes == held_->copy &&
           reinterpret_cast<const char*>(front) == held_->bytes.data();
}

void Connection::flushOutput() {
    if (closed_) {
        out_.clear();
        return;
    }
    evbuffer* output = bufferevent_get_output(bev_);
    if (!out_.empty()) {
        const std::size_t sent = evbuffer_get_length(output) == 0 ? sendNow() : 0;
        if (sent < out_.size()) {
            evbuffer_add(output, out_.data() + sent, out_.size() - sent);
        }
        out_.clear();
    }
    if (closing_ && !pending_ && evbuffer_get_length(output) == 0) {
        close();
        return;
    }
    if (!readPaused_ && evbuffer_get_length(output) > kOutputHighWater) {
        readPaused_ = true;
        pauseReading();
    }
}

void Connection::finishAndClose() {
    if (closed_) {
        return;
    }
    closeAfterWrite();
    flushOutput();  // closes now unless a response is pending or unsent
}

// Writes what the socket takes at once. Going through the bufferevent would
// arm and disarm its write event around every response (two epoll_ctl
// calls per request); only what the socket does not take is queued there.
std::size_t Connection::sendNow() {
    if (tls_) {
        return 0;  // the session encrypts: everything goes through the bufferevent
    }
    const evutil_socket_t fd = bufferevent_getfd(bev_);
    const ssize_t n = ::send(fd, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    return n > 0 ? static_cast<std::size_t>(n) : 0;  // errors: the bufferevent reports them
}

void Connection::closeAfterWrite() {
    closing_ = true;
    pauseReading();
}

void Connection::beginOperation() {
    pending_ = true;
    frontEndCounters_.operationsInFlight.fetch_add(1, std::memory_order_relaxed);
}

void Connection::finishOperation() {
    pending_ = false;
    frontEndCounters_.operationsInFlight.fetch_sub(1, std::memory_order_release);
}

template <class Result>
std::function<void(const Result&)> Connection::completion(
    std::function<void(const Result&)> handler) {
    beginOperation();
    return [self = shared_from_this(), handler = std::move(handler)](const Result& result) {
        if (self->frontEnd_.onLoopThread() && self->inEngineCall_) {
            self->finishOperation();
            if (!self->closed_) {
                handler(result);
            }
            return;
        }
        // Asynchronous completion (a SyncWrite): hop back to the loop.
        self->frontEnd_.post([self, handler, result] {
            self->finishOperation();
            if (self->closed_) {
                return;
            }
            // The handler may read any field of its request: still held.
            assert(self->heldRequestIntact());
            handler(result);
            self->releaseHeldRequest();
            if (!self->resumeIfDrained() && !self->readPaused_ && !self->closing_) {
                self->resumeReading();
            }
            self->process();
        });
    };
}

template std::function<void(const engine::MutationResult&)> Connection::completion(
    std::function<void(const engine::MutationResult&)>);
template std::function<void(const engine::ArithmeticResult&)> Connection::completion(
    std::function<void(const engine::ArithmeticResult&)>);
template std::function<void(const engine::GetResult&)> Connection::completion(
    std::function<void(const engine::GetResult&)>);
template std::function<void(const engine::RangeScanCreateResult&)> Connection::completion(
    std::function<void(const engine::RangeScanCreateResult&)>);
template std::function<void(const ConnectionList&)> Connection::completion(
    std::function<void(const ConnectionList&)>);

void Connection::pushClusterMap(const ServedBucket& served, const ClusterTopology& topology) {
    if (!clustermapNotification_ || !bucketSelected_ || &served != bucket_ || closed_ || closing_ ||
        topology.revision <= sentRevision_) {
        return;
    }
    sentRevision_ = topology.revision;
    protocol::appendClustermapNotification(out_, bucket_->name, protocol::kRevisionEpoch,
                                           topology.revision, clusterMapOf(&topology), json_);
    flushOutput();
}

std::string Connection::clusterMap() {
    const auto topology = bucket_->cluster->config.get();
    if (topology != nullptr) {
        sentRevision_ = std::max(sentRevision_, topology->revision);
    }
    return clusterMapOf(topology.get());
}

bool Connection::clientHasClusterMap() const {
    const auto topology = bucket_->cluster->config.get();
    return dedupeNotMyVbucketMaps_ && topology != nullptr && topology->revision <= sentRevision_;
}

std::string Connection::clusterMapOf(const ClusterTopology* topology) const {
    protocol::ClusterMapInfo info;
    info.bucket = bucket_->name;
    info.host = localHost_;
    info.kvPort = context_.boundPort.load(std::memory_order_relaxed);
    info.mgmtPort = context_.boundMgmtPort.load(std::memory_order_relaxed);
    info.tlsPort = context_.boundTlsPort.load(std::memory_order_relaxed);
    info.mgmtTlsPort = context_.boundMgmtTlsPort.load(std::memory_order_relaxed);
    info.manifestUid = engine::hexId(bucket().manifestUid());
    info.vbucketCount = static_cast<std::uint16_t>(context_.config.vbuckets);
    if (topology != nullptr) {
        info.nodes = topology->nodes;
        info.chains = topology->chains;
        info.numReplicas = topology->numReplicas;
        info.revision = topology->revision;
    }
    return protocol::clusterMapJson(info);
}

}  // namespace kvexec::server
