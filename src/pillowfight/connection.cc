#include "pillowfight/connection.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "pillowfight/retry.h"
#include "pillowfight/subdoc_request.h"
#include "protocol/binary_response.h"
#include "protocol/cluster_map.h"
#include "protocol/keys.h"

namespace kvexec::pillowfight {

using protocol::Opcode;
using protocol::Response;
using protocol::Status;

namespace {

// "SET: ", or for --subdoc "MUTATE_IN: ".
std::string opName(OpKind kind, bool subdoc) {
    return subdoc ? (kind == OpKind::Set ? "MUTATE_IN: " : "LOOKUP_IN: ")
                  : (kind == OpKind::Set ? "SET: " : "GET: ");
}

// "SET: Synchronous write ambiguous (0xa3)", or for --subdoc
// "LOOKUP_IN: MultiPathFailure (0xcc), spec 0: PathNotFound (0xc0)".

std::string errorName(OpKind kind, bool subdoc, const Response& r) {
    char code[16];
    std::snprintf(code, sizeof code, " (0x%02x)", static_cast<unsigned>(r.status));
    std::string name = opName(kind, subdoc) + statusName(r.status) + code;
    if (const std::string spec = failedSpec(r); !spec.empty()) {
        name += ", " + spec;
    }
    return name;
}

// The opaque of a GET_CLUSTER_CONFIG sent while a link is down: below the
// load's, above the handshake's.
constexpr std::uint32_t kConfigOpaque = Handshake::kLastOpaque;
constexpr std::chrono::milliseconds kConfigPoll{250};
constexpr std::chrono::milliseconds kReconnectDeadline{2000};

timeval timevalOf(std::chrono::microseconds t) {
    return {static_cast<time_t>(t.count() / 1'000'000),
            static_cast<suseconds_t>(t.count() % 1'000'000)};
}

}  // namespace

Connection::Connection(event_base* base, RunState& run, Workload& workload,
                       std::function<void(Connection&)> onReady, std::function<void()> onFinished)
    : base_(base),
      run_(run),
      workload_(workload),
      onReady_(std::move(onReady)),
      onFinished_(std::move(onFinished)) {}

Connection::~Connection() {
    for (event* e : {timer_, retryTimer_, pollTimer_}) {
        if (e != nullptr) {
            event_free(e);
        }
    }
    for (const auto& link : links_) {
        if (link->bev != nullptr) {
            bufferevent_free(link->bev);
        }
        if (link->timer != nullptr) {
            event_free(link->timer);
        }
    }
}

void Connection::start() {
    timer_ = evtimer_new(base_, &Connection::onTimeout, this);
    retryTimer_ = evtimer_new(base_, &Connection::onRetry, this);
    pollTimer_ = evtimer_new(base_, &Connection::onPoll, this);
    if (timer_ == nullptr || retryTimer_ == nullptr || pollTimer_ == nullptr) {
        return fail("cannot create a libevent timer");
    }
    const timeval connectTimeout{10, 0};
    evtimer_add(timer_, &connectTimeout);
    connect(reinterpret_cast<const sockaddr*>(&run_.address), static_cast<int>(run_.addressLength),
            protocol::hostPort(run_.options.host, run_.options.port));
}

// Adds a link and connects it; its bootstrap follows from onEvent.
Connection::Link& Connection::connect(const sockaddr* address, int length, std::string server) {
    auto& link =
        *links_.emplace_back(std::make_unique<Link>(*this, run_.options, std::move(server)));
    if (!bootstrapped_) {
        ++bootstrapping_;
    }
    std::memcpy(&link.address, address, static_cast<std::size_t>(length));
    link.addressLength = length;
    open(link);
    return link;
}

// Connects `link` to its address (a new socket).
void Connection::open(Link& link) {
    link.bev = bufferevent_socket_new(base_, -1, BEV_OPT_CLOSE_ON_FREE);
    if (link.bev == nullptr) {
        return fail("cannot create a libevent socket");
    }
    bufferevent_setcb(link.bev, &Connection::onRead, nullptr, &Connection::onEvent, &link);
    bufferevent_enable(link.bev, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(link.bev, reinterpret_cast<const sockaddr*>(&link.address),
                                   link.addressLength) != 0) {
        if (reconnects()) {
            return lost(link, "connect failed");
        }
        fail("connect failed");
    }
}

// Whether a link that drops is reconnected rather than failing the client:
// on a cluster, once the client has bootstrapped.
bool Connection::reconnects() const {
    return bootstrapped_ && !linkOfServer_.empty();
}

// `link` dropped: its ops in flight are sent again or counted
// (retryOfLost), its node's are held, and it is reconnected after a backoff.
// The caller then calls batchStep() (not from within routeBy: open() calls
// this while the route is half built).
void Connection::lost(Link& link, const std::string& what) {
    if (finished_) {
        return;
    }
    const bool sent = link.ready;
    if (link.bev != nullptr) {
        bufferevent_free(link.bev);
        link.bev = nullptr;
    }
    link.ready = false;
    link.out.clear();
    if (link.reconnecting) {
        ++link.attempts;
    } else {
        link.reconnecting = true;
        link.attempts = 0;
        run_.linksLost.fetch_add(1, std::memory_order_relaxed);
    }
    if (configPoll_ == &link) {
        configPoll_ = nullptr;
    }
    if (link.timer == nullptr) {
        link.timer = evtimer_new(base_, &Connection::onLinkTimer, &link);
        if (link.timer == nullptr) {
            return fail("cannot create a libevent timer (after: " + what + ")");
        }
    }
    const timeval delay = timevalOf(reconnectDelay(link.attempts));
    evtimer_add(link.timer, &delay);
    std::vector<Pending> lostOps;
    std::erase_if(pending_, [&](const Pending& p) {
        if (p.link != &link) {
            return false;
        }
        lostOps.push_back(p);
        return true;
    });
    for (const Pending& p : lostOps) {
        hold(p, sent, sent ? "connection lost" : "node not connected");
    }
    if (evtimer_pending(pollTimer_, nullptr) == 0) {
        pollConfig();
    }
}

// A reconnecting link's timer: the next attempt, or the attempt's deadline.
void Connection::onLinkTimer(int, short, void* self) {
    auto& link = *static_cast<Link*>(self);
    Connection& c = link.owner;
    if (c.finished_ || !link.reconnecting) {
        return;
    }
    if (link.bev != nullptr) {
        c.lost(link, "timeout (connect or handshake)");
        return c.batchStep();
    }
    c.reconnect(link);
}

void Connection::reconnect(Link& link) {
    link.handshake.emplace(run_.options);
    const auto deadline =
        std::min<std::chrono::milliseconds>(kReconnectDeadline, run_.options.timeout);
    const timeval tv = timevalOf(deadline);
    evtimer_add(link.timer, &tv);
    open(link);
}

// Sends `p` again after a backoff, to the active of the map the client
// has then, or counts it as an error (retryOfLost): its connection dropped
// (`sent`) or its node is not connected.
void Connection::hold(Pending p, bool sent, const char* reason) {
    const Op& op = batch_[p.slot];
    const std::string name = opName(op.kind, !op.specs.empty()) + reason;
    const bool idempotent = op.kind == OpKind::Get;
    const Retry retry = retryOfLost(idempotent, sent, p.retries);
    if (!retry.again) {
        run_.completed.fetch_add(1, std::memory_order_relaxed);
        run_.errors.add(sent && !idempotent ? name + " (ambiguous)" : name);
        return;
    }
    run_.retries.add(name);
    ++p.retries;
    backoff_.push_back({p, Clock::now() + retry.after, true});
    armRetry();
}

// Sends the held ops whose node is connected now (a link came back, or a
// newer map routes them elsewhere) without waiting for their backoff.
void Connection::releaseHeld() {
    if (finished_) {
        return;
    }
    const auto now = Clock::now();
    bool any = false;
    for (Backoff& b : backoff_) {
        if (b.held && b.due > now && !linkFor(b.op.vbucket).reconnecting) {
            b.due = now;
            any = true;
        }
    }
    if (any) {
        armRetry();
    }
}

void Connection::onPoll(int, short, void* self) {
    static_cast<Connection*>(self)->pollConfig();
}

// While the map names a node whose link is down, asks a connected node for
// its map every kConfigPoll (one request at a time): a failover's map
// routes the node's vBuckets elsewhere.
void Connection::pollConfig() {
    if (finished_ || std::none_of(linkOfServer_.begin(), linkOfServer_.end(),
                                  [](const Link* link) { return link->reconnecting; })) {
        return;
    }
    if (configPoll_ == nullptr) {
        for (const auto& link : links_) {
            if (link->ready && !link->reconnecting) {
                std::string request;
                protocol::appendRequest(request, {Opcode::GetClusterConfig, 0, kConfigOpaque, 0, 0},
                                        {}, {}, {});
                bufferevent_write(link->bev, request.data(), request.size());
                configPoll_ = link.get();
                break;
            }
        }
    }
    const timeval tv = timevalOf(kConfigPoll);
    evtimer_add(pollTimer_, &tv);
}

void Connection::onEvent(bufferevent* bev, short what, void* self) {
    auto& link = *static_cast<Link*>(self);
    auto* c = &link.owner;
    if ((what & BEV_EVENT_CONNECTED) != 0) {
        const int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (c->run_.options.protocol == Protocol::Couchbase) {
            if (!c->bootstrapped_) {
                c->armTimeout();  // the handshake gets --timeout too (later: the batch's)
            }
            const std::string hello = link.handshake->start();
            bufferevent_write(bev, hello.data(), hello.size());
        } else {
            c->bootstrapped(link);
        }
        return;
    }
    std::string error;
    if ((what & BEV_EVENT_EOF) != 0) {
        error = "connection closed by the server";
    } else if ((what & BEV_EVENT_ERROR) != 0) {
        error =
            std::string("network error: ") + evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR());
    } else {
        return;
    }
    if (c->reconnects()) {
        c->lost(link, error);
        return c->batchStep();
    }
    c->fail(error);
}

