#include "server/mgmt/management_server.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "server/bound_port.h"
#include "server/mgmt/management_routes.h"
#include "server/tls_context.h"

namespace kvexec::server::mgmt {
namespace {

// Bounds against a client that sends too much: the SDKs' forms are a few
// hundred bytes. Larger bodies get 413 from evhttp; a connection that sends
// nothing for kIdleSeconds is closed.
constexpr ev_ssize_t kMaxBodyBytes = 64 * 1024;
constexpr ev_ssize_t kMaxHeaderBytes = 64 * 1024;
constexpr int kIdleSeconds = 60;

Method methodOf(evhttp_cmd_type command) {
    switch (command) {
        case EVHTTP_REQ_GET:
            return Method::Get;
        case EVHTTP_REQ_POST:
            return Method::Post;
        case EVHTTP_REQ_PUT:
            return Method::Put;
        case EVHTTP_REQ_DELETE:
            return Method::Delete;
        case EVHTTP_REQ_PATCH:
            return Method::Patch;
        default:
            return Method::Other;
    }
}

const char* reasonPhrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 404:
            return "Object Not Found";  // Couchbase's
        case 405:
            return "Method Not Allowed";
        case 429:
            return "Too Many Requests";
        case 503:
            return "Service Unavailable";
        default:
            return "Internal Server Error";
    }
}

// The request as management_routes.h takes it; nullopt if its path does
// not decode.
std::optional<HttpRequest> readRequest(evhttp_request* request) {
    HttpRequest parsed;
    parsed.method = methodOf(evhttp_request_get_command(request));
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(request);
    const char* path = uri != nullptr ? evhttp_uri_get_path(uri) : nullptr;
    auto segments = splitPath(path != nullptr ? path : "");
    if (!segments) {
        return std::nullopt;
    }
    parsed.path = std::move(*segments);
    evbuffer* input = evhttp_request_get_input_buffer(request);
    parsed.body.resize(evbuffer_get_length(input));
    evbuffer_copyout(input, parsed.body.data(), parsed.body.size());
    if (const char* authorization =
            evhttp_find_header(evhttp_request_get_input_headers(request), "Authorization")) {
        parsed.authorization = authorization;
    }
    return parsed;
}

}  // namespace

ManagementServer::ManagementServer(ServerContext& context) : context_(context) {
    base_ = event_base_new();
    http_ = base_ != nullptr ? evhttp_new(base_) : nullptr;
    repliesReady_ = base_ != nullptr
                        ? event_new(base_, -1, 0, &ManagementServer::onRepliesReady, this)
                        : nullptr;
    if (http_ == nullptr || repliesReady_ == nullptr) {
        if (http_ != nullptr) {
            evhttp_free(http_);
        }
        if (base_ != nullptr) {
            event_base_free(base_);
        }
        throw std::runtime_error("cannot set up the management endpoint's event loop");
    }
    configure(http_);
    if (context_.config.mgmtTlsPort && context_.tls != nullptr) {
        https_ = evhttp_new(base_);
        if (https_ == nullptr) {
            evhttp_free(http_);
            event_free(repliesReady_);
            event_base_free(base_);
            throw std::runtime_error("cannot set up the management endpoint's HTTPS");
        }
        configure(https_);
        evhttp_set_bevcb(https_, &ManagementServer::newTlsConnection, this);
    }
}

void ManagementServer::configure(evhttp* http) {
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                         EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH);
    evhttp_set_max_body_size(http, kMaxBodyBytes);
    evhttp_set_max_headers_size(http, kMaxHeaderBytes);
    evhttp_set_timeout(http, kIdleSeconds);
    evhttp_set_gencb(http, &ManagementServer::onRequest, this);
}

// evhttp sets the socket afterwards (bufferevent_setfd), which starts the
// handshake; a session that cannot be made leaves the connection plain,
// and the client's handshake then fails.
bufferevent* ManagementServer::newTlsConnection(event_base* base, void* self) {
    SSL* session = static_cast<ManagementServer*>(self)->context_.tls->newSession();
    if (session == nullptr) {
        return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    }
    return bufferevent_openssl_socket_new(base, -1, session, BUFFEREVENT_SSL_ACCEPTING,
                                          BEV_OPT_CLOSE_ON_FREE);
}

ManagementServer::~ManagementServer() {
    stop();
    if (https_ != nullptr) {
        evhttp_free(https_);
    }
    evhttp_free(http_);  // closes the connections left
    event_free(repliesReady_);
    event_base_free(base_);
}

std::uint16_t ManagementServer::bind(evhttp* http, std::uint16_t port, const char* option) {
    const std::string& host = context_.config.host;
    evhttp_bound_socket* bound = evhttp_bind_socket_with_handle(http, host.c_str(), port);
    if (bound == nullptr) {
        throw cannotListen(option, host, port);
    }
    return boundPort(evhttp_bound_socket_get_fd(bound));
}