void Connection::onTimeout(int, short, void* self) {
    auto* c = static_cast<Connection*>(self);
    c->fail(c->pending_.empty() && c->backoff_.empty() ? "timeout (connect or handshake)"
                                                       : "timeout (no answer)");
}

void Connection::onRead(bufferevent*, void* self) {
    auto& link = *static_cast<Link*>(self);
    link.owner.readResponses(link);
}

void Connection::readResponses(Link& link) {
    evbuffer* input = bufferevent_get_input(link.bev);
    while (!finished_ && link.bev != nullptr) {
        const std::size_t available = evbuffer_get_length(input);
        if (available == 0) {
            return;
        }
        const auto* bytes = evbuffer_pullup(input, -1);
        const auto parsed = protocol::parseServerPacket(
            std::string_view(reinterpret_cast<const char*>(bytes), available));
        if (parsed.outcome == protocol::ResponseOutcome::Incomplete) {
            return;
        }
        if (parsed.outcome == protocol::ResponseOutcome::Invalid) {
            return fail("protocol error: not a binary response");
        }
        if (parsed.response.magic == protocol::Magic::ServerRequest) {
            serverRequest(parsed.response);
        } else if (link.handshake->state() != Handshake::State::Done &&
                   run_.options.protocol == Protocol::Couchbase) {
            handshakeResponse(link, parsed.response);
        } else {
            loadResponse(link, parsed.response);
        }
        if (link.bev == nullptr) {
            return;  // the link dropped (its handshake failed): `input` went with it
        }
        evbuffer_drain(input, parsed.consumed);
    }
}

// A map the server pushed (the handshake asked for them) is taken as a
// polled one is: ops held for a node it no longer names go out at once.
// Other server requests need no answer and are ignored.
void Connection::serverRequest(const Response& r) {
    if (static_cast<protocol::ServerOpcode>(r.opcode) !=
            protocol::ServerOpcode::ClustermapChangeNotification ||
        run_.options.protocol != Protocol::Couchbase) {
        return;
    }
    if (auto route = routeOf(r.value); route && adoptNewer(*route)) {
        run_.mapsPushed.fetch_add(1, std::memory_order_relaxed);
        releaseHeld();
    }
}

void Connection::handshakeResponse(Link& link, const Response& r) {
    const auto step = link.handshake->onResponse(r);
    if (step.state == Handshake::State::Failed) {
        if (reconnects()) {
            lost(link, step.error);
            return batchStep();
        }
        return fail(step.error);
    }
    if (step.state == Handshake::State::Done) {
        return bootstrapped(link);
    }
    bufferevent_write(link.bev, step.send.data(), step.send.size());
}

// The bootstrap node's map routes the load; the client is ready once every
// node's link has bootstrapped too. A link opened later for a newer map
// sends the ops held for it (and its node's map, if newer still, routes).
void Connection::bootstrapped(Link& link) {
    link.ready = true;
    const bool couchbase = run_.options.protocol == Protocol::Couchbase;
    if (bootstrapped_) {
        if (link.reconnecting) {
            link.reconnecting = false;
            link.attempts = 0;
            evtimer_del(link.timer);
            run_.reconnects.fetch_add(1, std::memory_order_relaxed);
        }
        if (couchbase) {
            adoptNewer(link.handshake->route());
        }
        flush();
        return releaseHeld();
    }
    if (&link == links_.front().get() && couchbase) {
        vbucketCount_ = link.handshake->route().vbucketCount();
        keyPrefix_ = link.handshake->keyPrefix();
        run_.vbucketCount.store(vbucketCount_, std::memory_order_relaxed);
        routeBy(link.handshake->route());
    }
    if (--bootstrapping_ == 0 && !finished_) {
        ready();
    }
}