std::uint16_t ManagementServer::start() {
    const std::uint16_t port = bind(http_, context_.config.mgmtPort.value_or(0), "--mgmt-port");
    if (https_ != nullptr) {
        context_.boundMgmtTlsPort.store(
            bind(https_, context_.config.mgmtTlsPort.value_or(0), "--mgmt-tls-port"));
    }
    context_.boundMgmtPort.store(port);
    try {
        for (std::size_t i = 0; i < kWorkers; ++i) {
            workers_.emplace_back([this] {
                pthread_setname_np(pthread_self(), "mgmt-worker");
                work();
            });
        }
        thread_ = std::thread([this] {
            pthread_setname_np(pthread_self(), "mgmt");
            event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
        });
    } catch (...) {
        stopWorkers();  // a thread that could not start: none is left joinable
        throw;
    }
    return port;
}

void ManagementServer::stopWorkers() {
    {
        detail::MutexLock lock(mutex_);
        stopping_ = true;  // the loop answers new requests 503 from now on
    }
    workQueued_.notify_all();
    for (auto& worker : workers_) {
        worker.join();  // after the queue is empty
    }
    workers_.clear();
}

void ManagementServer::stop() {
    if (!thread_.joinable()) {
        return;
    }
    stopWorkers();
    // Taken by the loop once the callback in hand (if any) returns.
    event_base_loopexit(base_, nullptr);
    thread_.join();
    sendReplies();  // those the loop did not get to; evhttp_free closes their connections
}

void ManagementServer::onRequest(evhttp_request* request, void* self) {
    static_cast<ManagementServer*>(self)->accept(request);
}

void ManagementServer::onRepliesReady(evutil_socket_t, short, void* self) {
    static_cast<ManagementServer*>(self)->sendReplies();
}

void ManagementServer::accept(evhttp_request* request) {
    auto parsed = readRequest(request);
    if (!parsed) {
        return send(request, {400, "text/plain; charset=utf-8", "Bad request path"});
    }
    bool stopping = false;
    {
        detail::MutexLock lock(mutex_);
        stopping = stopping_;
        if (!stopping && queued_.size() < kQueuedRequests) {
            queued_.push_back({request, std::move(*parsed), {}});
            workQueued_.notify_one();
            return;
        }
    }
    send(request, {503, "text/plain; charset=utf-8",
                   stopping ? "The server is stopping" : "Too many management requests at once"});
}

void ManagementServer::work() {
    for (;;) {
        Exchange exchange;
        bool stopping = false;
        {
            detail::UniqueLock lock(mutex_);
            workQueued_.wait(lock.native(), [&] {
                mutex_.assertHeld();
                return stopping_ || !queued_.empty();
            });
            if (queued_.empty()) {
                return;  // stopping, and nothing left
            }
            exchange = std::move(queued_.front());
            queued_.pop_front();
            stopping = stopping_;
        }
        if (stopping) {
            exchange.response = {503, "text/plain; charset=utf-8", "The server is stopping"};
        } else {
            try {
                exchange.response = handle(exchange.parsed, context_);
            } catch (const std::exception& error) {
                std::cerr << "kvexec-server: management request failed: " << error.what() << "\n";
                exchange.response = {500, "text/plain; charset=utf-8", "Internal error"};
            }
        }
        {
            detail::MutexLock lock(mutex_);
            ready_.push_back(std::move(exchange));
        }
        event_active(repliesReady_, EV_READ, 0);
    }
}

void ManagementServer::sendReplies() {
    std::vector<Exchange> ready;
    {
        detail::MutexLock lock(mutex_);
        ready.swap(ready_);
    }
    for (const auto& exchange : ready) {
        send(exchange.request, exchange.response);
    }
}

// A client that went away meanwhile still has its request here: evhttp
// keeps an answered-to-be request alive until this reply, then frees it.
void ManagementServer::send(evhttp_request* request, const HttpResponse& response) {
    evkeyvalq* headers = evhttp_request_get_output_headers(request);
    evhttp_add_header(headers, "Content-Type", response.contentType.c_str());
    if (response.status == 401) {
        evhttp_add_header(headers, "WWW-Authenticate", "Basic realm=\"kvexec\"");
    }
    std::unique_ptr<evbuffer, void (*)(evbuffer*)> body(evbuffer_new(), &evbuffer_free);
    if (body != nullptr) {
        evbuffer_add(body.get(), response.body.data(), response.body.size());
    }
    // evhttp adds Content-Length and keeps the connection open if asked.
    evhttp_send_reply(request, response.status, reasonPhrase(response.status), body.get());
}

}  // namespace kvexec::server::mgmt