// Routes by `route`, opening a link to each server it names that has none.
void Connection::routeBy(ClusterRoute route) {
    route_ = std::move(route);
    linkOfServer_.clear();
    if (route_.servers.size() <= 1 && !bootstrapped_) {
        return;  // one node: the bootstrap link carries everything
    }
    for (const auto& server : route_.servers) {
        Link& link = linkTo(server);
        if (finished_) {
            return;
        }
        linkOfServer_.push_back(&link);
    }
}

// Takes `route` if it is newer than the one the client routes by (and
// hashes keys over the same vBuckets). Returns whether it did.
bool Connection::adoptNewer(const ClusterRoute& route) {
    if (route.revision <= route_.revision || route.vbucketCount() != vbucketCount_) {
        return false;
    }
    routeBy(route);
    return true;
}

Connection::Link& Connection::linkTo(const std::string& server) {
    for (const auto& link : links_) {
        if (link->server == server) {
            return *link;
        }
    }
    sockaddr_storage address{};
    int length = sizeof(address);
    if (evutil_parse_sockaddr_port(server.c_str(), reinterpret_cast<sockaddr*>(&address),
                                   &length) != 0) {
        fail("the cluster map names a server that is not an address: " + server);
        return *links_.front();
    }
    return connect(reinterpret_cast<const sockaddr*>(&address), length, server);
}

Connection::Link& Connection::linkFor(std::uint16_t vbucket) {
    if (linkOfServer_.empty() || vbucket >= route_.activeOf.size() ||
        route_.activeOf[vbucket] < 0) {
        return *links_.front();  // a vBucket with no active: its node answers the error
    }
    return *linkOfServer_[static_cast<std::size_t>(route_.activeOf[vbucket])];
}

void Connection::armTimeout() {
    const timeval tv = timevalOf(run_.options.timeout);
    evtimer_add(timer_, &tv);
}

void Connection::ready() {
    evtimer_del(timer_);  // waiting for the go is no timeout
    bootstrapped_ = true;
    run_.clientsReady.fetch_add(1, std::memory_order_relaxed);
    onReady_(*this);
}

void Connection::startLoad() {
    if (!finished_) {
        sendBatch();
    }
}

bool Connection::nextOp(Op& op) {
    if (run_.phase == Phase::Populate) {
        return workload_.nextPopulation(op);
    }
    op = workload_.next();
    return true;
}

// Frame info 1 of the load's writes when --durability asks for it.
std::string Connection::writeFrames() const {
    if (!run_.options.durability || run_.phase != Phase::Load) {
        return {};
    }
    return protocol::durabilityFrame(*run_.options.durability, run_.options.durabilityTimeoutMs);
}

// Encodes `p`'s op under a fresh opaque into its vBucket's active's link
// (written by flush()) and puts it on the list of ops in flight.
void Connection::send(Pending p) {
    p.opaque = nextOpaque_++;
    if (nextOpaque_ == 0) {
        nextOpaque_ = Handshake::kLastOpaque + 1;
    }
    Link& link = linkFor(p.vbucket);
    if (link.reconnecting) {
        return hold(p, false, "node not connected");
    }
    const Op& op = batch_[p.slot];
    p.link = &link;
    pending_.push_back(p);
    std::string& out = link.out;
    const protocol::RequestHeader header{Opcode::Get, p.vbucket, p.opaque, 0, 0};
    std::string_view key = op.key;
    if (!keyPrefix_.empty()) {
        wireKey_.assign(keyPrefix_).append(op.key);
        key = wireKey_;
    }
    if (!op.specs.empty()) {
        if (op.kind == OpKind::Get) {
            appendLookupIn(out, header, key, op.specs);
        } else {
            appendMutateIn(out, header, writeFrames(), key, op.specs);
        }
        return;
    }
    if (op.kind == OpKind::Get) {
        protocol::appendRequest(out, header, {}, {}, key);
        return;
    }
    std::string extras;
    protocol::appendBe32(extras, 0);  // flags
    protocol::appendBe32(extras, 0);  // no expiry
    // Datatype raw even for -J: the HELLO does not negotiate JSON, and the
    // server's sub-document code parses the body whatever the datatype says.
    protocol::appendRequest(out, {Opcode::Set, p.vbucket, p.opaque, 0, 0}, writeFrames(), extras,
                            key, workload_.value(op.valueSize));
}

// Writes what each bootstrapped link has to send.
void Connection::flush() {
    for (const auto& link : links_) {
        if (link->ready && !link->out.empty()) {
            bufferevent_write(link->bev, link->out.data(), link->out.size());
            link->out.clear();
        }
    }
}

void Connection::sendBatch() {
    const auto& o = run_.options;
    const bool cyclesLeft = o.numCycles < 0 || batchesDone_ < o.numCycles;
    if (run_.stop.load(std::memory_order_relaxed) || (run_.phase == Phase::Load && !cyclesLeft)) {
        return finish();
    }
    if (batch_.size() < o.batchSize) {
        batch_.resize(o.batchSize);
    }
    const bool couchbase = o.protocol == Protocol::Couchbase;
    const auto now = Clock::now();
    std::uint32_t slot = 0;
    while (slot < o.batchSize && nextOp(batch_[slot])) {
        // The vBucket is the key's without its collection prefix (the SDKs' rule).
        const std::uint16_t vbucket =
            couchbase ? protocol::vbucketOfKey(batch_[slot].key, vbucketCount_) : 0;
        send({0, slot, vbucket, 0, nullptr, now});
        ++slot;
    }
    if (slot == 0) {
        return finish();  // population: the slice is stored
    }
    inBatch_ = true;
    flush();
    armTimeout();
}

void Connection::loadResponse(Link& link, const Response& r) {
    if (r.opaque == kConfigOpaque) {
        if (configPoll_ == &link) {
            configPoll_ = nullptr;
        }
        if (r.status == Status::Success) {
            if (auto route = routeOf(r.value); route && adoptNewer(*route)) {
                releaseHeld();
            }
        }
        return;
    }
    const auto it = std::find_if(pending_.begin(), pending_.end(),
                                 [&](const Pending& p) { return p.opaque == r.opaque; });
    if (it == pending_.end() || it->link != &link) {
        return fail("protocol error: answer to an opaque never sent");
    }
    Pending p = *it;
    *it = pending_.back();
    pending_.pop_back();
    if (retried(p, r)) {
        return batchStep();  // an op sent again to a node not connected may be counted
    }
    const auto latency = Clock::now() - p.start;
    const Op& op = batch_[p.slot];
    run_.completed.fetch_add(1, std::memory_order_relaxed);
    if (r.status == Status::Success) {
        if (run_.phase == Phase::Load) {
            (op.kind == OpKind::Set ? run_.sets : run_.gets).record(latency);
        }
    } else if (op.kind == OpKind::Get && r.status == Status::KeyNotFound) {
        run_.getMisses.fetch_add(1, std::memory_order_relaxed);
        run_.gets.record(latency);
    } else {
        run_.errors.add(errorName(op.kind, !op.specs.empty(), r));
    }
    batchStep();
}

// Sends the next batch once every op of this one is accounted for.
void Connection::batchStep() {
    if (finished_ || !inBatch_ || !pending_.empty() || !backoff_.empty()) {
        return;
    }
    inBatch_ = false;
    evtimer_del(timer_);
    ++batchesDone_;
    sendBatch();
}

// Sends `p` again if its answer `r` says so (retry.h): at once to the
// active of a newer map, else after a backoff. Returns whether it will.
bool Connection::retried(Pending& p, const Response& r) {
    if (run_.options.protocol != Protocol::Couchbase) {
        return false;  // memcached: one server, no map to follow
    }
    bool elsewhere = false;
    if (r.status == Status::NotMyVbucket) {
        if (auto route = routeOf(r.value)) {
            adoptNewer(*route);
        }
        if (finished_) {
            return true;  // a server the map named could not be reached: counted
        }
        elsewhere = &linkFor(p.vbucket) != p.link;
    }
    const Retry retry = retryOf(r.status, p.retries, elsewhere);
    if (!retry.again) {
        return false;
    }
    const Op& op = batch_[p.slot];
    run_.retries.add(errorName(op.kind, !op.specs.empty(), r));
    ++p.retries;
    if (retry.after.count() == 0) {
        send(p);
        flush();
        return true;
    }
    backoff_.push_back({p, Clock::now() + retry.after});
    armRetry();
    return true;
}

// Arms the retry timer for the earliest backoff's end.
void Connection::armRetry() {
    const auto earliest =
        std::min_element(backoff_.begin(), backoff_.end(),
                         [](const Backoff& a, const Backoff& b) { return a.due < b.due; });
    const timeval tv = timevalOf(std::chrono::duration_cast<std::chrono::microseconds>(
        std::max(earliest->due - Clock::now(), Clock::duration::zero())));
    evtimer_add(retryTimer_, &tv);
}

// Sends the ops whose backoff has ended, by the map the client has now.
void Connection::onRetry(int, short, void* self) {
    auto* c = static_cast<Connection*>(self);
    if (c->finished_) {
        return;
    }
    const auto now = Clock::now();
    std::vector<Pending> due;
    std::erase_if(c->backoff_, [&](const Backoff& b) {
        if (b.due > now) {
            return false;
        }
        due.push_back(b.op);
        return true;
    });
    for (const Pending& p : due) {
        c->send(p);
    }
    c->flush();
    if (!c->backoff_.empty()) {
        c->armRetry();
    }
    c->batchStep();  // the last of them may have run out of retries
}

void Connection::fail(const std::string& what) {
    if (finished_) {
        return;
    }
    // The batch in flight will never be answered: each op is an error.
    run_.clientsFailed.fetch_add(1, std::memory_order_relaxed);
    const std::size_t inFlight = pending_.size() + backoff_.size();
    run_.errors.add(what, std::max<std::size_t>(inFlight, 1));
    run_.completed.fetch_add(inFlight, std::memory_order_relaxed);
    pending_.clear();
    backoff_.clear();
    finish();
}

void Connection::finish() {
    if (finished_) {
        return;
    }
    finished_ = true;
    for (event* e : {timer_, retryTimer_, pollTimer_}) {
        if (e != nullptr) {
            evtimer_del(e);
        }
    }
    for (const auto& link : links_) {
        if (link->bev != nullptr) {
            bufferevent_disable(link->bev, EV_READ | EV_WRITE);
        }
        if (link->timer != nullptr) {
            evtimer_del(link->timer);
        }
    }
    const auto now = Clock::now().time_since_epoch().count();
    auto seen = run_.lastFinish.load(std::memory_order_relaxed);
    while (now > seen && !run_.lastFinish.compare_exchange_weak(seen, now)) {
    }
    run_.clientsDone.fetch_add(1, std::memory_order_release);
    onFinished_();
}

}  // namespace kvexec::pillowfight
